/**
 * Worker worktrees (docs/run.md §1 item 3): worker k owns `.tugtree/tugplan__<slug>--w<k>` on branch
 * `tugplan/<slug>--w<k>`, created on first use and reused while the run lasts; leftovers of an earlier run
 * are adopted (reset, their claims released). Between steps a worktree is reset to the integration tip;
 * after a creation, or a reset that changed a lockfile, the setup runs (`run.setup_command`, else links to
 * the main checkout's `node_modules` and `.venv`).
 */
import { existsSync, lstatSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { TugError } from '../contract/errors.js';
import {
  TUGTREE_DIR,
  workerBranch,
  workerBranchPattern,
  workerOfBranch,
  workerOfDir,
  worktreeDir,
} from '../contract/layout.js';
import { adminDirOf, linkedWorktreeFault } from '../git/dot-git.js';
import { abortRebase, rebaseInProgress, rebasingBranchOf } from '../gitflow/conflict.js';
import type { GitRunner } from '../git/exec.js';
import type { Repo } from '../git/repo.js';
import { ensureGitignoreLines } from '../util/gitignore.js';
import { StepFailure } from './failure.js';
import { removeDeadLocks } from './stale-locks.js';

const LOCKFILES = ['package-lock.json', 'yarn.lock', 'pnpm-lock.yaml', 'poetry.lock', 'uv.lock'];

export interface WorkerTree {
  worker: string;
  k: number;
  path: string;
  branch: string;
  /**
   * Set right after this tree's step was integrated (or the tree was created): its HEAD, every change
   * committed, nothing untracked.
   */
  integratedHead?: string | undefined;
  /** The integration tip the tree was reset to for the current step (its work sits on it). */
  base?: string | undefined;
}

/**
 * Where the git calls of a worktree's creation wait for their turn: `config` for the branch-config writes
 * (each takes `.git/config`'s lock, and git fails at once instead of waiting), `add` for the worktree list
 * and `git worktree add` (which reads every admin directory under `.git/worktrees/`: a half-made one fails
 * it). The two never touch each other's files, so one tree's config is written while another is added.
 */
export interface TreeTurns {
  config<T>(fn: () => Promise<T>): Promise<T>;
  add<T>(fn: () => Promise<T>): Promise<T>;
}

const NOW: TreeTurns = { config: (fn) => fn(), add: (fn) => fn() };

/** The worktree of worker k: existing (adopted) or created at `tip`. Returns whether it was created. */
export async function workerTree(
  g: GitRunner,
  repo: Repo,
  slug: string,
  planPath: string,
  base: string,
  k: number,
  tip: string,
  turns: TreeTurns = NOW,
): Promise<{ tree: WorkerTree; created: boolean }> {
  const { setBranchPlan } = await import('../git/branch-config.js');
  const branch = workerBranch(slug, k);
  const path = worktreeDir(repo.mainRoot, branch);
  const tree: WorkerTree = { worker: `w${k}`, k, path, branch };
  // A live worktree of an earlier run: its `.git` file names an admin directory that still exists.
  if (adminDirOf(path)) return { tree, created: false };
  // What a failed add puts back (a failed command changes nothing): a leftover branch of ours, without a tree,
  // is moved by `-B` and gets its old tip again; a branch that was not there goes, with its config.
  const { refTip } = await import('../git/ref-files.js');
  const before = await refTip(g, repo.commonDir, repo.mainRoot, branch);
  // The branch config comes first: it is what marks the branch as this run's (ownedWorkerBranches), so a
  // run killed right after `worktree add` leaves a branch the next run recognises and may move.
  try {
    await turns.config(() => setBranchPlan(g, repo.mainRoot, branch, planPath, base));
    await turns.add(async () => {
      // Registered, but its directory is gone: prune it first (read from the admin files, git when unsure).
      const { worktreeRegistered } = await import('../git/ref-files.js');
      const registered =
        worktreeRegistered(repo.commonDir, path) ??
        (await (await import('../git/repo.js')).gitWorktrees(g, repo)).some((w) => w.path === path);
      if (registered) await g.tryRun(['worktree', 'prune'], repo.mainRoot);
      // `-B` moves an existing branch: only ever one of ours (leftoverTrees refused any other at the start).
      // Checked out: a claim reads the plan from the worker's tree.
      try {
        await g.run(['worktree', 'add', '--quiet', '--force', '--no-track', '-B', branch, path, tip], repo.mainRoot);
      } catch (e) {
        throw await addFailure(g, repo.mainRoot, path, e);
      }
    });
  } catch (e) {
    await undoTree(g, repo, { path, branch, before }, turns);
    throw e;
  }
  // A fresh checkout of `tip`, nothing else in it: its first reset needs neither a HEAD lookup nor a clean.
  tree.integratedHead = tip;
  return { tree, created: true };
}

/**
 * The error of a `git worktree add` that failed. git runs post-checkout once the new tree is checked out, and
 * says nothing of its own when that refuses: a tree there and a hook to run mean the hook refused, and the
 * error names it (docs/git.md §3); `hook: null` when there is none, so no hook is guessed at.
 */
async function addFailure(g: GitRunner, mainRoot: string, path: string, e: unknown): Promise<unknown> {
  if (!(e instanceof TugError) || e.code !== 'GitError') return e;
  const { hookFile } = await import('../gitflow/hooks.js');
  const hook = existsSync(join(path, '.git')) ? await hookFile(g, mainRoot, 'post-checkout') : null;
  return new TugError('GitError', { ...e.details, ...(hook ? { hook, hook_name: 'post-checkout' } : { hook: null }) });
}

/**
 * Undoes a worker tree whose creation failed (half made: git checked it out, then its post-checkout hook
 * refused): the tree, and the branch and its config unless the branch was there before (then its old tip).
 * Each in its turn, as the creation was (TreeTurns).
 */
async function undoTree(
  g: GitRunner,
  repo: Repo,
  t: { path: string; branch: string; before: string | null },
  turns: TreeTurns,
): Promise<void> {
  await turns.add(async () => {
    await g.tryRun(['worktree', 'remove', '--force', '--force', t.path], repo.mainRoot);
    if (existsSync(t.path)) {
      rmSync(t.path, { recursive: true, force: true });
      await g.tryRun(['worktree', 'prune'], repo.mainRoot);
    }
  });
  if (t.before) {
    await g.tryRun(['update-ref', `refs/heads/${t.branch}`, t.before], repo.mainRoot);
    return;
  }
  await turns.config(async () => {
    // `git branch -D` also drops the branch's config section (tugplan/tugbase); when git never made the
    // branch, the section goes alone.
    await g.tryRun(['branch', '-D', t.branch], repo.mainRoot);
    await g.tryRun(['config', '--remove-section', `branch.${t.branch}`], repo.mainRoot);
  });
}

/**
 * The worker branches of the plan (`tugplan/<slug>--w<k>`) that a run made: their branch config names
 * this plan (docs/git.md §3; `worktree create` never makes a `w<k>` name, naming.ts). A branch of such a name
 * without it is someone else's, and `run` never moves, resets or deletes it.
 */
async function ownedWorkerBranches(g: GitRunner, repo: Repo, slug: string): Promise<Set<string>> {
  const { listBranchPlans } = await import('../git/branch-config.js');
  const { slugOfPlanPath } = await import('../plan/resolve.js');
  return new Set(
    (await listBranchPlans(g, repo.mainRoot))
      .filter((b) => workerOfBranch(b.branch, slug) !== null && slugOfPlanPath(b.plan_path) === slug)
      .map((b) => b.branch),
  );
}

/**
 * Worker worktrees of this plan left by an earlier run (any k): the run's own (branch config, and the
 * tree in the run's directory for that branch). `foreign: 'refuse'` (the run's start, before it changes
 * anything) refuses a worker branch that the run did not make, or a worker branch checked out elsewhere,
 * with WorktreeExists; `'skip'` (the end-of-run clean-up) leaves them alone.
 */
export async function leftoverTrees(
  g: GitRunner,
  repo: Repo,
  slug: string,
  o: { foreign: 'refuse' | 'skip' } = { foreign: 'refuse' },
): Promise<WorkerTree[]> {
  const { allRefs, worktreeBranches } = await import('../git/ref-files.js');
  // From git's ref files when they can say (ref-files.ts), as the outside snapshot reads them: one git
  // process fewer at each end of a run. workerOfBranch keeps what the pattern's `*` matches (digits, no `/`).
  const refs = await allRefs(repo.commonDir);
  const heads = 'refs/heads/';
  const listed = refs
    ? [...refs.keys()].filter((r) => r.startsWith(heads)).map((r) => r.slice(heads.length))
    : (await g.run(['for-each-ref', '--format=%(refname:strip=2)', workerBranchPattern(slug)], repo.mainRoot)).split(
        '\n',
      );
  const names = listed.filter((b) => workerOfBranch(b, slug) !== null).sort();
  if (names.length === 0) return [];
  const owned = await ownedWorkerBranches(g, repo, slug);
  const trees =
    worktreeBranches(repo.commonDir, repo.mainRoot) ?? (await (await import('../git/repo.js')).gitWorktrees(g, repo));
  const foreign: { branch: string; reason: string; path?: string }[] = names
    .filter((b) => !owned.has(b))
    .map((b) => ({ branch: b, reason: `branch ${b} exists and was not made by tugcode run for this plan` }));
  const out: WorkerTree[] = [];
  const moved: WorkerTree[] = [];
  for (const t of trees) {
    // A worker tree a killed run left mid-rebase (a conflict in the resolver's hands, docs/run.md §1.9) has a
    // detached HEAD: it is still its worker branch's, and the reset that adopts it aborts the rebase.
    const w = t.branch === null ? { ...t, branch: rebasingBranchOf(t.path) } : t;
    // The run's directory for worker k with another branch (or none) checked out: the run would reset it.
    const d = workerOfDir(basename(w.path), slug);
    if (d !== null && dirname(w.path) === join(repo.mainRoot, TUGTREE_DIR) && w.branch !== workerBranch(slug, d)) {
      // The run's own tree (its worker branch is the run's) that an agent switched to a branch of its own or
      // detached: adopted, and the reset puts it back on its worker branch (docs/run.md §1.1 item 3).
      const mine = workerBranch(slug, d);
      if (owned.has(mine) && !trees.some((o) => o.branch === mine)) {
        out.push({ worker: `w${d}`, k: d, path: w.path, branch: mine });
        continue;
      }
      const what = w.branch ? `branch ${w.branch}` : 'a detached HEAD';
      foreign.push({ branch: workerBranch(slug, d), path: w.path, reason: `${w.path} has ${what} checked out` });
      continue;
    }
    const branch = w.branch;
    const k = branch ? workerOfBranch(branch, slug) : null;
    if (k === null || !owned.has(branch!)) continue;
    const dir = worktreeDir(repo.mainRoot, branch!);
    if (w.path !== dir && !existsSync(w.path) && existsSync(dir)) {
      // The clone moved on disk with its worker trees inside: git's links still name the old place.
      moved.push({ worker: `w${k}`, k, path: dir, branch: branch! });
      continue;
    }
    if (w.path !== dir) {
      foreign.push({ branch: branch!, path: w.path, reason: `branch ${branch} is checked out in ${w.path}` });
      continue;
    }
    if (existsSync(w.path)) out.push({ worker: `w${k}`, k, path: w.path, branch: branch! });
  }
  if (moved.length > 0) {
    // git mends both directions of each link (docs/run.md §1.6); the trees are then the run's as before.
    await g.run(['worktree', 'repair', ...moved.map((t) => t.path)], repo.mainRoot);
    out.push(...moved);
  }
  const first = foreign[0];
  if (first && o.foreign === 'refuse') {
    const { shellArg } = await import('../util/shell-arg.js');
    throw new TugError('WorktreeExists', {
      reason: `${first.reason}; tugcode run uses that name for its worker ${first.branch.replace(/^.*--/, '')}`,
      branch: first.branch,
      ...(first.path ? { worktree_path: first.path } : {}),
      branches: foreign.map((f) => f.branch),
      hint: first.path
        ? `git -C ${shellArg(first.path)} switch <another-branch>, then run again`
        : `rename it (git branch -m ${shellArg(first.branch)} <new-name>), then run again`,
    });
  }
  return out;
}

/**
 * `git reset --hard <tip>` + `git clean -fd`: the tree is the worker's own and holds no uncommitted work
 * between steps. Returns whether a lockfile changed (the setup then runs again).
 */
export async function resetTree(
  g: GitRunner,
  tree: Pick<WorkerTree, 'path' | 'branch'>,
  tip: string,
  /**
   * What the caller knows: the tree's HEAD, and that it is clean (right after its own step was integrated,
   * every change is committed), so neither the HEAD lookup nor `git clean` is needed, and nothing at all
   * when HEAD is the tip already.
   */
  known?: { head: string; clean: true },
  /** Told when a stale `index.lock` was removed, so the run can say so (a warning). */
  onLockRemoved?: (lock: string) => void,
  /** Told when HEAD was on another branch (null: detached) and was put back on the worker branch. */
  onSwitched?: (from: string | null) => void,
): Promise<boolean> {
  const { path, branch } = tree;
  // Never `reset --hard` / `clean` a directory that is not this worktree (git would find the main checkout).
  guardTree(path);
  for (const removed of clearStaleLocks(path, branch)) onLockRemoved?.(removed);
  // A rebase left stopped (a failed or killed resolution, docs/run.md §1.9): the branch back first, so the
  // reset moves the branch and not a detached HEAD, and the next rebase can start.
  if (rebaseInProgress(path)) {
    await abortRebase(g, path);
    known = undefined;
  }
  // An agent that switched the tree to a branch of its own (or detached HEAD): a `reset --hard` would move
  // that branch, and the tree would stay off its worker branch for good (docs/run.md §1.1 items 3, 4.9). It
  // goes back on the worker branch, at the tip; the agent's branch stays as it is (never deleted silently).
  const head = headOf(path);
  const off = head !== `refs/heads/${branch}`;
  if (off) known = undefined;
  if (known && known.head === tip) return false;
  const before = known?.head ?? (await g.tryRun(['rev-parse', '--verify', '--quiet', 'HEAD'], path)).stdout.trim();
  try {
    if (off) await g.run(['checkout', '--quiet', '--force', '--no-track', '-B', branch, tip], path);
    else await g.run(['reset', '--quiet', '--hard', tip], path);
    if (!known) await g.run(['clean', '-fdq'], path);
  } catch (e) {
    const locked = lockFault(path, String((e as { details?: { stderr?: unknown } }).details?.stderr ?? ''));
    if (locked) throw new StepFailure('WorktreeBroken', locked);
    throw e;
  }
  if (off) onSwitched?.(head?.startsWith('refs/heads/') ? head.slice('refs/heads/'.length) : null);
  if (!before || before === tip) return false;
  const changed = await g.tryRun(
    ['diff', '--name-only', before, tip, '--', ...LOCKFILES.map((f) => `:(glob)**/${f}`)],
    path,
  );
  return changed.stdout.trim() !== '';
}

/** The ref the worktree's HEAD names (`refs/heads/…`), or null when it is detached or unreadable. */
function headOf(path: string): string | null {
  const admin = adminDirOf(path);
  if (!admin) return null;
  try {
    const m = /^ref: (\S+)/.exec(readFileSync(join(admin, 'HEAD'), 'utf8'));
    return m ? m[1]! : null;
  } catch {
    return null;
  }
}

/**
 * Link the main checkout's `node_modules` and `.venv` into the worktree when it has none of its own. The
 * links are excluded in the shared `info/exclude` first: a `node_modules/` ignore line matches directories
 * only, and a link is not one, so `git add -A` would otherwise commit an absolute symlink.
 */
export function linkDependencies(mainRoot: string, commonDir: string, path: string): void {
  ensureGitignoreLines(join(commonDir, 'info', 'exclude'), ['/node_modules', '/.venv']);
  for (const name of ['node_modules', '.venv']) {
    const src = join(mainRoot, name);
    const dst = join(path, name);
    if (!existsSync(src)) continue;
    try {
      lstatSync(dst);
      continue; // there already (a link, or the worktree's own)
    } catch {
      symlinkSync(src, dst, 'dir');
    }
  }
}

/**
 * Before a step's commit, when the integration tip moved on from the tree's `base` (another worker
 * integrated while this one worked): move the uncommitted work onto `tip` with `git reset --keep`, so the
 * commit sits on the tip and integrating it is a fast-forward instead of a rebase. Only when HEAD is still
 * `base` (no commits of the implementer's own, which the reset would drop from the branch). git refuses
 * when a file changed both here and on the way to `tip`, or an untracked file is in the way; then the tree
 * is left as it was, and the integration rebases the commit as before. Returns whether it moved.
 */
export async function catchUpTree(g: GitRunner, tree: WorkerTree, tip: string | null): Promise<boolean> {
  if (!tip || !tree.base || tip === tree.base) return false;
  const { headTip } = await import('../git/ref-files.js');
  if ((await headTip(g, tree.path)) !== tree.base) return false;
  const r = await g.tryRun(['reset', '--keep', '--quiet', tip], tree.path);
  if (r.status !== 0) return false;
  tree.base = tip;
  return true;
}

/**
 * Workers' worktrees and their branches, removed (best effort: any may already be gone). The trees one at a
 * time, then every branch in one `git branch -D` (it deletes each it can and names the others), so the end
 * of a run costs one git process per tree, not two.
 */
export async function removeTrees(g: GitRunner, mainRoot: string, trees: WorkerTree[]): Promise<void> {
  if (trees.length === 0) return;
  for (const t of trees) await g.tryRun(['worktree', 'remove', '--force', t.path], mainRoot);
  await g.tryRun(['branch', '-D', ...trees.map((t) => t.branch)], mainRoot);
}

/**
 * Why the directory at `path` is not a linked worktree git would run in as itself (null when it is): gone,
 * its `.git` file missing or naming no admin directory, or an admin directory that does not point back at
 * it. Without its `.git` file, git in that directory finds the repository around it, the main checkout,
 * and a reset or commit there would change the user's work (docs/git.md §3: the driver acts only in the
 * worktrees it owns).
 */
export function treeFault(path: string): string | null {
  if (!existsSync(path)) return `the worker worktree ${path} is gone (removed during the run)`;
  const fault = linkedWorktreeFault(path);
  const dotGit = join(path, '.git');
  switch (fault?.kind) {
    case undefined:
      return null;
    case 'no-git-file':
      return `${dotGit} is missing or not a file: the worker worktree is no longer a git worktree`;
    case 'no-admin-dir':
      return `${dotGit} names no git admin directory (was it pruned?)`;
    case 'not-admin-dir':
      return `${fault.admin} is not a worktree admin directory`;
    case 'foreign-admin-dir':
      return `${dotGit} points at ${fault.admin}, which belongs to another worktree`;
  }
}

/** The WorktreeBroken failure of a tree git may not act on as itself (treeFault), or null. */
export function brokenTree(path: string, anchor?: string): StepFailure | null {
  const fault = treeFault(path);
  return fault
    ? new StepFailure('WorktreeBroken', `${anchor ? `${anchor}: ` : ''}${fault}; the worker recreates its worktree`)
    : null;
}

/** Throws WorktreeBroken when `path` is not a worktree git may act on as itself (treeFault). */
export function guardTree(path: string): void {
  const broken = brokenTree(path);
  if (broken) throw broken;
}

/** The worktree's `index.lock` (in its admin directory), when the tree has one. */
function indexLockOf(path: string): string | null {
  const admin = adminDirOf(path);
  return admin ? join(admin, 'index.lock') : null;
}

/**
 * An `index.lock` left in the worker's worktree makes every git that writes the index fail, and a
 * `HEAD.lock` or the worker branch's ref lock (`refs/heads/<branch>.lock`) every git that moves it (a git
 * killed mid-write by a signal leaves them, docs/run.md §1.6). One older than this run (its driver
 * process) that no process holds open was left by a git that died: the driver removes it, for its own
 * worker worktrees and branches only (the run lock keeps every other run of the plan away). Any other is
 * reported (lockFault) and the attempt fails. Returns the paths removed.
 */
export function clearStaleLocks(path: string, branch?: string, runStartMs = performance.timeOrigin): string[] {
  const admin = adminDirOf(path);
  if (!admin) return [];
  const locks = [join(admin, 'index.lock'), join(admin, 'HEAD.lock')];
  // The admin directory is <common dir>/worktrees/<name>; the branch's ref lives in the common one.
  if (branch) locks.push(join(dirname(dirname(admin)), 'refs', 'heads', ...branch.split('/')) + '.lock');
  return removeDeadLocks(locks, runStartMs);
}

/**
 * The reason of an attempt that found the worktree's `index.lock` (from git's stderr), naming the file
 * and the fix; null when the error is not about it.
 */
export function lockFault(path: string, stderr: string): string | null {
  const m = /Unable to create '([^']*index\.lock)': File exists/.exec(stderr);
  if (!m && !(indexLockOf(path) && existsSync(indexLockOf(path)!))) return null;
  const lock = m?.[1] ?? indexLockOf(path)!;
  return (
    `${lock} exists, so git cannot write the index of ${basename(path)}: another git is running there, or ` +
    `one crashed and left it. When no git runs there, remove it (rm ${lock}); a run started later removes ` +
    `it by itself when no process holds it`
  );
}

/**
 * Before a claim: when the worker's worktree is gone or not its own any more (treeFault), it is removed and
 * made again at the integration tip. Returns whether it was (the setup then runs again).
 */
export async function ensureWorkerTree(
  g: GitRunner,
  repo: Repo,
  plan: { slug: string; planPath: string; base: string },
  tree: WorkerTree,
  tip: () => Promise<string>,
): Promise<boolean> {
  if (!treeFault(tree.path)) return false;
  // What is left there is a failed attempt's files (or nothing): not a worktree git may clean.
  rmSync(tree.path, { recursive: true, force: true });
  const made = await workerTree(g, repo, plan.slug, plan.planPath, plan.base, tree.k, await tip());
  tree.integratedHead = made.tree.integratedHead;
  tree.base = undefined;
  return true;
}
