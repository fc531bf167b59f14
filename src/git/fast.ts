/**
 * The only synchronous git calls of tugcode, and why they are synchronous.
 *
 * Everything else runs git through simple-git (exec.ts), which never blocks the event loop. The calls here
 * serve the hot state path — `tugcode state claim | heartbeat | complete --commit | reconcile`, and the repo
 * resolver every command runs first — which a CLI process runs hundreds of times per plan within a budget
 * of 1.2× a bare node + SQLite process (docs/quality.md §2). Loading simple-git alone costs more than that
 * budget leaves, so these few calls spawn git directly with `child_process.spawnSync` (and most of the time
 * spawn nothing: branch tips are read from git's ref files, the repo root from the `.git` layout).
 * Measured on the 2-core target (medians of 41 interleaved runs): `tugcode state heartbeat` takes 99 ms as
 * built and 114 ms with simple-git merely loaded (`node -r simple-git`), +15 % against a 1.2× budget that
 * the hot commands already use up to 1.17×; a fresh node running one `git rev-parse` takes 66 ms through
 * spawnSync and 140 ms through simple-git (its import alone is 24–39 ms).
 *
 * Keep this module small: a call belongs here only when the hot state path needs it. Flows (worktree,
 * commit, merge, status, doctor, integrate) use the asynchronous equivalents in exec.ts, log.ts, repo.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { TugError } from '../contract/errors.js';
import { canonicalPath } from '../kernel/light.js';
import { sleepSync } from '../util/sleep-sync.js';
import { gitChildEnv, type GitResult } from './env.js';
import { passing, PASSING_WAITS_MS } from './passing.js';
import { parseTrailerLog, TRAILER_LOG_FORMAT, type TrailerCommit } from './trailers.js';

/**
 * Run git synchronously; never throws for a non-zero exit (the caller decides). Throws GitError if git
 * cannot start. The child gets exactly `env` (plus the two settings of env.ts). A call that failed only for
 * a moment (passing.ts: `git worktree list` beside another git's `git worktree add`) is tried again after
 * the same waits as exec.ts's, ~2.5 s at most, paused synchronously.
 */
export function gitSync(args: string[], cwd: string, env: NodeJS.ProcessEnv): GitResult {
  for (let i = 0; ; i++) {
    const r = gitSyncOnce(args, cwd, env);
    if (r.status === 0 || i >= PASSING_WAITS_MS.length || !passing(args, r.stderr)) return r;
    sleepSync(PASSING_WAITS_MS[i]!);
  }
}

