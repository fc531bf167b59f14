/**
 * State on a full disk or a read-only filesystem (real tmpfs mounts; root only, skipped otherwise): a full
 * disk is DiskFull with "free space on <fs>" in `state init` (leaving no empty state.db behind),
 * `state claim` and `commit`; read-only commands read a state.db they cannot write next to, and a writer
 * there is told the directory is not writable, never to move state.db aside; on a full disk too, status,
 * state show and doctor read state.db; a run that cannot take its lock on a full disk names the lock's
 * filesystem and the previous run's worker trees under `.tugtree/`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, statfsSync, writeFileSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { git, writeFiles } from '../helpers/repo.js';
import { implementerScript, parseLines, planText, runJsonl, step } from '../run/helpers.js';

const ROOT_USER = process.getuid?.() === 0;
const mounts: string[] = [];
afterEach(() => {
  for (const m of mounts.splice(0)) {
    execFileSync('umount', [m]);
    rmSync(m, { recursive: true, force: true });
  }
});

/** A repository with tugcode init and a committed plan on a fresh tmpfs of `size`. */
function repoOnTmpfs(size: string): { mount: string; root: string } {
  const mount = mkdtempSync(join(tmpdir(), 'tugcode-fs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mount]);
  mounts.push(mount);
  const root = join(mount, 'r');
  execFileSync('git', ['init', '-q', '-b', 'main', root]);
  git(root, 'config', 'user.name', 'T');
  git(root, 'config', 'user.email', 't@example.invalid');
  git(root, 'config', 'commit.gpgsign', 'false');
  expect(runCli(['init'], { cwd: root }).code).toBe(0);
  writeFiles(root, { '.tugtool/tugplan-demo.md': planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]) });
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', 'plan');
  return { mount, root };
}

/** Writes zeros until the filesystem is full; returns the file to delete to free it. */
function fill(mount: string): string {
  const f = join(mount, 'fill');
  const fd = openSync(f, 'w');
  const chunk = Buffer.alloc(4096);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    expect((e as NodeJS.ErrnoException).code).toBe('ENOSPC');
  } finally {
    closeSync(fd);
  }
  return f;
}

const json = (argv: string[], cwd: string) => runCli([...argv, '--json'], { cwd });

describe.skipIf(!ROOT_USER)('a full disk', () => {
  it('is DiskFull naming the filesystem in state init, state claim and commit', () => {
    const { mount, root } = repoOnTmpfs('2m');
    const filler = fill(mount);
    const init = json(['state', 'init', 'demo'], root);
    expect([init.code, init.json.error.code]).toEqual([10, 'DiskFull']);
    expect(init.json.error.hint).toBe(
      `free space on the filesystem holding ${root}/.tugtool (df -h ${root}/.tugtool), then retry`,
    );
    // Nothing is left that a later init would trip on.
    expect(existsSync(join(root, '.tugtool', 'state.db'))).toBe(false);
    rmSync(filler);
    expect(json(['state', 'init', 'demo'], root).code).toBe(0);
    const wt = json(['worktree', 'create', 'demo'], root).json.worktree_path as string;
    expect(json(['state', 'claim', 'demo', '--worktree', wt], root).code).toBe(0);
    expect(json(['state', 'start', 'demo', 'step-1', '--worktree', wt], root).code).toBe(0);
    writeFileSync(join(wt, 'one.txt'), 'one\n');

    fill(mount);
    const claim = json(['state', 'claim', 'demo', '--worktree', root], root);
    expect([claim.code, claim.json.error.code]).toEqual([10, 'DiskFull']);
    expect(claim.json.error.hint).toMatch(/^free space on the filesystem holding /);
    const commit = json(['commit', '--plan', 'demo', '--step', 'step-1', '--message', 'feat: one'], wt);
    expect([commit.code, commit.json.error.code]).toEqual([10, 'DiskFull']);
    expect(commit.json.error.hint).toMatch(/^free space on the filesystem holding /);
  });
});

