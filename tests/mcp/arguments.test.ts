/**
 * `tugcode mcp` argument errors (docs/run.md §5): every one, of every tool, is an `isError` result whose
 * text is the CLI's error envelope with `InvalidArgument` naming the argument; unknown arguments are
 * refused, not stripped; `tools/list` still advertises strict schemas.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeMcpClients, connectMcp } from './client.js';
import { errorEnvelope } from '../../src/contract/schemas/index.js';
import { runJson } from '../helpers/cli.js';
import { planRepo, T0 } from '../gitflow/helpers.js';
import { RawMcp } from './raw.js';

const raws: RawMcp[] = [];
afterEach(async () => {
  await closeMcpClients();
  for (const r of raws.splice(0)) await r.close();
});

function initRepo(): string {
  const root = planRepo();
  runJson('state init', ['state', 'init', 'demo'], { cwd: root, env: { TUGCODE_NOW: T0 } });
  return root;
}

/** The lease of step-1 as `state show` reports it (null: not claimed). */
function leaseOf(root: string): string | null {
  const show = runJson('state show', ['state', 'show', 'demo', '--items', 'none'], {
    cwd: root,
    env: { TUGCODE_NOW: T0 },
  }).json;
  return show.plans[0].steps.find((s: { anchor: string }) => s.anchor === 'step-1').lease_expires_at;
}

/** The result is an `isError` CLI envelope with InvalidArgument naming `argument`; returns the error. */
function invalidArgument(r: any, command: string, argument: string) {
  expect(r.isError, JSON.stringify(r)).toBe(true);
  const envelope = errorEnvelope.parse(JSON.parse(r.content[0].text));
  expect(envelope).toMatchObject({ status: 'error', command, error: { code: 'InvalidArgument' } });
  expect(envelope.error.details?.argument, envelope.error.message).toBe(argument);
  expect(envelope.error.message).toContain(argument);
  return envelope.error;
}

/** Arguments each tool accepts as far as its schema goes (the call may still fail later). */
const MINIMAL: Record<string, [string, Record<string, unknown>]> = {
  tug_state_claim: ['state claim', { plan: 'demo', worktree: '.' }],
  tug_state_start: ['state start', { plan: 'demo', step: 'step-1', worktree: '.' }],
  tug_state_heartbeat: ['state heartbeat', { plan: 'demo', step: 'step-1', worktree: '.' }],
  tug_state_update: ['state update', { plan: 'demo', step: 'step-1', worktree: '.' }],
  tug_state_artifact: ['state artifact', { plan: 'demo', step: 'step-1', worktree: '.', kind: 'note', summary: 's' }],
  tug_state_complete: ['state complete', { plan: 'demo', step: 'step-1', worktree: '.' }],
  tug_state_release: ['state release', { plan: 'demo', step: 'step-1', worktree: '.' }],
  tug_state_fail: ['state fail', { plan: 'demo', step: 'step-1', worktree: '.', reason: 'r' }],
  tug_state_show: ['state show', {}],
  tug_state_ready: ['state ready', { plan: 'demo' }],
  tug_analyze_impact: ['tug_analyze_impact', { op: 'rename-symbol --symbol src/a.ts::a --to b' }],
  tug_rename_symbol: ['tug_rename_symbol', { symbol: 'src/a.ts::a', to: 'b' }],
  tug_verify: ['tug_verify', { mode: 'syntax' }],
};

