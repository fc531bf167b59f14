/**
 * Where tugcode keeps its things in a repository, named in one place: the `.tugtool/` directory (plans,
 * config, state.db, locks, logs, the implementation log), the plan worktrees under `.tugtree/`, an agent's
 * `.tug/` directory inside its worktree, the `tugplan/<slug>` branches and the `refs/tugplan/` refs. Paths
 * are repo-relative with `/` (join them onto a root). Pure: nothing here touches the disk or git.
 */
import { join } from 'node:path';

// ── directories ─────────────────────────────────────────────────────────────────────────────────────────

/** tugcode's directory in a checkout: plans in each work tree; config, state and locks in the main one. */
export const TUGTOOL_DIR = '.tugtool';
/** The plan worktrees' directory in the main checkout. */
export const TUGTREE_DIR = '.tugtree';
/** An agent's runtime directory inside its worktree (bin/, tmp/, relay/), shared with the kernel's sessions. */
export const AGENT_DIR = '.tug';

// ── .tugtool/ ──────────────────────────────────────────────────────────────────────────────────────────

/** The embedded state database in the main checkout (TUGCODE_STATE_DB may move it: state/context.ts). */
export const STATE_DB = `${TUGTOOL_DIR}/state.db`;
/** state.db and the files SQLite keeps beside it in WAL mode (also their ignore lines: `state init`). */
export const STATE_DB_FILES: readonly string[] = [STATE_DB, `${STATE_DB}-wal`, `${STATE_DB}-shm`];
/** The configuration, read from the main checkout only. */
export const CONFIG_FILE = `${TUGTOOL_DIR}/config.toml`;
/** The repo-wide integration lock, a lock directory (src/util/integration-lock.ts). */
export const INTEGRATION_LOCK = `${TUGTOOL_DIR}/integration.lock`;
/** The run's logs: `<slug>/<step>-attempt<N>.log`, `<worker>.pgid`, … */
export const LOGS_DIR = `${TUGTOOL_DIR}/logs`;
/** The board's token and port, kept so a restarted board keeps its URL (docs/board.md §2); inside the logs, so git ignores it. */
export const BOARD_FILE = `${LOGS_DIR}/board.json`;
/** One implementation-log entry per step: `<dir>/<slug>/<step-anchor>.md`; the index beside the plans. */
export const IMPLEMENTATION_LOG_DIR = `${TUGTOOL_DIR}/implementation-log`;
export const IMPLEMENTATION_LOG_INDEX_PATH = `${TUGTOOL_DIR}/tugplan-implementation-log.md`;
/** The plan template `tugcode init` writes. */
export const SKELETON_PLAN = `${TUGTOOL_DIR}/tugplan-skeleton.md`;

/** A plan file's name: `tugplan-<slug>.md`. */
export const PLAN_FILE_RE = /^tugplan-(.+)\.md$/;
/** File names in `.tugtool/` that look like plans and are not: the skeleton and the implementation-log index. */
export const RESERVED_PLAN_FILES: readonly string[] = ['tugplan-skeleton.md', 'tugplan-implementation-log.md'];

/** `.tugtool/tugplan-<slug>.md`. */
export function planPathForSlug(slug: string): string {
  return `${TUGTOOL_DIR}/tugplan-${slug}.md`;
}

/** `.tugtool/implementation-log/<slug>/<step-anchor>.md`. */
export function logEntryPath(slug: string, stepAnchor: string): string {
  return `${IMPLEMENTATION_LOG_DIR}/${slug}/${stepAnchor}.md`;
}

/** The logs of one plan's runs: `<main root>/.tugtool/logs/<slug>`. */
export function runLogDir(mainRoot: string, slug: string): string {
  return join(mainRoot, LOGS_DIR, slug);
}

/**
 * The run lock of a plan, a directory in `.tugtool/`: `run-<slug>.lock`. Its stand-ins (made, moved aside) are
 * named by src/util/dir-lock.ts and end in `.lock` too, so the runtime ignore lines and exclude pathspecs
 * cover them.
 */
export function runLockName(slug: string): string {
  return `run-${slug}.lock`;
}

/** The slug a run lock's name (`runLockName(slug)`) holds, or null for any other name. */
export function slugOfRunLock(name: string): string | null {
  return /^run-(.+)\.lock$/.exec(name)?.[1] ?? null;
}

/**
 * The runtime files of the repository, never committed (docs/git.md §2): the state database, the worktrees,
 * the agents' directories, the logs and the locks. Each gives an ignore line and an exclude pathspec.
 */
const RUNTIME: { path: string; dir?: true; glob?: true }[] = [
  ...STATE_DB_FILES.map((path) => ({ path })),
  { path: TUGTREE_DIR, dir: true },
  { path: AGENT_DIR, dir: true },
  { path: LOGS_DIR, dir: true },
  { path: `${TUGTOOL_DIR}/*.lock`, glob: true },
  { path: `${TUGTOOL_DIR}/*.lock`, glob: true, dir: true },
];

/** `.gitignore` / `info/exclude` lines for the runtime files. */
export const RUNTIME_IGNORE_LINES: readonly string[] = RUNTIME.map((r) => (r.dir ? `${r.path}/` : r.path));
/** Exclude pathspecs equivalent to RUNTIME_IGNORE_LINES, for `git status` / `git add -A`. */
export const RUNTIME_EXCLUDE_PATHSPECS: readonly string[] = RUNTIME.map(
  (r) => `:(exclude${r.glob ? ',glob' : ''})${r.path}${r.glob && r.dir ? '/**' : ''}`,
);

