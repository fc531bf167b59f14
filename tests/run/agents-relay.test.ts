/**
 * The state relay (docs/agents.md §1.5): under `tugcode run`, an agent's `tugcode state update|artifact|
 * heartbeat` goes to the driver through `TUG_STATE_RELAY`, which runs it for the step's own plan, step,
 * worktree and attempt only. Here the relay is served in the test process and the built CLI is the client.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { relayArgv, relayed, serveRelay } from '../../src/run/state-relay.js';
import { tempDir } from '../helpers/repo.js';
import { runJsonl, runRepo, planText, step, stepCommits, tugJson } from './helpers.js';

const pin = { plan: '.tugtool/tugplan-demo.md', step: 'step-1', worktree: '/r/.tugtree/w1', attempt: 2 };
const owner = ['.tugtool/tugplan-demo.md', 'step-1', '--worktree', '/r/.tugtree/w1', '--attempt', '2'];

describe('relayArgv: only the owner commands of the pinned step', () => {
  it('passes update, artifact and heartbeat with the literal owner arguments', () => {
    for (const sub of ['update', 'artifact', 'heartbeat'])
      expect(relayArgv(['state', sub, ...owner, '--task', '0', 'completed'], '/r/.tugtree/w1', pin)).toEqual({
        argv: [
          'state',
          sub,
          ...owner.slice(0, 2),
          '--task',
          '0',
          'completed',
          '--worktree',
          '/r/.tugtree/w1',
          '--attempt',
          '2',
        ],
      });
    // A relative plan or worktree that names the same files passes; --json stays.
    expect(
      relayArgv(
        ['--json', 'state', 'heartbeat', 'tugplan-demo.md', 'step-1', '--worktree=..', '--attempt=2'],
        '/r/.tugtree/w1/.tugtool',
        pin,
      ),
    ).toEqual({ argv: ['--json', 'state', 'heartbeat', ...owner] });
  });

  it.each([
    [['state', 'complete', ...owner, '--force'], /state complete.*not the agent's/],
    [['state', 'fail', ...owner, '--reason', 'x'], /state fail.*not the agent's/],
    [['state', 'update', '.tugtool/tugplan-other.md', ...owner.slice(1)], /plan must be/],
    [['state', 'update', owner[0]!, 'step-2', ...owner.slice(2)], /step must be/],
    [['state', 'update', ...owner.slice(0, 2), '--worktree', '/r/.tugtree/w2', '--attempt', '2'], /--worktree must be/],
    [['state', 'update', ...owner.slice(0, 2), '--worktree', '/r/.tugtree/w1', '--attempt', '1'], /--attempt must be/],
    [['state', 'update', ...owner.slice(0, 2)], /give --worktree/],
    [['state', 'update', ...owner, '-C', '/elsewhere'], /-C is not allowed/],
    [['-C', '/elsewhere', 'state', 'update', ...owner], /-C\/--dir is not allowed/],
  ])('refuses %j', (argv, why) => {
    const r = relayArgv(argv, '/r/.tugtree/w1', pin);
    expect('refused' in r && r.refused).toMatch(why);
  });

  it('relays state commands that write; reads run directly', () => {
    expect(relayed(['state', 'update', 'x'])).toBe(true);
    expect(relayed(['--json', 'state', 'complete', 'x'])).toBe(true);
    expect(relayed(['-C', '/x', 'state', 'update', 'x'])).toBe(true);
    expect(relayed(['state', 'show'])).toBe(false);
    expect(relayed(['status'])).toBe(false);
  });
});

function cli(
  cwd: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const c = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', ...env } });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('close', (code) => done({ code, stdout, stderr }));
  });
}

describe('the CLI through the relay', () => {
  it("runs the pinned step's update and refuses state complete, which changes nothing", async () => {
    const root = runRepo(planText([step(1, 'Base')]));
    // A worktree holding step-1's claim, started, as a worker's would.
    const wt = tugJson(root, ['worktree', 'create', 'demo']);
    expect(wt.code, wt.stderr).toBe(0);
    const W: string = wt.json.worktree_path;
    const claim = tugJson(W, ['state', 'claim', '.tugtool/tugplan-demo.md', '--worktree', W]);
    expect(claim.json, claim.stderr).toMatchObject({ claimed: true, step_anchor: 'step-1', attempt: 1 });
    const start = tugJson(W, [
      'state',
      'start',
      '.tugtool/tugplan-demo.md',
      'step-1',
      '--worktree',
      W,
      '--attempt',
      '1',
    ]);
    expect(start.code, start.stderr).toBe(0);
    const dir = join(W, '.tug', 'relay');
    mkdirSync(dir, { recursive: true });
    const relay = await serveRelay(
      dir,
      { plan: '.tugtool/tugplan-demo.md', step: 'step-1', worktree: W, attempt: 1 },
      {
        ...(process.env as Record<string, string>),
        NO_COLOR: '1',
      },
    );
    try {
      const env = { TUG_STATE_RELAY: dir };
      const own = ['.tugtool/tugplan-demo.md', 'step-1', '--worktree', W, '--attempt', '1'];
      const ok = await cli(W, ['state', 'update', ...own, '--task', '0', 'completed', '--json'], env);
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({ status: 'ok', command: 'state update' });
      const done = await cli(W, ['state', 'complete', ...own, '--force', '--json'], env);
      expect(done.code).toBe(4);
      expect(done.stderr).toMatch(/refused under tugcode run.*state complete/);
      // A file the relay reads for the agent is one inside its worktree, by its real path (docs/agents.md §1.5).
      const secret = join(tempDir('tugcode-secret-'), 'secret.txt');
      writeFileSync(secret, 'TOPSECRET\n');
      symlinkSync(secret, join(W, 'link.txt'));
      writeFileSync(join(W, 'note.txt'), 'a note from the worktree\n');
      for (const [flag, file] of [
        ['--summary-file', secret],
        ['--content-file', secret],
        ['--summary-file', 'link.txt'],
        ['--content-file=../../' + secret.split('/').slice(-2).join('/')],
      ] as const) {
        const args = file === undefined ? [flag] : [flag, file];
        const note = await cli(W, ['state', 'artifact', ...own, '--kind', 'note', '--summary', 'x', ...args], env);
        expect(note.code, note.stderr).toBe(4);
        expect(note.stderr).toMatch(
          /refused under tugcode run.*--(summary|content)-file must name a file inside the worktree/,
        );
      }
      const inside = await cli(
        join(W, '.tugtool'),
        [
          'state',
          'artifact',
          ...own,
          '--kind',
          'note',
          '--summary-file',
          '../note.txt',
          '--content-file',
          '../note.txt',
        ],
        env,
      );
      expect(inside.code, inside.stderr).toBe(0);
    } finally {
      await relay.close();
    }
    const show = tugJson(root, ['state', 'show', '.tugtool/tugplan-demo.md', '--items', 'all']);
    const s1 = show.json.plans[0].steps[0];
    expect(s1.status).toBe('in_progress');
    expect(s1.items[0]).toMatchObject({ kind: 'task', ordinal: 0, status: 'completed' });
    const db = new Database(join(root, '.tugtool', 'state.db'), { readonly: true });
    const notes = db.prepare("SELECT summary, content FROM step_artifacts WHERE kind = 'note'").all();
    db.close();
    expect(notes).toEqual([{ summary: 'a note from the worktree\n', content: 'a note from the worktree\n' }]);
  });
});

/**
 * A fake `codex` that sends one relayed heartbeat as `a.req`, waits until the driver has taken it (`a.work`),
 * then swaps `.tug/relay` for a link to `$FAKE_OUT` while the driver runs the command; it records the reply
 * the driver left in the directory it took the request from.
 */
