/**
 * `tugcode mcp` with the SDK's own client (docs/run.md §5): the tools, claim → start → update → complete
 * giving the CLI's JSON, errors as `isError` results carrying the CLI's envelope, and a kernel rename
 * applied and verified through MCP.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeMcpClients, connectMcp } from './client.js';
import { MCP_TOOLS } from '../../src/contract/mcp-tools.js';
import { runJson } from '../helpers/cli.js';
import { git, tempDir, writeFiles } from '../helpers/repo.js';
import { planRepo, T0 } from '../gitflow/helpers.js';

afterEach(async () => {
  await closeMcpClients();
});

const textOf = (r: any) => JSON.parse(r.content[0].text);

describe('tugcode mcp', () => {
  it('lists the state and kernel tools with input and output schemas and truthful annotations', async () => {
    const root = planRepo();
    const client = await connectMcp(root);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual(
      [
        'tug_analyze_impact',
        'tug_rename_symbol',
        'tug_state_artifact',
        'tug_state_claim',
        'tug_state_complete',
        'tug_state_fail',
        'tug_state_heartbeat',
        'tug_state_ready',
        'tug_state_release',
        'tug_state_show',
        'tug_state_start',
        'tug_state_update',
        'tug_verify',
      ].sort(),
    );
    // The contract's list (docs/AGENT_API.md) is what the server registers.
    expect(MCP_TOOLS.map((t) => t.tool).sort()).toEqual(names);
    const claim = tools.find((t) => t.name === 'tug_state_claim')!;
    expect(Object.keys(claim.inputSchema.properties ?? {}).sort()).toEqual([
      'lease_seconds',
      'plan',
      'step',
      'worktree',
    ]);
    expect(claim.inputSchema.required).toEqual(expect.arrayContaining(['plan', 'worktree']));
    expect(claim.outputSchema).toBeDefined();
    expect(tools.find((t) => t.name === 'tug_state_show')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.find((t) => t.name === 'tug_state_release')!.annotations).toMatchObject({ destructiveHint: true });
  });

  it('gives the CLI JSON for claim → start → update → complete, and errors as isError envelopes', async () => {
    const viaCli = planRepo();
    const viaMcp = planRepo();
    const env = { TUGCODE_NOW: T0 };
    const cli = (args: string[]) => runJson(`state ${args[0]}`, ['state', ...args], { cwd: viaCli, env }).json;
    cli(['init', 'demo']);
    runJson('state init', ['state', 'init', 'demo'], { cwd: viaMcp, env });
    const fromCli = [
      cli(['claim', 'demo', '--worktree', '.']),
      cli(['start', 'demo', 'step-1', '--worktree', '.', '--attempt', '1']),
      cli(['update', 'demo', 'step-1', '--worktree', '.', '--task', '0', 'completed']),
      cli(['complete', 'demo', 'step-1', '--worktree', '.', '--attempt', '1']),
    ];
    const client = await connectMcp(viaMcp);
    const owner = { plan: 'demo', step: 'step-1', worktree: '.', attempt: 1 };
    const calls: [string, Record<string, unknown>][] = [
      ['tug_state_claim', { plan: 'demo', worktree: '.' }],
      ['tug_state_start', owner],
      ['tug_state_update', { ...owner, items: [{ kind: 'task', ordinal: 0, status: 'completed' }] }],
      ['tug_state_complete', owner],
    ];
    const fromMcp = [];
    for (const [name, args] of calls) {
      const r: any = await client.callTool({ name, arguments: args });
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      expect(r.structuredContent).toEqual(textOf(r));
      fromMcp.push(r.structuredContent);
    }
    const norm = (docs: unknown[], root: string) => JSON.parse(JSON.stringify(docs).split(root).join('<ROOT>'));
    expect(norm(fromMcp, viaMcp)).toEqual(norm(fromCli, viaCli));

    // Not the owner (the claim is gone after completion): an isError result with the CLI's envelope.
    const bad: any = await client.callTool({ name: 'tug_state_heartbeat', arguments: { ...owner, step: 'step-2' } });
    expect(bad.isError).toBe(true);
    const envelope = textOf(bad);
    const viaCliErr = runJson(
      'state heartbeat',
      ['state', 'heartbeat', 'demo', 'step-2', '--worktree', '.', '--attempt', '1'],
      {
        cwd: viaCli,
        env,
      },
    ).json;
    expect(envelope).toMatchObject({
      status: 'error',
      command: 'state heartbeat',
      error: { code: viaCliErr.error.code },
    });
    // A bad argument is refused with the field's name, never a crash.
    const wrong: any = await client.callTool({
      name: 'tug_state_claim',
      arguments: { plan: 'demo', worktree: '.', lease_seconds: 0 },
    });
    expect(wrong.isError).toBe(true);
  });

  it('renames a TypeScript symbol through the warm kernel: analyze, dry run, apply with verification', async () => {
    const root = planRepo();
    writeFiles(root, {
      'tsconfig.json': '{ "compilerOptions": { "strict": true, "module": "nodenext", "target": "es2022" } }\n',
      'src/a.ts': 'export function oldName(x: number): number {\n  return x + 1;\n}\n',
      'src/b.ts': "import { oldName } from './a.js';\nexport const y = oldName(1);\n",
    });
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'code');
    const client = await connectMcp(root);
    const analyzed: any = await client.callTool({
      name: 'tug_analyze_impact',
      arguments: { op: 'rename-symbol --symbol src/a.ts::oldName --to newName' },
    });
    expect(analyzed.isError, JSON.stringify(analyzed)).toBeFalsy();
    expect(analyzed.structuredContent.status).toBe('ok');
    // The kernel's global flags cannot be smuggled in through `op` (a read-only tool stays read-only).
    const smuggled: any = await client.callTool({
      name: 'tug_analyze_impact',
      arguments: { op: 'rename-symbol --symbol src/a.ts::oldName --to newName --session-dir /tmp/elsewhere' },
    });
    expect(smuggled.isError).toBe(true);
    expect(textOf(smuggled).error.code).toBe('InvalidArgument');
    // An unrelated file added after the analysis does not block the rename (docs/kernel.md §10.2), unless
    // the caller binds the run to that analysis with its snapshot_id.
    writeFileSync(join(root, 'src/extra.ts'), 'export const extra = 1;\n');
    const bound: any = await client.callTool({
      name: 'tug_rename_symbol',
      arguments: {
        symbol: 'src/a.ts::oldName',
        to: 'newName',
        apply: true,
        snapshot_id: analyzed.structuredContent.snapshot_id,
      },
    });
    expect(textOf(bound).error.code, JSON.stringify(bound)).toBe('SnapshotMismatch');
    expect(readFileSync(join(root, 'src/b.ts'), 'utf8')).toContain('oldName(1)');
    const applied: any = await client.callTool({
      name: 'tug_rename_symbol',
      arguments: { symbol: 'src/a.ts::oldName', to: 'newName', apply: true, verify: 'syntax' },
    });
    expect(applied.isError, JSON.stringify(applied)).toBeFalsy();
    expect(applied.structuredContent).toMatchObject({ status: 'ok', applied: true });
    expect(readFileSync(join(root, 'src/b.ts'), 'utf8')).toContain('newName(1)');
    // The warm kernel holds no lock between calls: the CLI can work on the same workspace meanwhile.
    const again: any = await client.callTool({
      name: 'tug_rename_symbol',
      arguments: { symbol: 'src/a.ts::missingName', to: 'x' },
    });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatchObject({ status: 'error' });
    // A workspace is this repository or one of its worktrees: an agent cannot point the kernel elsewhere.
    const other = planRepo();
    writeFiles(other, { 'src/a.ts': 'export function oldName(): void {}\n' });
    const outside: any = await client.callTool({
      name: 'tug_rename_symbol',
      arguments: { symbol: 'src/a.ts::oldName', to: 'newName', apply: true, workspace: other },
    });
    expect(textOf(outside).error).toMatchObject({ code: 'InvalidArgument', details: { argument: 'workspace' } });
    expect(textOf(outside).error.message).toContain('is outside this repository');
    expect(readFileSync(join(other, 'src/a.ts'), 'utf8')).toContain('oldName');
    const wt = join(tempDir(), 'wt');
    git(root, 'worktree', 'add', '-q', wt);
    const inWorktree: any = await client.callTool({
      name: 'tug_rename_symbol',
      arguments: { symbol: 'src/a.ts::oldName', to: 'third', apply: true, workspace: wt },
    });
    expect(inWorktree.isError, JSON.stringify(inWorktree)).toBeFalsy();
    expect(readFileSync(join(wt, 'src/b.ts'), 'utf8')).toContain('third(1)');
  });
});
