/**
 * Smaller refusals with the right code and words (issue 11): a damaged schema_version table, a read-only
 * state.db (a permissions problem: the hint must not say "move it aside"), `.tugtool` as a regular file,
 * and the messages of bad per-item flags of `state update`.
 */
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCli } from '../helpers/cli.js';
import { DEMO_PATH, dbPathOf, dump, planRepo } from './helpers.js';
import { cliRepo, refusedCli, st } from './cli-helpers.js';

describe('a damaged schema_version table', () => {
  for (const [what, damage] of [
    ['empty', 'DELETE FROM schema_version'],
    ['0', 'UPDATE schema_version SET version = 0'],
    ['text', "UPDATE schema_version SET version = 'one'"],
    ['two rows', 'INSERT INTO schema_version (version) VALUES (1)'],
  ] as const) {
    it(`(${what}) is DatabaseError for writers and readers, and the file is kept`, () => {
      const { root, w1 } = cliRepo();
      const db = new Database(dbPathOf(root));
      db.exec(damage);
      db.close();
      const before = dump(dbPathOf(root));
      for (const args of [['claim', 'demo', '--worktree', w1], ['show'], ['ready', 'demo'], ['init', 'demo']]) {
        const r = st(root, args);
        expect([r.json.error.code, r.code], JSON.stringify(r.json)).toEqual(['DatabaseError', 10]);
        expect(r.json.error.message).toContain('schema_version is damaged');
      }
      expect(dump(dbPathOf(root))).toEqual(before);
    });
  }
});

describe('a read-only state.db', () => {
  it('is a permissions problem (NotWritable): the hint keeps the file (it holds live claims) and says how to fix it', () => {
    const { root, w1 } = cliRepo();
    st(root, ['claim', 'demo', '--worktree', w1]);
    const db = dbPathOf(root);
    for (const f of readdirSync(join(root, '.tugtool')))
      if (f.startsWith('state.db-')) rmSync(join(root, '.tugtool', f));
    const before = dump(db);
    chmodSync(db, 0o444);
    // Root ignores file modes: run the CLI as an unprivileged user then, with the tree readable to it.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      for (const dir of [root, w1]) {
        spawnSync('chmod', ['-R', 'a+rwX', dir]);
        for (let d = dir; d !== '/'; d = join(d, '..'))
          if (statSync(d).uid === 0) chmodSync(d, (statSync(d).mode & 0o7777) | 0o005);
      }
      chmodSync(db, 0o444);
    }
    const r = spawnSync(process.execPath, [CLI, 'state', 'heartbeat', 'demo', 'step-0', '--worktree', w1, '--json'], {
      cwd: root,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        HOME: root,
        NODE_ENV: 'test',
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'safe.directory',
        GIT_CONFIG_VALUE_0: '*',
      },
      ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
    });
    const out = JSON.parse(r.stdout);
    // The catalogue's NotWritable (exit 4, docs/errors.md), naming the file that refuses this user.
    expect([out.error?.code, r.status], r.stdout + r.stderr).toEqual(['NotWritable', 4]);
    expect(out.error.details.sqlite_code).toMatch(/^SQLITE_READONLY/);
    expect(out.error.details.path).toBe(db);
    expect(out.error.message).toContain(`${db} is not writable`);
    expect(out.error.hint).toContain('writable by this user');
    expect(out.error.hint).toContain('chmod');
    expect(out.error.hint).not.toContain('aside');
    chmodSync(db, 0o644);
    expect(dump(db)).toEqual(before);
  });
});

const ROOT_USER = process.getuid?.() === 0;

/** The CLI with `--json` as `nobody` (root only), the tree made readable to it. */
function asNobody(root: string, args: string[]): { code: number | null; out: any; raw: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, '--json'], {
    cwd: root,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: '/tmp',
      NODE_ENV: 'test',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'safe.directory',
      GIT_CONFIG_VALUE_0: '*',
    },
    uid: 65534,
    gid: 65534,
  });
  return { code: r.status, out: JSON.parse(r.stdout), raw: r.stdout + r.stderr };
}