const SWAPPER = `#!/usr/bin/env node
const fs = require('node:fs');
const path = require('node:path');
const env = process.env;
const relay = env.TUG_STATE_RELAY;
const owner = [env.TUG_PLAN, env.TUG_STEP, '--worktree', env.TUG_WORKTREE, '--attempt', env.TUG_ATTEMPT];
fs.writeFileSync(path.join(relay, 'a.req.tmp'), JSON.stringify({ argv: ['state', 'heartbeat', ...owner], cwd: process.cwd() }));
fs.renameSync(path.join(relay, 'a.req.tmp'), path.join(relay, 'a.req'));
const pause = new Int32Array(new SharedArrayBuffer(4));
const until = (ok) => { for (const end = Date.now() + 20000; !ok() && Date.now() < end; ) Atomics.wait(pause, 0, 0, 1); };
until(() => fs.existsSync(path.join(relay, 'a.work')));
fs.renameSync(relay, relay + '-old');
fs.symlinkSync(env.FAKE_OUT, relay);
// Done when the reply lands in the taken directory, or (the bug) the driver removed the outside a.work.
until(() => fs.existsSync(relay + '-old/a.res') || !fs.existsSync(path.join(env.FAKE_OUT, 'a.work')));
let reply = null;
try { reply = JSON.parse(fs.readFileSync(relay + '-old/a.res', 'utf8')); } catch {}
fs.writeFileSync(path.join(env.FAKE_REC, 'reply.json'), JSON.stringify(reply));
fs.writeFileSync(env.TUG_STEP + '.txt', 'done\\n');
const argv = process.argv.slice(2);
fs.writeFileSync(argv[argv.indexOf('--output-last-message') + 1], 'Implemented ' + env.TUG_STEP);
`;

describe('the relay directory swapped for a link while a request runs', () => {
  it('the driver keeps to the directory it made: nothing outside is written or removed, the step completes', () => {
    const root = realpathSync(runRepo(planText([step(1, 'Base')])));
    const dir = tempDir('tugcode-swap-');
    const bin = join(dir, 'bin');
    const rec = join(dir, 'rec');
    const out = join(dir, 'out');
    for (const d of [bin, rec, out]) mkdirSync(d);
    writeFileSync(join(bin, 'codex'), SWAPPER);
    chmodSync(join(bin, 'codex'), 0o755);
    for (const n of ['a.res', 'a.work']) writeFileSync(join(out, n), 'precious');
    const r = runJsonl(root, ['demo', '--workers', '1', '--agent', 'codex'], {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      FAKE_REC: rec,
      FAKE_OUT: out,
    });
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
    expect(readdirSync(out).sort()).toEqual(['a.res', 'a.work']);
    for (const n of ['a.res', 'a.work']) expect(readFileSync(join(out, n), 'utf8'), n).toBe('precious');
    // The heartbeat ran, its reply written where the driver took the request from (docs/agents.md §1.4).
    expect(JSON.parse(readFileSync(join(rec, 'reply.json'), 'utf8'))).toMatchObject({ exit: 0 });
  });
});
