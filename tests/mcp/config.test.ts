/**
 * `tugcode mcp` lives as long as the agent's session: an edit of .tugtool/config.toml made meanwhile (a
 * shorter lease, the state moved to PostgreSQL, a typo) applies to its next call, as it does to the next
 * CLI call. A server that kept the configuration it started with would claim with another lease than the
 * CLI, or go on writing state.db while every CLI call uses PostgreSQL.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeMcpClients, connectMcp } from './client.js';
import { ROOT, runJson } from '../helpers/cli.js';
import { planRepo, T0 } from '../gitflow/helpers.js';

afterEach(async () => {
  await closeMcpClients();
});

const textOf = (r: any) => JSON.parse(r.content[0].text);
const minutesAfterT0 = (iso: string) => (Date.parse(iso) - Date.parse(T0)) / 60_000;

describe('tugcode mcp and a config.toml edited under it', () => {
  it('reads the configuration again when config.toml changed, as the next CLI call does', async () => {
    const root = planRepo();
    const env = { TUGCODE_NOW: T0 };
    runJson('state init', ['state', 'init', 'demo'], { cwd: root, env });
    const client = await connectMcp(root);
    const call = async (name: string, args: Record<string, unknown>) => {
      const r: any = await client.callTool({ name, arguments: args });
      return textOf(r);
    };
    const first = await call('tug_state_claim', { plan: 'demo', worktree: '.' });
    expect(minutesAfterT0(first.lease_expires_at)).toBe(120);
    await call('tug_state_release', { plan: 'demo', step: 'step-1', worktree: '.' });

    const file = join(root, '.tugtool', 'config.toml');
    const original = readFileSync(file, 'utf8');
    writeFileSync(file, original.replace(/^# lease_seconds = 7200 .*$/m, 'lease_seconds = 600'));
    // The edit is a valid config: the CLI claims for 10 minutes.
    const cli = runJson('state claim', ['state', 'claim', 'demo', '--worktree', '.'], { cwd: root, env }).json;
    expect(cli.error, JSON.stringify(cli)).toBeUndefined();
    expect(minutesAfterT0(cli.lease_expires_at)).toBe(10);
    runJson('state release', ['state', 'release', 'demo', 'step-1', '--worktree', '.'], { cwd: root, env });
    const second = await call('tug_state_claim', { plan: 'demo', worktree: '.' });
    expect(minutesAfterT0(second.lease_expires_at), JSON.stringify(second)).toBe(10);
    await call('tug_state_release', { plan: 'demo', step: 'step-1', worktree: '.' });

    // The state moved to a PostgreSQL server (one that is not there): the server follows, as the CLI does.
    writeFileSync(file, original.replace(/^# url = .*$/m, 'url = "postgres://tug@127.0.0.1:1/tug"'));
    const cliPg = runJson('state ready', ['state', 'ready', 'demo'], { cwd: root, env }).json;
    expect(cliPg.error?.code).toBe('DatabaseUnavailable');
    const ready = await call('tug_state_ready', { plan: 'demo' });
    expect(ready.error?.code, JSON.stringify(ready)).toBe(cliPg.error.code);

    // Back to the file it started with: served from state.db again.
    writeFileSync(file, original);
    const back = await call('tug_state_ready', { plan: 'demo' });
    expect(back).toMatchObject({ status: 'ok', ready_steps: ['step-1'] });
  });

  it('a bad value outside [kernel] stops the state tools, not the kernel tools, as it stops tugcode but not tug', async () => {
    const root = planRepo();
    const file = join(root, '.tugtool', 'config.toml');
    writeFileSync(file, '[state]\nlease_seconds = "two hours"\n');
    const tug = spawnSync(process.execPath, [join(ROOT, 'bin', 'tug.js'), 'verify', 'syntax'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(tug.status, tug.stdout + tug.stderr).toBe(0);
    const client = await connectMcp(root);
    const state = textOf(await client.callTool({ name: 'tug_state_ready', arguments: { plan: 'demo' } }));
    expect(state.error?.code, JSON.stringify(state)).toBe('ConfigInvalid');
    const verify: any = await client.callTool({ name: 'tug_verify', arguments: { mode: 'syntax' } });
    expect(verify.isError, JSON.stringify(verify)).toBeFalsy();
    expect(verify.structuredContent).toMatchObject({ status: 'ok', passed: true });
    // Confined still: a workspace outside the repository is refused.
    const outside = textOf(
      await client.callTool({ name: 'tug_verify', arguments: { mode: 'syntax', workspace: '/' } }),
    );
    expect(outside.error).toMatchObject({ code: 'InvalidArgument', details: { argument: 'workspace' } });
  });
});