describe('tugcode mcp arguments', () => {
  it('refuses an unknown argument of every tool with the envelope, and advertises strict schemas', async () => {
    const root = initRepo();
    const client = await connectMcp(root);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(MINIMAL).sort());
    for (const t of tools) expect(t.inputSchema, t.name).toMatchObject({ type: 'object', additionalProperties: false });
    for (const [name, [command, args]] of Object.entries(MINIMAL)) {
      const r = await client.callTool({ name, arguments: { ...args, bogus_arg: 1 } });
      invalidArgument(r, command, 'bogus_arg');
    }
    // Nothing changed: a refused claim claims nothing.
    expect(leaseOf(root)).toBeNull();
  });

  it('answers an unknown tool with the envelope, naming the tools there are', async () => {
    const client = await connectMcp(initRepo());
    const error = invalidArgument(await client.callTool({ name: 'tug_nope', arguments: {} }), 'tug_nope', 'name');
    expect(error.message).toMatch(/^no tool "tug_nope"; the tools are tug_state_claim, .*tug_verify/);
  });

  it('refuses a misspelled lease instead of renewing the default lease', async () => {
    const root = initRepo();
    const client = await connectMcp(root);
    const claimed: any = await client.callTool({
      name: 'tug_state_claim',
      arguments: { plan: 'demo', worktree: '.', lease_seconds: 60 },
    });
    expect(claimed.isError, JSON.stringify(claimed)).toBeFalsy();
    const expiresAt = claimed.structuredContent.lease_expires_at;
    expect(expiresAt).toBe('2026-03-01T10:01:00.000Z');
    const r = await client.callTool({
      name: 'tug_state_heartbeat',
      arguments: { plan: 'demo', step: 'step-1', worktree: '.', lease_secs: 30 },
    });
    invalidArgument(r, 'state heartbeat', 'lease_secs');
    expect(leaseOf(root)).toBe(expiresAt);
  });

  it('gives the envelope for a missing argument, a wrong type, a bad item and a bad enum value', async () => {
    const root = initRepo();
    const client = await connectMcp(root);
    const owner = { plan: 'demo', step: 'step-1', worktree: '.' };
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['tug_state_claim', { plan: 'demo' }, 'state claim', 'worktree'],
      ['tug_state_claim', { plan: 'demo', worktree: '.', lease_seconds: '60' }, 'state claim', 'lease_seconds'],
      ['tug_state_claim', { plan: 'demo', worktree: '.', lease_seconds: 0 }, 'state claim', 'lease_seconds'],
      ['tug_state_start', { ...owner, attempt: 1.5 }, 'state start', 'attempt'],
      ['tug_state_show', { plan: null }, 'state show', 'plan'],
      ['tug_state_update', { ...owner, items: ['task 0 completed'] }, 'state update', 'items'],
      [
        'tug_state_update',
        { ...owner, items: [{ kind: 'task', ordinal: 0, status: 'done' }] },
        'state update',
        'items',
      ],
      ['tug_state_update', { ...owner, complete_remaining: 'yes' }, 'state update', 'complete_remaining'],
      // An artifact needs a summary (the input table's rule, as on the command line).
      ['tug_state_artifact', { ...owner, kind: 'note' }, 'state artifact', 'summary'],
      ['tug_analyze_impact', {}, 'tug_analyze_impact', 'op'],
      ['tug_rename_symbol', { symbol: 'src/a.ts::a' }, 'tug_rename_symbol', 'to'],
      ['tug_rename_symbol', { symbol: 'src/a.ts::a', to: 'b', apply: 'yes' }, 'tug_rename_symbol', 'apply'],
      ['tug_verify', { mode: 3 }, 'tug_verify', 'mode'],
      ['tug_verify', { mode: 'lint' }, 'tug_verify', 'mode'],
    ];
    for (const [name, args, command, argument] of cases) {
      const r = await client.callTool({ name, arguments: args });
      const error = invalidArgument(r, command, argument);
      expect(error.message, name).not.toMatch(/MCP error|ZodError|"code":/);
    }
    // The state is untouched: nothing was claimed.
    expect(leaseOf(root)).toBeNull();
  });

  it("words a kernel tool's and an item's bad enum value and too long string as the state tools do", async () => {
    const root = initRepo();
    const client = await connectMcp(root);
    const owner = { plan: 'demo', step: 'step-1', worktree: '.' };
    const cases: [string, Record<string, unknown>, string, string, string][] = [
      [
        'tug_verify',
        { mode: 'lint' },
        'tug_verify',
        'mode',
        'mode must be one of syntax, tests, typecheck, got "lint"',
      ],
      [
        'tug_rename_symbol',
        { symbol: 'src/a.ts::a', to: 'b', verify: 'all' },
        'tug_rename_symbol',
        'verify',
        'verify must be one of none, syntax, tests, typecheck, got "all"',
      ],
      [
        'tug_rename_symbol',
        { symbol: 'src/a.ts::a', to: 'b'.repeat(1025) },
        'tug_rename_symbol',
        'to',
        'to is longer than 1024 characters',
      ],
      ['tug_analyze_impact', { op: 'x'.repeat(4097) }, 'tug_analyze_impact', 'op', 'op is longer than 4096 characters'],
      [
        'tug_state_update',
        { ...owner, items: [{ kind: 'todo', ordinal: 0, status: 'completed' }] },
        'state update',
        'items',
        'items[0].kind must be one of task, test, checkpoint, got "todo"',
      ],
      [
        'tug_state_update',
        { ...owner, items: [{ kind: 'task', ordinal: -1, status: 'completed' }] },
        'state update',
        'items',
        'items[0].ordinal must be at least 0, got -1',
      ],
    ];
    for (const [name, args, command, argument, message] of cases) {
      const error = invalidArgument(await client.callTool({ name, arguments: args }), command, argument);
      expect(error.message, name).toBe(message);
    }
    expect(leaseOf(root)).toBeNull();
  });

  it('answers arguments that are null, an array or a string with the envelope of every tool', async () => {
    const root = initRepo();
    const raw = new RawMcp(root);
    raws.push(raw);
    await raw.initialize();
    let id = 0;
    for (const [name, [command]] of Object.entries(MINIMAL)) {
      for (const args of [null, [1], 'plan=demo']) {
        raw.call(++id, name, args);
        const m = await raw.reply(id);
        expect(m.error, JSON.stringify(m)).toBeUndefined();
        invalidArgument(m.result, command, 'arguments');
      }
    }
    // No arguments at all is an empty object, as before.
    raw.call(++id, 'tug_state_show', undefined);
    expect((await raw.reply(id)).result.isError).toBeFalsy();
    // No tool name: a JSON-RPC invalid-params error (there is no tool to answer for).
    raw.send({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { arguments: {} } });
    expect((await raw.reply(id)).error).toMatchObject({ code: -32602 });
    expect(await raw.close()).toBe(0);
  });
});