function gitSyncOnce(args: string[], cwd: string, env: NodeJS.ProcessEnv): GitResult {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: gitChildEnv(env),
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (r.error) throw new TugError('GitError', { args, reason: r.error.message });
  return { status: r.status ?? 128, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

function gitSyncOk(args: string[], cwd: string, env: NodeJS.ProcessEnv): string {
  const r = gitSync(args, cwd, env);
  if (r.status !== 0) throw new TugError('GitError', { args, stderr: r.stderr, exit_code: r.status, cwd });
  return r.stdout;
}

/** Full object name of a commit-ish, or null when it does not name a commit. */
export function resolveCommitish(cwd: string, rev: string, env: NodeJS.ProcessEnv = {}): string | null {
  const r = gitSync(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], cwd, env);
  return r.status === 0 ? r.stdout.trim() : null;
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/**
 * The commit `refs/heads/<branch>` points at, or null when the branch does not exist. Reads the loose ref,
 * then packed-refs, under the common git directory; a reftable repository, a symbolic ref or an
 * unreadable file falls back to `git rev-parse` (in `cwd`).
 */
export function branchTipFast(
  commonDir: string,
  branch: string,
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): string | null {
  const slow = (): string | null => resolveCommitish(cwd, `refs/heads/${branch}`, env);
  if (existsSync(join(commonDir, 'reftable'))) return slow();
  try {
    const loose = readFileSync(join(commonDir, 'refs', 'heads', ...branch.split('/')), 'utf8').trim();
    return SHA.test(loose) ? loose : slow();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') return slow();
  }
  let packed: string;
  try {
    packed = readFileSync(join(commonDir, 'packed-refs'), 'utf8');
  } catch {
    return null;
  }
  const want = ` refs/heads/${branch}`;
  for (const line of packed.split('\n')) {
    if (line.endsWith(want)) {
      const sha = line.slice(0, line.length - want.length);
      return SHA.test(sha) ? sha : slow();
    }
  }
  return null;
}

/** Whether `ancestor` is in the history of `descendant` (`git merge-base --is-ancestor`); GitError otherwise. */
export function isAncestorSync(
  cwd: string,
  ancestor: string,
  descendant: string,
  env: NodeJS.ProcessEnv = {},
): boolean {
  const args = ['merge-base', '--is-ancestor', ancestor, descendant];
  const r = gitSync(args, cwd, env);
  if (r.status === 0 || r.status === 1) return r.status === 0;
  throw new TugError('GitError', { args, stderr: r.stderr, exit_code: r.status, cwd });
}

/** `git log` arguments listing the Tug trailers of the commits reachable from `refs`. */
export function trailerLogArgs(refs: string[]): string[] {
  return ['log', `--format=${TRAILER_LOG_FORMAT}`, ...refs, '--'];
}

/** Commits reachable from `refs` (deduplicated by git) with Tug-Step trailers, newest first. */
export function listTrailerCommits(
  cwd: string,
  refs: string[],
  env: NodeJS.ProcessEnv = {},
): { scanned: number; commits: TrailerCommit[] } {
  if (refs.length === 0) return { scanned: 0, commits: [] };
  return parseTrailerLog(gitSyncOk(trailerLogArgs(refs), cwd, env));
}

/** Local branch names (`refs/heads/…` without the prefix). */
export function localBranches(cwd: string, env: NodeJS.ProcessEnv = {}): string[] {
  return gitSyncOk(['for-each-ref', '--format=%(refname:strip=2)', 'refs/heads/'], cwd, env)
    .split('\n')
    .filter((l) => l !== '');
}

export interface WorktreeEntry {
  path: string;
  head: string | null;
  branch: string | null;
  bare: boolean;
  prunable: boolean;
}

/**
 * `git worktree list --porcelain -z` output → entries with canonical paths. `-z` (fields end in NUL, records
 * in an empty field) is the form a path holding a newline survives (docs/output.md §5).
 */
export function parseWorktreeList(stdout: string): WorktreeEntry[] {
  const records = stdout.split('\0\0').map((r) => r.split('\0'));
  const out: WorktreeEntry[] = [];
  for (const fields of records) {
    const field = (re: RegExp) => fields.map((f) => re.exec(f)).find(Boolean) ?? null;
    const path = field(/^worktree (.+)$/s)?.[1];
    if (!path) continue;
    out.push({
      path: canonicalPath(path),
      head: field(/^HEAD ([0-9a-f]+)$/)?.[1] ?? null,
      branch: field(/^branch refs\/heads\/(.+)$/s)?.[1] ?? null,
      bare: fields.includes('bare'),
      prunable: fields.some((f) => f.startsWith('prunable')),
    });
  }
  return out;
}

/** The work trees of the repository (canonical roots), from `git worktree list --porcelain -z`. */
export function listWorktrees(repo: { mainRoot: string }, env: NodeJS.ProcessEnv = {}): WorktreeEntry[] {
  const args = ['worktree', 'list', '--porcelain', '-z'];
  const r = gitSync(args, repo.mainRoot, env);
  if (r.status !== 0) throw new TugError('GitError', { args, stderr: r.stderr });
  return parseWorktreeList(r.stdout);
}

/** The repo resolver's fallback (docs/git.md §1) when git's layout cannot be read from the files. */
export function resolveRepoWithGit(
  start: string,
  env: NodeJS.ProcessEnv,
): { worktreeRoot: string; mainRoot: string; commonDir: string; isLinkedWorktree: boolean } {
  const r = gitSync(
    [
      'rev-parse',
      '--is-bare-repository',
      '--is-inside-git-dir',
      '--show-toplevel',
      '--path-format=absolute',
      '--git-common-dir',
      '--absolute-git-dir',
    ],
    start,
    env,
  );
  const lines = r.stdout.split('\n');
  // git answers the first two questions before it fails on --show-toplevel in a bare repository or inside
  // a git directory; `git init`, the usual hint, would make a repository nested in that one there.
  if (lines[0] === 'true')
    throw new TugError(
      'NotAGitRepository',
      { path: start, reason: 'bare repositories have no work tree' },
      { hint: 'run tugcode in a clone of it (git clone <bare> <dir>) or a worktree of it (git worktree add <dir>)' },
    );
  if (lines[1] === 'true')
    throw new TugError(
      'NotAGitRepository',
      { path: start, reason: 'running inside the .git directory' },
      { hint: 'run tugcode from the work tree the .git directory belongs to, or pass -C <work tree>' },
    );
  if (r.status !== 0) {
    const reason = r.stderr.trim().split('\n')[0] || undefined;
    // A linked worktree whose `.git` file names an admin directory that is gone: the main repository was
    // moved (or the worktree was), which `git worktree repair` fixes.
    const moved = /not a git repository: .*[\\/]worktrees[\\/]/.test(reason ?? '');
    throw new TugError(
      'NotAGitRepository',
      { path: start, reason, ...(moved ? { moved: true } : {}) },
      moved
        ? {
            hint: 'the main repository (or this worktree) was moved: from the main checkout run git worktree repair <this worktree>, then try again',
          }
        : {},
    );
  }
  let [top, common, gitDir] = [lines[2], lines[3], lines[4]];
  if (lines.length !== 6) {
    // A path holding a newline spreads over two lines: ask for each path alone.
    const one = (...args: string[]) => {
      const x = gitSync(['rev-parse', ...args], start, env);
      return x.status === 0 ? x.stdout.replace(/\n$/, '') : undefined;
    };
    [top, common, gitDir] = [
      one('--show-toplevel'),
      one('--path-format=absolute', '--git-common-dir'),
      one('--absolute-git-dir'),
    ];
  }
  if (!top || !common || !gitDir) throw new TugError('NotAGitRepository', { path: start });
  const worktreeRoot = canonicalPath(top);
  const commonDir = canonicalPath(common);
  // In the main checkout the git dir is the common dir: it is its own main root, whatever the
  // common dir is called (submodule, --separate-git-dir).
  if (canonicalPath(gitDir) === commonDir)
    return { worktreeRoot, mainRoot: worktreeRoot, commonDir, isLinkedWorktree: false };
  // In a linked worktree the main checkout is the first entry of `git worktree list`. git reports the
  // common dir itself there when it cannot know the main work tree (--separate-git-dir); then only
  // core.worktree can tell, and the common dir's parent is never guessed.
  const wl = gitSync(['worktree', 'list', '--porcelain', '-z'], start, env);
  let mainRoot = wl.status === 0 ? /^worktree ([^\0]+)/.exec(wl.stdout)?.[1] : undefined;
  if (mainRoot && canonicalPath(mainRoot) === commonDir) {
    const cw = gitSync(['config', '--file', join(commonDir, 'config'), '--get', 'core.worktree'], start, env);
    mainRoot = cw.status === 0 && cw.stdout.trim() ? resolve(commonDir, cw.stdout.trim()) : undefined;
  }
  if (!mainRoot) {
    throw new TugError('NotAGitRepository', {
      path: start,
      reason:
        'cannot locate the main checkout of this linked worktree; run from the main checkout or set TUGCODE_STATE_DB',
    });
  }
  return { worktreeRoot, mainRoot: canonicalPath(mainRoot), commonDir, isLinkedWorktree: true };
}