/**
 * Whether a top-level entry of `.tugtool/` is written by tugcode itself while it runs (state.db and its
 * journal files, the logs, the locks and what they lock), as opposed to the user's plans and config.
 */
export function isRuntimeEntry(name: string): boolean {
  return (
    /^state\.db(-wal|-shm|-journal)?$/.test(name) ||
    name === 'logs' ||
    name.endsWith('.lock') ||
    name === 'integration' ||
    /^run-[^.]+$/.test(name)
  );
}

// ── .tugtree/ ────────────────────────────────────────────────────────────────────────────────────────

/** A branch's worktree directory name: the branch with `/` → `__`. */
const dirName = (branch: string): string => branch.split('/').join('__');

/** Directory of a branch's worktree: `<main root>/.tugtree/<branch with / → __>`. */
export function worktreeDir(mainRoot: string, branch: string): string {
  return join(mainRoot, TUGTREE_DIR, dirName(branch));
}

/** The name of a plan worktree (`w1`, a timestamp) from its path `…/.tugtree/tugplan__<slug>--<name>`, else null. */
export function worktreeNameOf(path: string): string | null {
  return /\/\.tugtree\/tugplan__.*--([^/]+)$/.exec(path)?.[1] ?? null;
}

/** k of the worktree directory name `tugplan__<slug>--w<k>` (a run's worker), else null. */
export function workerOfDir(name: string, slug: string): number | null {
  return workerOf(name, dirName(`${BRANCH_PREFIX}${slug}--w`));
}

// ── branches and refs ─────────────────────────────────────────────────────────────────────────────────

/** Every branch of tugcode starts so. */
export const BRANCH_PREFIX = 'tugplan/';
/** The plan's integration branch. */
export const integrationBranch = (slug: string): string => `${BRANCH_PREFIX}${slug}`;
/**
 * Where a plan integrates, as messages say it (docs/run.md §1.11): `origin/tugplan/x` on a remote, or a
 * clone's own `tugplan/x of the clone at <owner>`.
 */
export function targetPlace(t: { kind: unknown; where: unknown }, branch: string): string {
  return t.kind === 'remote' ? `${String(t.where)}/${branch}` : `${branch} of the clone at ${String(t.where)}`;
}
/** A branch of `worktree create`: `tugplan/<slug>--<suffix>`. */
export const worktreeBranch = (slug: string, suffix: string): string => `${BRANCH_PREFIX}${slug}--${suffix}`;
/** The branch of a run's worker k. */
export const workerBranch = (slug: string, k: number): string => `${BRANCH_PREFIX}${slug}--w${k}`;
/** The `git for-each-ref` pattern of the plan's worker branches. */
export const workerBranchPattern = (slug: string): string => `refs/heads/${BRANCH_PREFIX}${slug}--w*`;

/** Slugs never contain `--` (docs/plan-format.md), so the names of two plans never collide. */
function workerOf(name: string, prefix: string): number | null {
  if (!name.startsWith(prefix)) return null;
  const k = name.slice(prefix.length);
  return /^\d+$/.test(k) ? Number(k) : null;
}

/** k of a worker branch `tugplan/<slug>--w<k>` of the plan, else null. */
export function workerOfBranch(branch: string, slug: string): number | null {
  return workerOf(branch, `${BRANCH_PREFIX}${slug}--w`);
}

/** Whether `branch` is one of the plan's: its integration branch or a `tugplan/<slug>--<suffix>` branch. */
export function isPlanBranch(branch: string, slug: string): boolean {
  return branch === integrationBranch(slug) || branch.startsWith(`${integrationBranch(slug)}--`);
}

/** True for branches made by `worktree create` (not the integration branch, not a run worker). */
export function isCreateBranch(branch: string, slug?: string): boolean {
  const m = /^tugplan\/([a-z0-9-]+?)--(.+)$/.exec(branch);
  if (!m) return false;
  if (slug !== undefined && m[1] !== slug) return false;
  return !/^w\d+$/.test(m[2]!);
}

/** The refs tugcode itself writes (kept work): never the user's. */
export const TUGPLAN_REFS = 'refs/tugplan/';
/** Where the review gate keeps the commit of a step that needs a human (docs/state.md §3.11). */
export function reviewRefName(slug: string, step: string): string {
  return `${TUGPLAN_REFS}review/${slug}/${step}`;
}
/**
 * Of the plan's review refs (`refs`, full names under `reviewRefName(slug, '')`), those whose step keeps no
 * commit in the state any more (a reset, a forced re-init, a completion found by reconcile cleared it):
 * nothing will integrate or delete them (docs/run.md §6.3). A step still claimed keeps its ref: its attempt
 * may be escalating right now (the ref is written before the state says `needs_human`).
 */
export function staleReviewRefs(
  slug: string,
  refs: readonly string[],
  steps: readonly { anchor: string; status: string; review_commit: string | null }[],
): string[] {
  const prefix = reviewRefName(slug, '');
  const claimed = (s: { status: string }) => s.status === 'claimed' || s.status === 'in_progress';
  const kept = new Set(steps.filter((s) => s.review_commit !== null || claimed(s)).map((s) => s.anchor));
  return refs.filter((r) => r.startsWith(prefix) && !kept.has(r.slice(prefix.length)));
}
/** Where the work of an attempt whose step was completed elsewhere is kept. */
export function keptRef(slug: string, step: string, attempt: number): string {
  return `${TUGPLAN_REFS}kept/${slug}/${step}/attempt${attempt}`;
}
