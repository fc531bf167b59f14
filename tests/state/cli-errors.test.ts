/**
 * Every state error code through the real CLI: the code, the exit code, and a dump of every table that
 * shows nothing changed.
 */
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, tempRepo } from '../helpers/repo.js';
import { CLI, runJson } from '../helpers/cli.js';
import { DEMO, DEMO_PATH, DEMO_STEPS, T0, at, dbPathOf, dump, planRepo, planText } from './helpers.js';
import { cliRepo, refusedCli, st } from './cli-helpers.js';

describe('tugcode state errors (CLI)', () => {
  it('rejects bad arguments with exit 2 and changes nothing', () => {
    const { root, w1 } = cliRepo();
    st(root, ['claim', 'demo', '--worktree', w1]);
    const upd = ['update', 'demo', 'step-0', '--worktree', w1];
    refusedCli(root, ['claim', 'demo', '--worktree', w1, '--bogus'], 'InvalidArgument', 2);
    refusedCli(root, ['claim', 'demo', '--worktree', w1, '--lease-duration', '-5'], 'InvalidArgument', 2);
    refusedCli(root, ['claim', 'demo', '--worktree', w1, '--lease-duration', 'soon'], 'InvalidArgument', 2);
    refusedCli(root, [...upd, '--task', '99', 'completed'], 'InvalidArgument', 2);
    refusedCli(root, [...upd, '--task', '0', 'completed', 'extra'], 'InvalidArgument', 2);
    refusedCli(root, [...upd, '--task', '0'], 'InvalidArgument', 2);
    refusedCli(root, [...upd, '--task', '0', 'done'], 'InvalidStatus', 2);
    refusedCli(root, [...upd, '--all', 'finished'], 'InvalidStatus', 2);
    refusedCli(root, [...upd, '--task', '0', 'deferred'], 'InvalidArgument', 2);
    refusedCli(root, [...upd, '--batch', '--task', '0', 'completed'], 'InvalidArgument', 2, { input: '[]' });
    refusedCli(root, [...upd, '--batch'], 'InvalidBatch', 2, { input: '{"kind":"task"}' });
    refusedCli(root, [...upd, '--batch'], 'InvalidBatch', 2, { input: '' });
    refusedCli(root, [...upd, '--batch'], 'InvalidBatch', 2, {
      input:
        '[{"kind":"task","ordinal":0,"status":"completed"},{"kind":"task","ordinal":0,"status":"deferred","reason":"x"}]',
    });
    refusedCli(root, [...upd, '--batch'], 'InvalidBatch', 2, {
      input: '[{"kind":"task","ordinal":0,"status":"deferred"}]',
    });
    refusedCli(
      root,
      ['artifact', 'demo', 'step-0', '--worktree', w1, '--kind', 'note', '--summary-file', '-'],
      'InvalidArgument',
      2,
      { input: 'a\u0000b' },
    );
    refusedCli(
      root,
      ['artifact', 'demo', 'step-0', '--worktree', w1, '--kind', 'note', '--summary', 'x', '--summary-file', '-'],
      'InvalidArgument',
      2,
    );
    // An artifact needs a summary (the input table's rule, as for the MCP tool).
    const noSummary = refusedCli(
      root,
      ['artifact', 'demo', 'step-0', '--worktree', w1, '--kind', 'note'],
      'InvalidArgument',
      2,
    );
    expect(noSummary.json.error.details.argument).toBe('--summary');
    refusedCli(root, ['complete', 'demo', 'step-0', '--worktree', w1, '--commit', 'no-such-rev'], 'InvalidArgument', 2);
    refusedCli(root, ['show', '--watch', '1'], 'InvalidArgument', 2);
    refusedCli(root, ['log', '--limit', '0'], 'InvalidArgument', 2);
    const unknown = runJson('state', ['state', 'frobnicate'], { cwd: root });
    expect([unknown.json.error.code, unknown.code]).toEqual(['UnknownCommand', 2]);
    refusedCli(root, ['claim', 'demo', '--worktree', w1], 'ConfigInvalid', 2, { env: { TUGCODE_NOW: 'yesterday' } });
    // A date that does not exist is not rolled over (30 February is not 2 March); years stay four digits.
    for (const now of ['2026-02-30T00:00:00Z', '2026-04-31T10:00:00Z', '9999-12-31T23:00:00Z'])
      refusedCli(root, ['claim', 'demo', '--worktree', w1], 'ConfigInvalid', 2, { env: { TUGCODE_NOW: now } });
    // An empty --worktree (an unset $TUG_WORKTREE) is refused, not taken for the current directory.
    refusedCli(root, ['claim', 'demo', '--worktree', ''], 'InvalidArgument', 2);
    refusedCli(root, ['heartbeat', 'demo', 'step-0', '--worktree', ''], 'InvalidArgument', 2);
  });

  it('bounds the lease from config.toml and the environment like the flag, naming the source', () => {
    const { root, w1 } = cliRepo();
    const r = refusedCli(root, ['claim', 'demo', '--worktree', w1], 'ConfigInvalid', 2, {
      env: { TUGCODE_STATE_LEASE_SECONDS: '999999999999' },
    });
    expect(r.json.error.message).toContain('TUGCODE_STATE_LEASE_SECONDS');
    refusedCli(root, ['claim', 'demo', '--worktree', w1], 'ConfigInvalid', 2, {
      env: { TUGCODE_STATE_LEASE_SECONDS: '99999999999999999999999' },
    });
    refusedCli(root, ['claim', 'demo', '--worktree', w1, '--lease-duration', '999999999999'], 'InvalidArgument', 2);
    writeFileSync(join(root, '.tugtool', 'config.toml'), '[state]\nlease_seconds = 999999999999\n');
    const f = refusedCli(root, ['claim', 'demo', '--worktree', w1], 'ConfigInvalid', 2);
    expect(f.json.error.message).toContain('.tugtool/config.toml: state.lease_seconds');
    writeFileSync(join(root, '.tugtool', 'config.toml'), '[state]\nmax_attempts = 99999999999\n');
    refusedCli(root, ['claim', 'demo', '--worktree', w1], 'ConfigInvalid', 2);
  });

  it('reports what cannot be found with exit 3', () => {
    const { root, w1 } = cliRepo({ [DEMO_PATH]: DEMO, '.tugtool/tugplan-other.md': DEMO });
    const outside = tempDir();
    const n = st(outside, ['claim', 'demo', '--worktree', '.']);
    expect([n.json.error.code, n.code]).toEqual(['NotAGitRepository', 3]);
    expect(existsSync(join(outside, '.tugtool'))).toBe(false);
    const bare = tempRepo();
    const r = st(bare, ['claim', 'demo', '--worktree', bare]);
    expect([r.json.error.code, r.code]).toEqual(['NotInitialized', 3]);
    expect(existsSync(join(bare, '.tugtool'))).toBe(false);
    refusedCli(root, ['claim', 'nope', '--worktree', w1], 'PlanNotFound', 3);
    refusedCli(root, ['claim', 'other', '--worktree', w1], 'PlanNotInitialized', 3);
    refusedCli(root, ['show', 'other'], 'PlanNotInitialized', 3);
    refusedCli(root, ['start', 'demo', 'step-99', '--worktree', w1], 'StepNotFound', 3);
    refusedCli(root, ['claim', 'demo', '--worktree', outside], 'WorktreeNotFound', 3);
  });

  it('refuses what the state does not allow with exit 4', () => {
    const { root, w1, w2 } = cliRepo({
      [DEMO_PATH]: planText([
        { id: '0', deps: [], tasks: ['a'] },
        { id: '1', deps: ['step-0'], tasks: ['b'], refactors: ['organize-imports --file src/x.ts'] },
        { id: '1.1', level: 5, tasks: ['c'] },
      ]),
    });
    st(root, ['claim', 'demo', '--worktree', w1]);
    refusedCli(root, ['start', 'demo', 'step-0', '--worktree', w2], 'NotOwner', 4);
    // A number that never was an attempt is not called discarded: the hint names the current one.
    const never = refusedCli(
      root,
      ['start', 'demo', 'step-0', '--worktree', w1, '--attempt', '7'],
      'AttemptMismatch',
      4,
    );
    expect(never.json.error.message).toBe(
      '--attempt 7 is not the current attempt 1 of step-0 in .tugtool/tugplan-demo.md',
    );
    expect(never.json.error.hint).toBe(
      '7 was never an attempt of step-0; the current one is 1: pass the attempt your claim returned',
    );
    refusedCli(root, ['complete', 'demo', 'step-0', '--worktree', w1], 'ChecklistIncomplete', 4);
    st(root, ['release', 'demo', 'step-0', '--worktree', w1]);
    refusedCli(root, ['heartbeat', 'demo', 'step-0', '--worktree', w1], 'LeaseExpired', 4);
    st(root, ['claim', 'demo', '--worktree', w1]);
    // Attempt 1 was released: that one was discarded.
    const old = refusedCli(root, ['start', 'demo', 'step-0', '--worktree', w1, '--attempt', '1'], 'AttemptMismatch', 4);
    expect(old.json.error.hint).toBe('this attempt was discarded; claim again');
    st(root, ['complete', 'demo', 'step-0', '--worktree', w1, '--force', 'trivial']);
    // Another worktree changing a completed step: it is completed (not "claim it"), wherever it once was.
    for (const w of [w2, root]) {
      const done = refusedCli(
        root,
        ['update', 'demo', 'step-0', '--worktree', w, '--all', 'completed'],
        'InvalidTransition',
        4,
      );
      expect(done.json.error.message).toBe('step-0 is completed; a completed step takes no more changes');
      expect(done.json.error.hint).toBe('add a step to the plan for the new work, commit the plan, then run again');
    }
    // A completed step stays completed; the refusal says where new work on it goes.
    expect(refusedCli(root, ['reset', 'demo', 'step-0'], 'InvalidTransition', 4).json.error.hint).toContain(
      'add a step to the plan',
    );
    st(root, ['claim', 'demo', '--worktree', w1]);
    st(root, ['update', 'demo', 'step-1', '--worktree', w1, '--all', 'completed']);
    refusedCli(root, ['complete', 'demo', 'step-1', '--worktree', w1], 'SubstepsIncomplete', 4);
    st(root, ['update', 'demo', 'step-1-1', '--worktree', w1, '--complete-remaining']);
    refusedCli(root, ['complete', 'demo', 'step-1', '--worktree', w1], 'RefactorsIncomplete', 4);
    writeFileSync(
      join(w1, DEMO_PATH),
      readFileSync(join(w1, DEMO_PATH), 'utf8') + '\n#### Step 9: Extra {#step-9}\n\n**Tasks:**\n- [ ] more\n',
    );
    refusedCli(root, ['update', 'demo', 'step-1', '--worktree', w1, '--all', 'completed'], 'PlanDrift', 4);
  });

  it('claim --step of a substep hints the claim of its top-level step as the caller (its --worktree)', () => {
    const { root, w1 } = cliRepo();
    const r = refusedCli(root, ['claim', 'demo', '--worktree', w1, '--step', 'step-1-1'], 'InvalidArgument', 2);
    expect(r.json.error.hint).toBe(`tugcode state claim ${DEMO_PATH} --step step-1 --worktree ${w1}`);
  });

  it("PlanDrift found in another worktree's copy hints the state init that reads that copy", () => {
    const { root, w1 } = cliRepo();
    st(root, ['claim', 'demo', '--worktree', w1]);
    writeFileSync(
      join(w1, DEMO_PATH),
      readFileSync(join(w1, DEMO_PATH), 'utf8') + '\n#### Step 9: Extra {#step-9}\n\n**Tasks:**\n- [ ] more\n',
    );
    const upd = ['update', 'demo', 'step-0', '--worktree', w1, '--task', '0', 'completed'];
    const r = refusedCli(root, upd, 'PlanDrift', 4);
    expect(r.json.error.details.read_from).toBe(w1);
    expect(r.json.error.hint).toBe(`tugcode -C ${w1} state init ${DEMO_PATH} --force`);
    // The hint, run from where the refusal came, takes the worktree's plan over: the update then goes through.
    const init = runJson('state init', r.json.error.hint.split(' ').slice(1), { cwd: root, env: { TUGCODE_NOW: T0 } });
    expect([init.json.status, init.json.reinitialized]).toEqual(['ok', true]);
    expect(st(root, upd).json.status).toBe('ok');
    // Read from the current work tree, the hint stays the plain one.
    writeFileSync(join(w1, DEMO_PATH), readFileSync(join(w1, DEMO_PATH), 'utf8') + '\n#### Step 10: More {#step-10}\n');
    const here = refusedCli(root, [...upd.slice(0, 3), '--task', '1', 'completed'], 'PlanDrift', 4, { cwd: w1 });
    expect(here.json.error.details.read_from).toBeUndefined();
    expect(here.json.error.hint).toBe(`tugcode state init ${DEMO_PATH} --force`);
  });

  it('refuses an invalid plan with PlanInvalid and creates no state.db', () => {
    const root = planRepo({ '.tugtool/tugplan-bad.md': '# Just a title\n\nNo steps.\n' });
    const r = st(root, ['init', 'bad']);
    expect([r.json.error.code, r.code]).toEqual(['PlanInvalid', 4]);
    expect(existsSync(dbPathOf(root))).toBe(false);
  });

  it('reports Busy when state.db stays locked past the timeout, and changes nothing', () => {
    const { root, w1 } = cliRepo();
    const holder = new Database(dbPathOf(root));
    holder.prepare('BEGIN IMMEDIATE').run();
    try {
      const r = st(root, ['claim', 'demo', '--worktree', w1], { env: { TUGCODE_BUSY_TIMEOUT_MS: '200' } });
      expect([r.json.error.code, r.code]).toEqual(['Busy', 4]);
    } finally {
      holder.prepare('ROLLBACK').run();
      holder.close();
    }
    expect(st(root, ['ready', 'demo']).json.claimed_steps).toEqual([]);
  });

  it('refuses a database from a newer tugcode with SchemaTooNew, and a corrupt one with DatabaseError, never overwriting it', () => {
    const { root, w1 } = cliRepo();
    const db = new Database(dbPathOf(root));
    db.prepare('UPDATE schema_version SET version = 42').run();
    db.close();
    refusedCli(root, ['claim', 'demo', '--worktree', w1], 'SchemaTooNew', 4);
    expect(st(root, ['ready', 'demo']).json.all_steps).toEqual(['step-0', 'step-1', 'step-2']);

    const junkRoot = planRepo();
    mkdirSync(join(junkRoot, '.tugtool'), { recursive: true });
    const junk = 'this is not a database, just text that happens to be long enough to look like a header\n'.repeat(20);
    writeFileSync(dbPathOf(junkRoot), junk);
    for (const args of [['claim', 'demo', '--worktree', junkRoot], ['show'], ['init', 'demo']]) {
      const r = st(junkRoot, args);
      expect([r.json.error.code, r.code], JSON.stringify(r.json)).toEqual(['DatabaseError', 10]);
      expect(r.json.error.message).toContain(dbPathOf(junkRoot));
      expect(r.json.error.hint).toContain('state reconcile');
    }
    expect(readFileSync(dbPathOf(junkRoot), 'utf8')).toBe(junk);
    // An empty file is refused as well, and stays empty: no WAL header, no -wal or -shm beside it.
    writeFileSync(dbPathOf(junkRoot), '');
    for (const args of [['claim', 'demo', '--worktree', junkRoot], ['show']]) {
      const r = st(junkRoot, args);
      expect([r.json.error.code, r.code], JSON.stringify(r.json)).toEqual(['DatabaseError', 10]);
    }
    expect(readFileSync(dbPathOf(junkRoot), 'utf8')).toBe('');
    expect(existsSync(dbPathOf(junkRoot) + '-wal') || existsSync(dbPathOf(junkRoot) + '-shm')).toBe(false);
    void at;
    void DEMO_STEPS;
  });

  it('names a -wal that is a directory (state.db is sound), and its hint keeps state.db and works', () => {
    const { root, w1 } = cliRepo();
    const before = dump(dbPathOf(root));
    const wal = dbPathOf(root) + '-wal';
    rmSync(wal, { force: true });
    mkdirSync(wal);
    const r = st(root, ['claim', 'demo', '--worktree', w1]);
    expect([r.json.error.code, r.code]).toEqual(['DatabaseError', 10]);
    expect(r.json.error.message).toContain(`${wal} is a directory`);
    expect(r.json.error.hint).toContain(`mv ${wal} ${wal}.bak`);
    renameSync(wal, `${wal}.bak`);
    expect(dump(dbPathOf(root))).toEqual(before);
  });

  it('a repository too deep for SQLite to open its state.db: the path is named, and the hint works', () => {
    let deep = tempDir();
    while (Buffer.byteLength(deep) < 520) deep = join(deep, 'd'.repeat(60));
    mkdirSync(deep, { recursive: true });
    const root = join(deep, 'repo');
    renameSync(planRepo(), root);
    const r = st(root, ['init', 'demo']);
    expect([r.json.error.code, r.code]).toEqual(['DatabaseError', 10]);
    expect(r.json.error.message).toContain('the path is longer than the 512 bytes SQLite can open');
    expect(r.json.error.hint).toContain('TUGCODE_STATE_DB');
    const short = { TUGCODE_STATE_DB: join(tempDir(), 'state.db') };
    expect(st(root, ['init', 'demo'], { env: short }).json.status).toBe('ok');
  });

  it('does not hint to move aside a directory TUGCODE_STATE_DB names', () => {
    const { root, w1 } = cliRepo();
    const dir = tempDir();
    const r = st(root, ['claim', 'demo', '--worktree', w1], { env: { TUGCODE_STATE_DB: dir } });
    expect([r.json.error.code, r.code]).toEqual(['DatabaseError', 10]);
    expect(r.json.error.hint).not.toContain('aside');
    expect(r.json.error.hint).toContain('TUGCODE_STATE_DB');
  });
});

describe('stdin rules (CLI)', () => {
  const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;
  it.skipIf(!hasScript)('refuses --batch with InvalidArgument when stdin is a terminal, instead of waiting', () => {
    const { root, w1 } = cliRepo();
    st(root, ['claim', 'demo', '--worktree', w1]);
    const before = dump(dbPathOf(root));
    const cmd = [process.execPath, CLI, 'state', 'update', 'demo', 'step-0', '--worktree', w1, '--batch', '--json']
      .map((a) => `'${a}'`)
      .join(' ');
    // `script` gives the command a pseudo-terminal as stdin.
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, NODE_ENV: 'test' },
    });
    const doc = /^\{[\s\S]*?^\}/m.exec(r.stdout.replace(/\r/g, ''));
    const json = JSON.parse(doc![0]);
    expect([json.error.code, r.status]).toEqual(['InvalidArgument', 2]);
    expect(json.error.message).toContain('terminal');
    expect(dump(dbPathOf(root))).toEqual(before);
  });
});
