/**
 * `tugcode mcp` is long-lived: state.db can be moved aside, deleted or replaced under it (docs/state.md's
 * recovery: move it aside, `state init`, `state reconcile`). Each call must then see the file that is at
 * the path now, as the CLI does, never keep reading and writing the unlinked one (a claim "succeeding" in a
 * file nobody else can see).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeMcpClients, connectMcp } from './client.js';
import { runJson } from '../helpers/cli.js';
import { planRepo, T0 } from '../gitflow/helpers.js';

afterEach(async () => {
  await closeMcpClients();
});

const textOf = (r: any) => JSON.parse(r.content[0].text);

describe('tugcode mcp and a state.db replaced under it', () => {
  it('answers as the CLI does after state.db is moved aside, re-created or corrupted', async () => {
    const root = planRepo();
    const env = { TUGCODE_NOW: T0 };
    runJson('state init', ['state', 'init', 'demo'], { cwd: root, env });
    const client = await connectMcp(root);
    const call = async (name: string, args: Record<string, unknown>) => {
      const r: any = await client.callTool({ name, arguments: args });
      return { isError: Boolean(r.isError), doc: textOf(r) };
    };
    expect((await call('tug_state_ready', { plan: 'demo' })).doc.ready_steps).toEqual(['step-1']);

    const db = join(root, '.tugtool', 'state.db');
    for (const f of ['', '-wal', '-shm']) renameSync(db + f, join(root, `moved${f}`));
    const cliShow = runJson('state show', ['state', 'show', 'demo'], { cwd: root, env }).json;
    expect(cliShow.error.code).toBe('PlanNotInitialized');
    const show = await call('tug_state_show', { plan: 'demo' });
    expect(show.isError, JSON.stringify(show.doc)).toBe(true);
    expect(show.doc.error.code).toBe(cliShow.error.code);
    const claim = await call('tug_state_claim', { plan: 'demo', worktree: '.' });
    expect(claim.doc.error?.code, JSON.stringify(claim.doc)).toBe('PlanNotInitialized');

    // The recovery: a new state.db from the CLI; the server serves it, and its claims are the CLI's.
    runJson('state init', ['state', 'init', 'demo'], { cwd: root, env });
    const claimed = await call('tug_state_claim', { plan: 'demo', worktree: '.' });
    expect(claimed.doc).toMatchObject({ status: 'ok', claimed: true, step_anchor: 'step-1' });
    const ready = runJson('state ready', ['state', 'ready', 'demo'], { cwd: root, env }).json;
    expect(ready.claimed_steps).toEqual(['step-1']);

    // A corrupt file put in its place: DatabaseError, as the CLI says.
    for (const f of ['', '-wal', '-shm']) renameSync(db + f, join(root, `moved2${f}`));
    writeFileSync(db, 'not a database '.repeat(500));
    const cliBad = runJson('state show', ['state', 'show', 'demo'], { cwd: root, env }).json;
    expect(cliBad.error.code).toBe('DatabaseError');
    const bad = await call('tug_state_show', { plan: 'demo' });
    expect(bad.doc.error?.code, JSON.stringify(bad.doc)).toBe('DatabaseError');
    const hb = await call('tug_state_heartbeat', { plan: 'demo', step: 'step-1', worktree: '.' });
    expect(hb.doc.error?.code, JSON.stringify(hb.doc)).toBe('DatabaseError');
  });
});
