/**
 * `tugcode mcp` on stdio, line by line (docs/run.md §5, docs/output.md §1): requests up to the largest one
 * the schemas accept are served, a longer line stops the server with one InvalidArgument stderr line and
 * exit 2, lines that are no JSON-RPC message get a JSON-RPC error, and calls under way when stdin closes
 * are still answered.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runJson } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { planRepo, T0 } from '../gitflow/helpers.js';
import { RawMcp } from './raw.js';

const raws: RawMcp[] = [];
afterEach(async () => {
  for (const r of raws.splice(0)) {
    r.child.stdin!.end();
    await r.exited;
  }
});

async function serve(): Promise<RawMcp> {
  const root = planRepo();
  runJson('state init', ['state', 'init', 'demo'], { cwd: root, env: { TUGCODE_NOW: T0 } });
  const raw = new RawMcp(root);
  raws.push(raw);
  await raw.initialize();
  return raw;
}

const MAX_CONTENT = 4 * 1024 * 1024;
const artifact = { plan: 'demo', step: 'step-1', worktree: '.', kind: 'note' };
/** Only the serving line: no error was logged. */
const SERVING = /^tugcode mcp: serving .* on stdio\n$/;

describe('tugcode mcp over stdio', () => {
  it('serves an artifact as large as its schema allows, raw UTF-8 (12.6 MB) or all \\u escapes (48 MiB)', async () => {
    const raw = await serve();
    raw.call(0, 'tug_state_claim', { plan: 'demo', worktree: '.' });
    expect((await raw.reply(0)).result.structuredContent).toMatchObject({ claimed: true });
    // 4,194,304 CJK characters: 12.6 MB of UTF-8, over the SDK's default 10 MiB line buffer.
    raw.call(1, 'tug_state_artifact', { ...artifact, summary: 's', content: '中'.repeat(MAX_CONTENT) });
    const first = await raw.reply(1, 60_000);
    expect(first.result.isError, JSON.stringify(first).slice(0, 500)).toBeFalsy();
    expect(first.result.structuredContent).toMatchObject({ recorded: true, truncated: true });
    // The worst case: summary and content at their maxLength, every character written as \uXXXX.
    const escaped = `"${'\\u4e2d'.repeat(MAX_CONTENT)}"`;
    const line =
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tug_state_artifact","arguments":' +
      `{"plan":"demo","step":"step-1","worktree":".","kind":"note","summary":${escaped},"content":${escaped}}}}`;
    expect(line.length).toBeGreaterThan(48 * 1024 * 1024);
    raw.send(line);
    const second = await raw.reply(2, 120_000);
    expect(second.result.isError, JSON.stringify(second).slice(0, 500)).toBeFalsy();
    expect(second.result.structuredContent).toMatchObject({ recorded: true, truncated: true });
    // Still serving.
    raw.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    expect((await raw.reply(3)).result.tools).toHaveLength(13);
    expect(await raw.close()).toBe(0);
    expect(raw.stderr).toMatch(SERVING);
  });

  it('says at start-up when its state tools cannot serve (started outside a git repository), and serves on', async () => {
    const raw = new RawMcp(tempDir('tugcode-nogit-'));
    raws.push(raw);
    await raw.initialize();
    raw.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect((await raw.reply(1)).result.tools).toHaveLength(13);
    expect(await raw.close()).toBe(0);
    const lines = raw.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^tugcode mcp: serving .* on stdio$/);
    expect(lines[1]).toMatch(
      /^tugcode mcp: warning: the state tools will refuse every call here \(NotAGitRepository: /,
    );
    expect(lines).toHaveLength(2);
  });

  it('stops with InvalidArgument, exit 2 and one stderr line, on a line longer than 64 MiB', async () => {
    const raw = await serve();
    const huge = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'tug_state_show', arguments: { plan: 'x'.repeat(65 * 1024 * 1024) } },
    });
    raw.send(huge);
    raw.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    raw.child.stdin!.end();
    expect(await raw.exited).toBe(2);
    const lines = raw.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2); // the serving log line, then the error
    expect(lines[1]).toMatch(/^tugcode: InvalidArgument: .*67108864 bytes \(64 MiB\)/);
    expect(raw.messages.map((m) => m.id)).toEqual(['init']);
  });

  it('answers a line that is not JSON with -32700 and JSON that is no JSON-RPC message with -32600, and serves on', async () => {
    const raw = await serve();
    raw.send('hello garbage');
    raw.send('{"jsonrpc":"2.0","id":40,');
    raw.send(Buffer.from([0xff, 0xfe, 0x80]));
    raw.send('[1,2]');
    raw.send('');
    raw.send({ jsonrpc: '2.0', id: 50, method: 'tools/list' });
    await raw.reply(50);
    const errors = raw.messages.filter((m) => m.id === null);
    expect(errors.map((m) => [m.jsonrpc, m.error.code])).toEqual([
      ['2.0', -32700],
      ['2.0', -32700],
      ['2.0', -32700],
      ['2.0', -32600],
    ]);
    for (const m of errors) expect(m.error.message).toMatch(/^(Parse error|Invalid Request)/);
    expect(await raw.close()).toBe(0);
    expect(raw.stderr).toMatch(SERVING);
  });

  it('answers an invalid request that has an id with that id: jsonrpc 1.0, no jsonrpc, params an array', async () => {
    const raw = await serve();
    raw.send({ jsonrpc: '1.0', id: 41, method: 'tools/list' });
    raw.send({ id: 'no-version', method: 'tools/list' });
    raw.send({ jsonrpc: '2.0', id: 43, method: 'tools/call', params: ['tug_state_show', { plan: 'demo' }] });
    raw.send({ jsonrpc: '2.0', id: 'p', method: 'tools/list', params: 7 });
    raw.send({ jsonrpc: '1.0', id: { not: 'an id' }, method: 'tools/list' });
    raw.send({ jsonrpc: '2.0', id: 50, method: 'tools/list' });
    await raw.reply(50);
    const answer = async (id: string | number) => (await raw.reply(id)).error;
    expect(await answer(41)).toEqual({ code: -32600, message: 'Invalid Request: "jsonrpc" must be "2.0", got "1.0"' });
    expect(await answer('no-version')).toEqual({
      code: -32600,
      message: 'Invalid Request: "jsonrpc" must be "2.0", got nothing',
    });
    expect(await answer(43)).toEqual({
      code: -32600,
      message: 'Invalid Request: "params" must be an object of named arguments',
    });
    expect((await answer('p')).code).toBe(-32600);
    // An id that is no string or number cannot be echoed: id null, as JSON-RPC 2.0 §5 says.
    expect(raw.messages.filter((m) => m.id === null).map((m) => m.error.code)).toEqual([-32600]);
    expect(await raw.close()).toBe(0);
    expect(raw.stderr).toMatch(SERVING);
  });

  it("serves writes and reads sent at once, in either order, on one connection (none closes the other's)", async () => {
    const root = planRepo();
    runJson('state init', ['state', 'init', 'demo'], { cwd: root, env: { TUGCODE_NOW: T0 } });
    runJson('state claim', ['state', 'claim', 'demo'], { cwd: root, env: { TUGCODE_NOW: T0 } });
    // A fresh server: its first call opens state.db to read, the next one upgrades it to write.
    const fresh = new RawMcp(root);
    raws.push(fresh);
    await fresh.initialize();
    const update = {
      plan: 'demo',
      step: 'step-1',
      worktree: '.',
      items: [{ kind: 'task', ordinal: 0, status: 'in_progress' }],
    };
    fresh.call(1, 'tug_state_ready', { plan: 'demo' });
    fresh.call(2, 'tug_state_update', update);
    fresh.call(3, 'tug_state_show', { plan: 'demo' });
    fresh.call(4, 'tug_state_update', { ...update, items: [{ kind: 'task', ordinal: 99, status: 'completed' }] });
    fresh.call(5, 'tug_state_ready', { plan: 'demo' });
    const codes: string[] = [];
    for (const id of [1, 2, 3, 4, 5])
      codes.push(JSON.parse((await fresh.reply(id)).result.content[0].text).error?.code ?? 'ok');
    expect(codes).toEqual(['ok', 'ok', 'ok', 'InvalidArgument', 'ok']);
  });

  it('answers the calls still under way when the client closes stdin', async () => {
    const raw = await serve();
    for (let id = 1; id <= 5; id++) raw.call(id, 'tug_state_show', { plan: 'demo', items: 'all' });
    raw.call(6, 'tug_state_claim', { plan: 'demo', worktree: '.' });
    expect(await raw.close()).toBe(0);
    const answers = raw.messages.filter((m) => typeof m.id === 'number').sort((a, b) => a.id - b.id);
    expect(answers.map((m) => [m.id, m.result?.isError ?? false])).toEqual([1, 2, 3, 4, 5, 6].map((id) => [id, false]));
    expect(answers[5].result.structuredContent).toMatchObject({ claimed: true, step_anchor: 'step-1' });
  });
});