describe.skipIf(!ROOT_USER)('a disk too full for git but not for the state', () => {
  it('makes tugcode commit DiskFull, never a CommitFailed of unknown cause, and changes nothing', () => {
    const { mount, root } = repoOnTmpfs('8m');
    expect(json(['state', 'init', 'demo'], root).code).toBe(0);
    const wt = json(['worktree', 'create', 'demo'], root).json.worktree_path as string;
    expect(json(['state', 'claim', 'demo', '--worktree', wt], root).code).toBe(0);
    expect(json(['state', 'start', 'demo', 'step-1', '--worktree', wt], root).code).toBe(0);
    // 400 KiB that do not compress: git's object of it cannot be written in the 64 KiB left.
    writeFileSync(join(wt, 'one.bin'), randomBytes(400 * 1024));
    const left = 64 * 1024;
    const { bavail, bsize } = statfsSync(mount);
    const f = join(mount, 'fill');
    const fd = openSync(f, 'w');
    try {
      for (let rest = bavail * bsize - left; rest > 0; rest -= 65536)
        writeSync(fd, Buffer.alloc(Math.min(65536, rest)));
    } finally {
      closeSync(fd);
    }
    const head = git(wt, 'rev-parse', 'HEAD');
    const commit = json(['commit', '--plan', 'demo', '--step', 'step-1', '--message', 'feat: one'], wt);
    expect([commit.code, commit.json.error.code], commit.stdout).toEqual([10, 'DiskFull']);
    expect(commit.json.error.message).toMatch(/could not write/);
    expect(git(wt, 'rev-parse', 'HEAD')).toBe(head);
    rmSync(f);
    const again = json(['commit', '--plan', 'demo', '--step', 'step-1', '--message', 'feat: one'], wt);
    expect(again.code, again.stdout).toBe(0);
  });
});

describe.skipIf(!ROOT_USER)('a full disk, for the commands that only read', () => {
  it('lets status, state show and doctor read state.db, and never advises moving it aside', () => {
    const { mount, root } = repoOnTmpfs('4m');
    expect(json(['state', 'init', 'demo'], root).code).toBe(0);
    fill(mount);
    const status = json(['status'], root);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect(status.json.plans[0].plan_path).toBe('.tugtool/tugplan-demo.md');
    const show = json(['state', 'show', 'demo'], root);
    expect(show.code, show.stdout + show.stderr).toBe(0);
    expect(JSON.stringify(show.json)).toContain('step-1');
    const doctor = runCli(['doctor', '--json'], { cwd: root });
    const checks: { name: string; status: string; fix: string }[] = (doctor.json.checks ??
      doctor.json.error.details.checks) as never;
    expect(checks.find((c) => c.name === 'state-db-opens')?.status).toBe('pass');
    expect(JSON.stringify(checks)).not.toMatch(/aside/);
  });
});

describe.skipIf(!ROOT_USER)('a read-only filesystem', () => {
  it('lets status and state show read state.db; a writer is told the directory is not writable', () => {
    const { mount, root } = repoOnTmpfs('20m');
    expect(json(['state', 'init', 'demo'], root).code).toBe(0);
    execFileSync('mount', ['-o', 'remount,ro', mount]);

    const status = json(['status'], root);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    const show = json(['state', 'show', 'demo'], root);
    expect(show.code, show.stdout + show.stderr).toBe(0);
    expect(JSON.stringify(show.json)).toContain('step-1');

    const claim = json(['state', 'claim', 'demo', '--worktree', root], root);
    expect([claim.code, claim.json.error.code]).toEqual([4, 'NotWritable']);
    expect(claim.json.error.message).toContain(`${join(root, '.tugtool', 'state.db')} is not writable (EROFS)`);
    expect(claim.json.error.hint).not.toMatch(/move .* aside/);
    expect(claim.json.error.hint).toMatch(/is on a read-only filesystem: remount it read-write \(findmnt -T /);
  });
});

describe.skipIf(!ROOT_USER)('a full disk at the start of a run', () => {
  it("is DiskFull naming the run lock's directory and where the previous run's worker trees are", () => {
    const { mount, root } = repoOnTmpfs('4m');
    expect(json(['state', 'init', 'demo'], root).code).toBe(0);
    // A previous run's worker tree, left under .tugtree/ (what an attempt that filled the disk leaves).
    const wt = json(['worktree', 'create', 'demo'], root).json.worktree_path as string;
    expect(wt.startsWith(join(root, '.tugtree') + '/')).toBe(true);
    fill(mount);
    // Started elsewhere with -C, so a hint saying `df -h .` would look at the wrong filesystem.
    const r = runJsonl(tmpdir(), ['-C', root, 'demo', '--workers', '1', '--implementer', implementerScript().argv]);
    const end = parseLines(r.stdout).at(-1);
    expect([r.code, end?.error?.code], r.stdout + r.stderr).toEqual([10, 'DiskFull']);
    expect(end.error.hint).toContain(`df -h ${join(root, '.tugtool')}`);
    expect(end.error.hint).toContain(`du -sh ${join(root, '.tugtree')}/*`);
    expect(end.error.details).toMatchObject({ dir: join(root, '.tugtool'), worker_trees: join(root, '.tugtree') });
    // Freed, the same run goes through.
    rmSync(join(mount, 'fill'));
    const again = runJsonl(tmpdir(), ['-C', root, 'demo', '--workers', '1', '--implementer', implementerScript().argv]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
  });
});
