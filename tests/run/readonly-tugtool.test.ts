/**
 * A `.tugtool/` that refuses writes (docs/run.md §1 item 3): `run` says which directory is not writable
 * (NotWritable, exit 4) instead of an internal error, and when the directory turns read-only during the
 * run, the failing lock release at the end does not replace the run's own summary. As root, permissions
 * do not bind: the CLI then runs as `nobody` in a repository it owns.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { nodeImplementer, parseLines, planText, runRepo, step } from './helpers.js';

const ROOT_USER = process.getuid?.() === 0;
const NOBODY = 65534;

function chownTree(path: string): void {
  chownSync(path, NOBODY, NOBODY);
  if (!statSync(path).isDirectory()) return;
  for (const f of readdirSync(path)) {
    const p = join(path, f);
    if (statSync(p, { throwIfNoEntry: false })?.isSymbolicLink?.()) continue;
    chownTree(p);
  }
}

/** `tugcode run … --json`, as `nobody` when the tests run as root. */
function run(root: string, args: string[], implDir: string, o: { owned?: boolean } = {}) {
  const home = tempDir('tugcode-home-');
  if (ROOT_USER) {
    if (!o.owned) chownTree(root);
    chownTree(implDir);
    chownSync(home, NOBODY, NOBODY);
  }
  const r = spawnSync(process.execPath, [CLI, 'run', ...args, '--json'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      NODE_ENV: 'test',
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.invalid',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.invalid',
    },
    encoding: 'utf8',
    timeout: 40_000,
    ...(ROOT_USER ? { uid: NOBODY, gid: NOBODY } : {}),
  });
  return { code: r.status, events: parseLines(r.stdout), stderr: r.stderr };
}

describe('a read-only .tugtool/', () => {
  it('run refuses with NotWritable naming the directory, not an internal error', () => {
    const root = runRepo(planText([step(1, 'One')]));
    const impl = nodeImplementer(`writeFileSync(join(wt, step + '.txt'), step + '\\n');`);
    if (ROOT_USER) chownTree(root);
    chmodSync(join(root, '.tugtool'), 0o555);
    try {
      const r = run(root, ['demo', '--workers', '1', '--implementer', impl.argv], impl.dir);
      expect(r.code, r.stderr).toBe(4);
      const summary = r.events.at(-1);
      expect(summary.error.code).toBe('NotWritable');
      expect(summary.error.message).toContain(join(root, '.tugtool'));
      expect(summary.error.hint).toMatch(/writable/);
    } finally {
      chmodSync(join(root, '.tugtool'), 0o755);
    }
  });

  it('on a read-only filesystem (a read-only bind mount): NotWritable naming the directory', (ctx) => {
    const root = runRepo(planText([step(1, 'One')]));
    const impl = nodeImplementer(`writeFileSync(join(wt, step + '.txt'), step + '\\n');`);
    const dir = join(root, '.tugtool');
    if (ROOT_USER) chownTree(root);
    // Only root may mount (a container may refuse even root): skip where the read-only mount cannot be made.
    const bind = spawnSync('mount', ['--bind', dir, dir], { encoding: 'utf8' });
    if (bind.status !== 0) return ctx.skip();
    try {
      if (spawnSync('mount', ['-o', 'remount,bind,ro', dir]).status !== 0) return ctx.skip();
      const r = run(root, ['demo', '--workers', '1', '--implementer', impl.argv], impl.dir, { owned: true });
      expect(r.code, r.stderr + JSON.stringify(r.events.at(-1))).toBe(4);
      const summary = r.events.at(-1);
      expect(summary.error.code).toBe('NotWritable');
      expect(summary.error.message).toContain(dir);
      expect(JSON.stringify(summary)).not.toMatch(/InternalError|ENOENT/);
    } finally {
      spawnSync('umount', [dir]);
    }
  });

  it('turned read-only during the run: the run keeps its own summary; the next run takes the lock over', () => {
    const root = runRepo(planText([step(1, 'One')]));
    const impl = nodeImplementer(`
writeFileSync(join(wt, step + '.txt'), step + '\\n');
(await import('node:fs')).chmodSync(join(process.env.TUG_REPO_ROOT, '.tugtool'), 0o555);`);
    const r = run(root, ['demo', '--workers', '1', '--implementer', impl.argv], impl.dir);
    chmodSync(join(root, '.tugtool'), 0o755);
    const summary = r.events.at(-1);
    expect(summary.type, JSON.stringify(r.events.slice(-3))).toBe('summary');
    expect(JSON.stringify(summary)).not.toMatch(/ENOTDIR|InternalError/);
    // Its own error (the integration lock could not be taken: NotWritable, naming the directory).
    expect(summary.error.code, JSON.stringify(summary)).toBe('NotWritable');
    expect(summary.error.message).toContain(join(root, '.tugtool'));
    // The lock it could not remove names a dead holder: the next run takes it over at once.
    const again = run(root, ['demo', '--workers', '1', '--implementer', impl.argv], impl.dir);
    expect(again.events.at(-1)?.error?.code).not.toBe('RunInProgress');
  });
});