describe.skipIf(!ROOT_USER)("state.db of another user (root's, mode 644 in its 755 directory)", () => {
  it('writers are NotWritable naming state.db; readers read it though they cannot create its -shm', () => {
    const { root, w1 } = cliRepo();
    st(root, ['claim', 'demo', '--worktree', w1]);
    const db = dbPathOf(root);
    spawnSync('chmod', ['-R', 'a+rX', root]);
    for (let d = root; d !== '/'; d = join(d, '..'))
      if (statSync(d).uid === 0) chmodSync(d, (statSync(d).mode & 0o7777) | 0o005);
    const before = dump(db);
    const r = asNobody(root, ['state', 'claim', 'demo', '--worktree', root]);
    expect([r.out.error?.code, r.code], r.raw).toEqual(['NotWritable', 4]);
    expect(r.out.error.details.path).toBe(db);
    expect(r.out.error.message).toContain(`${db} is not writable (EACCES)`);
    const show = asNobody(root, ['state', 'show', 'demo']);
    expect(show.code, show.raw).toBe(0);
    expect(JSON.stringify(show.out)).toContain('step-0');
    const status = asNobody(root, ['status']);
    expect(status.code, status.raw).toBe(0);
    expect(dump(db)).toEqual(before);
  });
});

describe.skipIf(!ROOT_USER)('an immutable state.db (chattr +i)', () => {
  it('is NotWritable (EPERM) naming it, and is left as it was', (ctx) => {
    const { root, w1 } = cliRepo();
    const db = dbPathOf(root);
    const before = dump(db);
    if (spawnSync('chattr', ['+i', db]).status !== 0) return ctx.skip();
    try {
      const r = st(root, ['claim', 'demo', '--worktree', w1]);
      expect([r.json.error?.code, r.code], JSON.stringify(r.json)).toEqual(['NotWritable', 4]);
      expect(r.json.error.message).toContain(`${db} is not writable (EPERM)`);
      // chmod would not help: the hint names the attribute.
      expect(r.json.error.hint).toMatch(/immutable or append-only attribute \(lsattr -d .*; chattr -i -a\)/);
      expect(st(root, ['show', 'demo']).code).toBe(0);
    } finally {
      spawnSync('chattr', ['-i', db]);
    }
    expect(dump(db)).toEqual(before);
  });
});

describe("another program's SQLite database at state.db", () => {
  it('is DatabaseError for writers and readers, and its bytes stay the same (no WAL switch first)', () => {
    const root = planRepo({ 'README.md': '# x\n' });
    mkdirSync(join(root, '.tugtool'));
    const path = dbPathOf(root);
    const foreign = new Database(path);
    foreign.exec('CREATE TABLE moz (id)');
    foreign.close();
    const hash = () => createHash('sha256').update(readFileSync(path)).digest('hex');
    const before = hash();
    for (const args of [['claim', 'demo', '--worktree', root], ['init', DEMO_PATH], ['show'], ['ready', 'demo']]) {
      const r = st(root, args);
      expect([r.json.error?.code, r.code], JSON.stringify(r.json)).toEqual(['DatabaseError', 10]);
      expect(r.json.error.message).toContain('not a tugcode state database');
      expect(hash(), args.join(' ')).toBe(before);
      expect(readdirSync(join(root, '.tugtool')).sort()).toEqual(['state.db']);
    }
  });
});

describe('state.db that is no database file', () => {
  it('a directory at state.db is named as one for readers and writers, never "disk I/O error"', () => {
    const root = planRepo();
    mkdirSync(join(root, '.tugtool', 'state.db'), { recursive: true });
    for (const args of [['show'], ['claim', 'demo', '--worktree', root], ['init', DEMO_PATH]]) {
      const r = st(root, args);
      expect([r.json.error?.code, r.code], JSON.stringify(r.json)).toEqual(['DatabaseError', 10]);
      expect(r.json.error.message).toContain(`${dbPathOf(root)}: it is a directory, not a database file`);
    }
  });

  it('an I/O error on a pseudo filesystem (/proc) is no full disk', () => {
    const root = planRepo({ 'README.md': '# x\n' });
    const r = runCli(['status', '--json'], { cwd: root, env: { TUGCODE_STATE_DB: '/proc/self/mem' } });
    expect(r.json.error.code, r.stdout).toBe('DatabaseError');
    expect(r.json.error.details.sqlite_code).toMatch(/^SQLITE_IOERR/);
    expect(r.stdout).not.toMatch(/no space|free space/);
  });
});

describe('.tugtool as a regular file', () => {
  it('is NotInitialized naming the file, for readers and writers, never an ok empty answer', () => {
    const root = planRepo({ 'README.md': '# x\n' });
    writeFileSync(join(root, '.tugtool'), 'not a directory\n');
    for (const args of [['show'], ['list'], ['log'], ['claim', 'demo', '--worktree', root], ['init', DEMO_PATH]]) {
      const r = st(root, args);
      expect([r.json.error?.code, r.code], JSON.stringify(r.json)).toEqual(['NotInitialized', 3]);
      expect(r.json.error.message).toContain('is a file, not a directory');
      expect(r.json.error.hint).toContain('aside');
    }
  });
});

describe('messages of bad item flags', () => {
  it('names a negative ordinal, and a repeated item without blaming --batch', () => {
    const { root, w1 } = cliRepo();
    st(root, ['claim', 'demo', '--worktree', w1]);
    const upd = ['update', 'demo', 'step-0', '--worktree', w1];
    for (const flags of [
      ['--task', '-1', 'completed'],
      ['--task', '-1:completed'],
    ]) {
      const neg = refusedCli(root, [...upd, ...flags], 'InvalidArgument', 2);
      expect(neg.json.error.message).toContain('non-negative integer, got "-1"');
    }
    const dup = refusedCli(root, [...upd, '--task', '0', 'completed', '--task', '0', 'open'], 'InvalidBatch', 2);
    expect(dup.json.error.message).toBe('invalid item changes: task 0 is named more than once');
    expect(dup.json.error.message).not.toContain('--batch');
    expect(dup.json.error.hint).not.toContain('stdin');
    const batch = refusedCli(root, [...upd, '--batch'], 'InvalidBatch', 2, {
      input: '[{"kind":"task","ordinal":0,"status":"completed"},{"kind":"task","ordinal":0,"status":"open"}]',
    });
    expect(batch.json.error.message).toContain('invalid --batch input');
  });
});

describe('an item ordinal the step does not have', () => {
  it('is InvalidArgument (exit 2) before ownership and status: on a completed step too, changing nothing', () => {
    const { root, w1, w2 } = cliRepo();
    st(root, ['claim', 'demo', '--worktree', w1]);
    const upd = (w: string) => ['update', 'demo', 'step-0', '--worktree', w, '--task', '9', 'completed'];
    // Claimed by w1: its owner and another worktree alike.
    for (const w of [w1, w2]) {
      const r = refusedCli(root, upd(w), 'InvalidArgument', 2);
      expect(r.json.error.message).toContain('task 9 does not exist');
    }
    expect(st(root, ['complete', 'demo', 'step-0', '--worktree', w1, '--force', 'by hand']).json.status).toBe('ok');
    for (const w of [w1, w2]) {
      const r = refusedCli(root, upd(w), 'InvalidArgument', 2);
      expect(r.json.error.message).toContain('task 9 does not exist');
      expect(r.json.error.details).toMatchObject({ step_anchor: 'step-0', kind: 'task', ordinal: 9 });
    }
  });
});
