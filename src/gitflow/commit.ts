/**
 * `tugcode commit` and the driver's commit of a step (docs/git.md §4, docs/git.md §4.1): the
 * git commit is the source of truth, the state completion the coordination record. Everything that can
 * refuse is decided before a file is written; a failing `git add`/`git commit` restores the index and the
 * log entry. Once the commit exists, integration or completion failures are reported
 * (`state_update_failed`) with exit 0, and `state reconcile` heals them later from the trailers.
 */
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fail, type ErrorEnvelope } from '../contract/envelope.js';
import { toTugError, TugError } from '../contract/errors.js';
import { shellArg } from '../util/shell-arg.js';
import { writeEntry } from './implementation-log.js';
import { requireAnchor } from '../plan/anchors.js';
import { getBranchPlan } from '../git/branch-config.js';
import { gitRunner, type GitRunner } from '../git/exec.js';
import type { FlowCtx } from './flow-context.js';
import { createIntegrationBranch, integrate } from './integrate.js';
import { integrationBranch, logEntryPath } from '../contract/layout.js';
import { slugOfPlan } from './naming.js';
import { resolvePlanPath } from './plan-file.js';
import { gitDirsOf } from '../git/dot-git.js';
import { headTip } from '../git/ref-files.js';
import { operationInProgress } from '../git/in-progress.js';
import {
  branchExists,
  currentBranch,
  isAncestor,
  requireGitVersion,
  resolveCommit,
  statusDetails,
  type StatusEntry,
} from '../git/refs.js';
import { resolveWorktreeArg } from '../git/repo.js';
import { ALL_BUT_RUNTIME } from '../git/runtime-files.js';
import * as state from './state-bridge.js';
import { timed, type TraceFn } from '../git/trace.js';
import { withTugTrailers, type TrailerSpec } from '../git/trailer-write.js';
import { TUG_PLAN, TUG_REFACTOR, TUG_STEP } from '../git/trailers.js';

/** `tugcode commit`: commit the step, then integrate and complete it. */
export interface CommitInput {
  worktree?: string | undefined;
  plan: string;
  step: string;
  /** Left out: HEAD's message when HEAD is the step's commit not yet integrated (docs/git.md §4.2). */
  message?: string | undefined;
  summary?: string | undefined;
  attempt?: number | undefined;
  integrate?: boolean | undefined;
  allowMain?: boolean | undefined;
  allowEmpty?: boolean | undefined;
}

/**
 * The driver's commit of a step (docs/git.md §4 steps 1–4: log entry, trailers, commit): the driver integrates
 * and completes itself. It always commits, changes or not (the step's commit records the step); it does not
 * start git's auto maintenance (`git maintenance run --auto`, a process of its own after every commit: the
 * driver runs it once after the run) and does not list the staged files (one git process less).
 */
export interface StepCommitInput {
  worktree: string;
  plan: string;
  step: string;
  message: string;
  attempt?: number | undefined;
  /** The branch checked out in the worktree (the driver's worker branch). */
  branch: string;
  /** The step's title (the driver parsed the plan already): the plan is not read again. */
  stepTitle: string;
  /** The message made ahead by prepareMessage (used when its trailers still match). */
  prepared?: PreparedMessage | undefined;
  /** Extra `Tug-Refactor:` trailer values beside the applied rows (docs/kernel.md §7.4). */
  refactors?: string[] | undefined;
  /** The opt-in timing trace of the commit's parts. */
  trace?: TraceFn | undefined;
  /** Skip the pre-commit and commit-msg hooks (`run.no_verify`, docs/run.md §2). */
  noVerify?: boolean | undefined;
  /** The runner for this commit's git calls (the driver's is bounded by the step timeout, bounded.ts). */
  git?: GitRunner | undefined;
  /** git has no `trailer.*` configuration (the driver read it once): trailers need no git (trailer-write.ts). */
  trailersUnconfigured?: boolean | undefined;
}

/** What the driver's commit made. */
export interface StepCommit {
  commit_hash: string;
  branch: string;
  log_entry_path: string;
}

export type StateFailureReason =
  'open_items' | 'substeps' | 'refactors' | 'ownership' | 'drift' | 'integration_conflict' | 'db_error';

export interface CommitData {
  committed: boolean;
  commit_hash: string;
  branch: string;
  files_staged: string[];
  log_entry_path: string;
  integrated: boolean;
  integration_branch: string | null;
  state_updated: boolean;
  state_update_failed: boolean;
  state_failure_reason: StateFailureReason | null;
  state_error: ErrorEnvelope | null;
  plan_completed: boolean;
}

/** Which `state_failure_reason` an error of the completion (or integration) path maps to. */
function failureReason(e: TugError): StateFailureReason {
  switch (e.code) {
    case 'ChecklistIncomplete':
      return 'open_items';
    case 'SubstepsIncomplete':
      return 'substeps';
    case 'RefactorsIncomplete':
      return 'refactors';
    case 'NotOwner':
    case 'LeaseExpired':
    case 'AttemptMismatch':
    case 'InvalidTransition':
      return 'ownership';
    case 'PlanDrift':
    case 'PlanNotFound':
      return 'drift';
    case 'MergeConflict':
      return 'integration_conflict';
    default:
      return 'db_error';
  }
}

/** Why `git add`/`git commit` refused, from its message (and the hooks present); 'other' when unknown. */
export type CommitFailCause = 'hook' | 'signing' | 'sparse_checkout' | 'index_lock' | 'identity' | 'other';

const CAUSES: [RegExp, CommitFailCause][] = [
  [/gpg failed|failed to sign|ssh-keygen|signing (?:key|failed)|gpg\.ssh|user\.signingkey/i, 'signing'],
  [/sparse-checkout|sparse checkout/i, 'sparse_checkout'],
  [/index\.lock/, 'index_lock'],
  [/tell me who you are|unable to auto-detect email|empty ident name|user\.email/i, 'identity'],
];

/**
 * What to do, per cause. A hook's refusal is fixed and the same `tugcode commit` run again: a plain
 * `git commit --no-verify` would commit the index tugcode put back, without the trailers and the log entry,
 * and `tugcode commit` has no way to skip the project's hooks (`run.no_verify` is the driver's, docs/run.md §2).
 */
const HINTS: Record<CommitFailCause, (W: string, stderr: string, hooks: string[]) => string> = {
  hook: (W, stderr, hooks) =>
    stderr
      ? 'fix what the hook reports (its first line is above; --json gives all of it in error.details.stderr), then run the same tugcode commit again'
      : `the hook refused without a word: run it by hand in ${shellArg(W)} to see why (${hooks.map((h) => handRun(W, h)).join('; ') || handRun(W, 'pre-commit')}), fix that, then run the same tugcode commit again`,
  signing: () =>
    'commit.gpgsign is on but signing failed: set user.signingkey (and gpg.format) to a usable key, or git config commit.gpgsign false',
  sparse_checkout: (W) =>
    `the change lies outside the sparse-checkout definition of ${W}: git -C ${shellArg(W)} sparse-checkout disable (or add the paths)`,
  // git names the lock it could not create; a linked worktree's lies in the main .git/worktrees/<name>/,
  // not under its `.git`, which is a file.
  index_lock: (W, stderr) =>
    `another git process holds the index of ${W}; when none runs, delete the stale lock: rm ${shellArg(/Unable to create '([^']*index\.lock)'/.exec(stderr)?.[1] ?? join(W, '.git', 'index.lock'))}`,
  identity: () => 'git config user.name "Your Name" && git config user.email you@example.com',
  other: () => "see git's message above",
};

/**
 * A commit hook run by hand: the message hooks read the message from a file named by their first argument
 * (githooks(5)), so that is given too.
 */
function handRun(W: string, hook: string): string {
  const run = `git -C ${shellArg(W)} hook run ${hook}`;
  return hook === 'pre-commit' ? run : `${run} -- <a file holding the message>`;
}

/** The pre-commit, prepare-commit-msg and commit-msg hooks that git would run in `W`, those that exist. */
async function commitHooksPresent(g: GitRunner, W: string): Promise<string[]> {
  const r = await g.tryRun(['rev-parse', '--git-path', 'hooks'], W);
  const conf = await g.tryRun(['config', '--get', 'core.hooksPath'], W);
  const dir = conf.status === 0 && conf.stdout.trim() ? resolve(W, conf.stdout.trim()) : resolve(W, r.stdout.trim());
  return ['pre-commit', 'prepare-commit-msg', 'commit-msg'].filter((h) => {
    try {
      return (statSync(join(dir, h)).mode & 0o111) !== 0;
    } catch {
      return false;
    }
  });
}

/**
 * CommitFailed for a GitError of `git add`/`git commit`, with its cause and what to do; DiskFull when git
 * could not write for want of space (no hook's doing, and no fault of the commit: docs/errors.md).
 */
export async function commitFailed(g: GitRunner, W: string, e: TugError, o: { noVerify: boolean }): Promise<TugError> {
  const full = toTugError(e);
  if (full.code === 'DiskFull') return full;
  const stderr = String(e.details.stderr ?? e.details.reason ?? '').trim();
  let cause: CommitFailCause = CAUSES.find(([re]) => re.test(stderr))?.[1] ?? 'other';
  const hooks = cause === 'other' && !o.noVerify ? await commitHooksPresent(g, W) : [];
  if (hooks.length > 0) cause = 'hook';
  return new TugError(
    'CommitFailed',
    { worktree: W, cause, args: e.details.args, stderr, exit_code: e.details.exit_code },
    { hint: HINTS[cause](W, stderr, hooks), cause: e },
  );
}

/** The paths of status entries, sorted and unique. */
function pathsOf(entries: StatusEntry[]): string[] {
  return [...new Set(entries.map((e) => e.path))].sort();
}

/**
 * `git add -A` of everything but the runtime files. The paths come from `git status` with the runtime
 * exclude pathspecs (which status accepts), and are staged literally: git 2.39 refuses
 * `git add -A -- . ':(exclude)<p>'` when <p> exists and is ignored — `.tug/` after any kernel call,
 * `state.db` in the main checkout — so the exclusions never reach `git add` itself.
 */
export async function stageAllButRuntime(
  g: GitRunner,
  W: string,
  known?: StatusEntry[],
  also: string[] = [],
): Promise<void> {
  // Only paths whose work tree differs from the index: an entry staged already (`D `, `R `) may name a
  // path that is in neither, which git add would refuse as a pathspec matching nothing.
  const entries = known ?? (await statusDetails(g, W, { pathspec: ALL_BUT_RUNTIME }));
  const paths = [...new Set([...pathsOf(entries.filter((e) => e.xy[1] !== ' ')), ...also])].sort();
  // An empty pathspec list would mean "everything" to git add.
  if (paths.length === 0) return;
  await g.run(['add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'], W, {
    input: paths.join('\0'),
    env: { GIT_LITERAL_PATHSPECS: '1' },
  });
}

/** The step's title from the plan in the work tree; StepNotFound when the plan has no such step. */
async function stepTitleOf(W: string, planPath: string, step: string): Promise<string> {
  const { parsePlan } = await import('../plan/parse.js');
  const stepRow = parsePlan(readFileSync(join(W, planPath))).steps.find((s) => s.anchor === step);
  if (!stepRow) throw new TugError('StepNotFound', { plan_path: planPath, step_anchor: step });
  return stepRow.title;
}

/**
 * The index file of the work tree at `W` without a git process: `<git dir>/index` (dot-git.ts). Null when
 * the files cannot say (then git is asked).
 */
function indexPathOf(W: string): string | null {
  const dirs = gitDirsOf(W);
  return dirs ? join(dirs.gitDir, 'index') : null;
}

/** The directories from `dir` up to (not including) `root` that do not exist yet, deepest first. */
function missingDirs(root: string, dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; d !== root && d.startsWith(root) && !existsSync(d); d = dirname(d)) out.push(d);
  return out;
}

function removeEmptyDirs(dirs: string[]): void {
  for (const d of dirs) {
    try {
      if (readdirSync(d).length === 0) rmdirSync(d);
    } catch {
      /* gone already, or not empty */
    }
  }
}

/** The Tug-* trailers of a step commit: one Tug-Refactor per applied refactor row, in ordinal order, from state.db (docs/kernel.md §7.4). */
async function stepTrailers(ctx: FlowCtx, ref: state.StepRef, extra: string[] = []): Promise<TrailerSpec[]> {
  const applied = await state.refactorTrailers(ctx, ref);
  const refactors = [...applied, ...extra.filter((r) => !applied.includes(r))];
  return [
    { key: TUG_STEP, value: ref.step },
    { key: TUG_PLAN, value: ref.planPath },
    ...refactors.map((r) => ({ key: TUG_REFACTOR, value: r })),
  ];
}

function messageKey(message: string, trailers: TrailerSpec[]): string {
  return JSON.stringify([message, trailers]);
}

/** A step commit's message with its trailers, made ahead of the commit; used when the trailers still match. */
export interface PreparedMessage {
  key: string;
  message: string;
}

/**
 * The message `commitStepOnly` would write for this step, made ahead (the driver: while the implementer runs,
 * off the step's critical path). commitStepOnly reads the trailers again and makes the message itself when
 * they changed meanwhile (a refactor applied by the implementer). `planPath` is repo-relative.
 */
export async function prepareMessage(
  ctx: FlowCtx,
  input: {
    worktree: string;
    planPath: string;
    step: string;
    message: string;
    attempt?: number | undefined;
    trailersUnconfigured?: boolean | undefined;
  },
): Promise<PreparedMessage> {
  const ref = { planPath: input.planPath, step: input.step, worktree: input.worktree, attempt: input.attempt };
  const trailers = await stepTrailers(ctx, ref);
  const message = await withTugTrailers(gitRunner(ctx.env), input.message, trailers, input.worktree, {
    unconfigured: input.trailersUnconfigured,
  });
  return { key: messageKey(input.message, trailers), message };
}

/** `tugcode commit`: the step's commit (or its earlier one left off the integration branch), integrated and completed. */
export async function commitStep(ctx: FlowCtx, input: CommitInput): Promise<CommitData> {
  const g = gitRunner(ctx.env);
  await requireGitVersion(g);
  const t = await commitTarget(ctx, g, input);
  // Decided first: when it fires, nothing has been written.
  const changes = await changesIn(g, t.W);
  const finish: FinishTarget = {
    W: t.W,
    branch: t.branch,
    planPath: t.planPath,
    step: t.step,
    integ: integrationBranch(t.slug),
    attempt: input.attempt,
    integrate: input.integrate,
  };
  // This clone's branch is where a commit integrates: refused here, before anything is written, when the
  // plan integrates elsewhere (a remote, another clone; docs/run.md §1.11).
  if (input.integrate || (await branchExists(g, ctx.repo.mainRoot, finish.integ)))
    await state.localTarget(ctx, { planPath: t.planPath, worktree: t.W, integ: finish.integ }, 'check');
  await refuseOpenRefactors(ctx, t, input);
  // HEAD is this step's commit that an earlier `tugcode commit` left off the integration branch (a
  // completion blocker, a conflict resolved by a rebase): a second commit of the step would only repeat its
  // Tug-Step (docs/git.md §4.2).
  const pending = await unintegratedStepHead(g, t.W, { ...finish, integrate: Boolean(input.integrate) });
  if (changes.length === 0) {
    // Nothing new: integrate and complete that commit instead, `--allow-empty` or not.
    if (pending)
      return finishStep(ctx, g, finish, {
        ...emptyData(pending, t.branch, logEntryPath(t.slug, t.step)),
        committed: false,
      });
    if (!input.allowEmpty) throw new TugError('NothingToCommit', { worktree: t.W });
  }
  // New changes over it: the step's commit is made again over them (soft reset to its parent, its message
  // unless --message is given), as the driver does for a REVISE round (docs/run.md §6.2), so the step
  // stays one commit whose log entry lists all its files.
  const message = input.message ?? (pending ? await g.run(['log', '-1', '--format=%B', pending, '--'], t.W) : null);
  if (message === null)
    throw new TugError(
      'InvalidArgument',
      { reason: '--message is required: HEAD is not a commit of this step awaiting integration', worktree: t.W },
      { hint: 'pass --message <text> (or --message-file <path>)' },
    );
  const made = await writeCommit(ctx, g, t, changes, {
    ...input,
    message,
    ...(pending && input.message === undefined && input.summary === undefined
      ? { summary: previousSummary(t.W, logEntryPath(t.slug, t.step)) }
      : {}),
    remake: pending ?? undefined,
    autoMaintenance: true,
    listStaged: true,
    noVerify: false,
  });
  return finishStep(ctx, g, finish, { ...emptyData(made.hash, t.branch, made.logRel), files_staged: made.staged });
}

/** The summary of the step's log entry in the work tree, when it has one (kept when the commit is made again). */
function previousSummary(W: string, logRel: string): string | undefined {
  try {
    const m = /^## Summary\n\n([\s\S]*?)\n\n## Files changed$/m.exec(readFileSync(join(W, logRel), 'utf8'));
    return m?.[1] || undefined;
  } catch {
    return undefined;
  }
}

/**
 * RefactorsIncomplete before anything is written when a refactor row of the step is neither applied nor
 * skipped: the step's commit must carry the refactor and its `Tug-Refactor` trailer (docs/git.md §4,
 * docs/kernel.md §7.4). Committed first and completed later, the rename would land uncommitted in the
 * worktree while the step counted as done, and merge would ship without it.
 */
async function refuseOpenRefactors(ctx: FlowCtx, t: CommitTarget, input: CommitInput): Promise<void> {
  const ref = { planPath: t.planPath, step: t.step, worktree: t.W, attempt: input.attempt };
  const open_refactors = await state.openRefactors(ctx, ref);
  if (open_refactors.length === 0) return;
  const details = {
    plan_path: t.planPath,
    step_anchor: t.step,
    worktree: t.W,
    ...(input.attempt !== undefined ? { attempt: input.attempt } : {}),
    open_refactors,
    then_run: sameCommit(t, input),
  };
  throw new TugError('RefactorsIncomplete', details, {
    message:
      `${t.step} has ${open_refactors.length} refactor(s) neither applied nor skipped; nothing was committed: ` +
      "the step's commit must carry its refactors (run them first, or skip them)",
  });
}

/** This `tugcode commit` again, as a command line (the message and summary given inline). */
function sameCommit(t: CommitTarget, input: CommitInput): string {
  return [
    'tugcode commit',
    `--worktree ${shellArg(t.W)}`,
    `--plan ${shellArg(t.planPath)}`,
    `--step ${shellArg(t.step)}`,
    ...(input.attempt !== undefined ? [`--attempt ${input.attempt}`] : []),
    ...(input.integrate ? ['--integrate'] : []),
    ...(input.allowMain ? ['--allow-main'] : []),
    ...(input.allowEmpty ? ['--allow-empty'] : []),
    ...(input.message !== undefined ? [`--message ${shellArg(input.message)}`] : []),
    ...(input.summary !== undefined ? [`--summary ${shellArg(input.summary)}`] : []),
  ].join(' ');
}

/** The driver's commit of a step: the commit only (StepCommitInput says what differs from `tugcode commit`). */
export async function commitStepOnly(ctx: FlowCtx, input: StepCommitInput): Promise<StepCommit> {
  const g = input.git ?? gitRunner(ctx.env); // the driver checked the git version once at its start
  const t = await commitTarget(ctx, g, input);
  const changes = await changesIn(g, t.W, input.trace);
  const made = await writeCommit(ctx, g, t, changes, {
    ...input,
    allowEmpty: true,
    autoMaintenance: false, // once, after the run
    listStaged: false,
    noVerify: Boolean(input.noVerify),
  });
  return { commit_hash: made.hash, branch: t.branch, log_entry_path: made.logRel };
}

/** Where a step commit lands: the worktree, its branch, the plan (repo-relative) and the step. */
interface CommitTarget {
  W: string;
  branch: string;
  planPath: string;
  slug: string;
  step: string;
  stepTitle: string;
}

/** The commit's target, refused when it is the main checkout, a detached HEAD, or a step the plan lacks. */
async function commitTarget(
  ctx: FlowCtx,
  g: GitRunner,
  input: { worktree?: string; plan: string; step: string; allowMain?: boolean; branch?: string; stepTitle?: string },
): Promise<CommitTarget> {
  const { repo } = ctx;
  const W = resolveWorktreeArg(repo, input.worktree ?? repo.worktreeRoot, repo.cwd, ctx.env);
  if (W === repo.mainRoot && !input.allowMain) throw new TugError('MainCheckoutRefused', { worktree: W });
  const step = requireAnchor(input.step);
  // A rebase leaves HEAD detached, a merge keeps the branch: either way git's own operation comes first
  // (the driver's worker trees are never left in one: its commit passes the branch and skips the check).
  const operation = input.branch ? null : operationInProgress(W);
  if (operation) throw new TugError('GitOperationInProgress', { worktree: W, operation });
  const branch = input.branch ?? (await currentBranch(g, W));
  if (!branch) {
    throw new TugError(
      'InvalidArgument',
      { reason: `${W} has a detached HEAD; a step commit must land on a branch`, worktree: W },
      { hint: `git -C ${shellArg(W)} switch <branch>` },
    );
  }
  const planPath = await resolvePlanPath(repo, input.plan, W);
  const stepTitle = input.stepTitle ?? (await stepTitleOf(W, planPath, step));
  return { W, branch, planPath, slug: slugOfPlan(planPath), step, stepTitle };
}

/** The changes to commit: everything but the runtime files. */
function changesIn(g: GitRunner, W: string, tr?: TraceFn): Promise<StatusEntry[]> {
  return timed(tr, 'commit.status', () => statusDetails(g, W, { pathspec: ALL_BUT_RUNTIME }));
}

/** How the commit is written: its message, and what the caller (the CLI or the driver) chose. */
interface WriteOptions {
  message: string;
  summary?: string | undefined;
  attempt?: number | undefined;
  refactors?: string[] | undefined;
  prepared?: PreparedMessage | undefined;
  allowEmpty?: boolean | undefined;
  /** The step's own commit at HEAD, made again over the new changes (soft reset to its parent). */
  remake?: string | undefined;
  autoMaintenance: boolean;
  listStaged: boolean;
  noVerify: boolean;
  trace?: TraceFn | undefined;
  trailersUnconfigured?: boolean | undefined;
}

/**
 * docs/git.md §4 steps 1–4: the log entry, the staging, the commit with its trailers. A failing `git add` or
 * `git commit` puts the index and the log entry back as they were.
 */
async function writeCommit(
  ctx: FlowCtx,
  g: GitRunner,
  t: CommitTarget,
  changes: StatusEntry[],
  o: WriteOptions,
): Promise<{ hash: string; staged: string[]; logRel: string }> {
  const { W } = t;
  const message = await messageOf(ctx, g, t, o);
  const logRel = logEntryPath(t.slug, t.step);
  const undo = await undoPoint(g, W, logRel);
  let files = changes;
  try {
    if (o.remake) {
      undo.remadeParent = await resolveCommit(g, W, `${o.remake}^`);
      await g.run(['reset', '--quiet', '--soft', `${o.remake}^`], W);
      // The changes of the step's commit and the new ones: the log entry lists them all.
      files = await changesIn(g, W, o.trace);
    }
    writeEntry(W, {
      planPath: t.planPath,
      slug: t.slug,
      stepAnchor: t.step,
      stepTitle: t.stepTitle,
      date: ctx.clock.now(),
      summary: o.summary ?? o.message.replace(/\r\n/g, '\n').split('\n')[0]!,
      filesChanged: pathsOf(files).filter((p) => p !== logRel),
    });
    // The status read above plus the log entry just written: no second status.
    await timed(o.trace, 'commit.add', () => stageAllButRuntime(g, W, files, [logRel]));
    const staged = o.listStaged ? await timed(o.trace, 'commit.staged', () => stagedPaths(g, W)) : [];
    await timed(o.trace, 'commit.git', () => g.run(commitArgs(o), W, { input: message }));
    const head = await timed(o.trace, 'commit.head', () => headTip(g, W));
    if (!head) throw new TugError('WorktreeNotFound', { worktree: W, repo_root: ctx.repo.mainRoot });
    return { hash: head, staged, logRel };
  } catch (e) {
    throw await commitFailure(ctx, g, t, undo, e, o.noVerify);
  }
}

/** The message with its Tug-* trailers; validated before any write (a prepared message passed the same validation). */
async function messageOf(ctx: FlowCtx, g: GitRunner, t: CommitTarget, o: WriteOptions): Promise<string> {
  const ref = { planPath: t.planPath, step: t.step, worktree: t.W, attempt: o.attempt };
  const trailers = await timed(o.trace, 'commit.refactors', () => stepTrailers(ctx, ref, o.refactors));
  if (o.prepared?.key === messageKey(o.message, trailers)) return o.prepared.message;
  return timed(o.trace, 'commit.trailers', () =>
    withTugTrailers(g, o.message, trailers, t.W, { unconfigured: o.trailersUnconfigured }),
  );
}

function commitArgs(o: WriteOptions): string[] {
  return [
    ...(o.autoMaintenance ? [] : ['-c', 'maintenance.auto=false']),
    'commit',
    '--quiet',
    '--cleanup=verbatim',
    '-F',
    '-',
    ...(o.allowEmpty ? ['--allow-empty'] : []),
    ...(o.noVerify ? ['--no-verify'] : []),
  ];
}

async function stagedPaths(g: GitRunner, W: string): Promise<string[]> {
  return (await g.run(['diff', '--cached', '--name-only', '-z'], W)).split('\0').filter(Boolean).sort();
}

/** What a failed commit puts back: the index byte for byte, the log entry, the directories the entry needed. */
interface UndoPoint {
  headBefore: string | null;
  /** The parent HEAD was soft-reset to when the step's commit is made again (put back on failure). */
  remadeParent?: string | null;
  indexFile: string;
  previousIndex: Buffer | null;
  logAbs: string;
  previousEntry: Buffer | null;
  newDirs: string[];
}

async function undoPoint(g: GitRunner, W: string, logRel: string): Promise<UndoPoint> {
  const logAbs = join(W, logRel);
  const previousEntry = existsSync(logAbs) ? readFileSync(logAbs) : null;
  const newDirs = missingDirs(W, dirname(logAbs));
  const indexFile = indexPathOf(W) ?? resolve(W, (await g.run(['rev-parse', '--git-path', 'index'], W)).trim());
  // Read asynchronously: an index is megabytes in a large repository, and the driver's other workers must
  // not wait for it (their heartbeats run on the same event loop).
  const previousIndex = await readFile(indexFile).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return null;
    throw e;
  });
  const headBefore = await headTip(g, W);
  return { headBefore, indexFile, previousIndex, logAbs, previousEntry, newDirs };
}

/** The error a failed commit throws, after putting back what it wrote. */
async function commitFailure(
  ctx: FlowCtx,
  g: GitRunner,
  t: CommitTarget,
  undo: UndoPoint,
  e: unknown,
  noVerify: boolean,
): Promise<unknown> {
  const { W } = t;
  // The worktree was removed under us (`worktree remove --force`): nothing to put back.
  if (!existsSync(W)) return worktreeGone(ctx, g, t, undo.headBefore);
  // Nothing committed: put HEAD (a step commit being made again was reset off it), the index and the log
  // entry back as they were, and remove the directories the entry needed.
  if (undo.remadeParent && undo.headBefore && (await headTip(g, W)) === undo.remadeParent)
    await g.run(['reset', '--quiet', '--soft', undo.headBefore], W);
  if (undo.previousIndex) writeFileSync(undo.indexFile, undo.previousIndex);
  else rmSync(undo.indexFile, { force: true });
  if (undo.previousEntry) writeFileSync(undo.logAbs, undo.previousEntry);
  else rmSync(undo.logAbs, { force: true });
  removeEmptyDirs(undo.newDirs);
  return e instanceof TugError && e.code === 'GitError' ? await commitFailed(g, W, e, { noVerify }) : e;
}

/** WorktreeNotFound for a worktree removed while the commit ran: it says whether the commit still landed on the branch (git keeps the branch when the directory goes). */
async function worktreeGone(ctx: FlowCtx, g: GitRunner, t: CommitTarget, headBefore: string | null): Promise<TugError> {
  const { W, branch } = t;
  const { repo } = ctx;
  const tip = await resolveCommit(g, repo.mainRoot, `refs/heads/${branch}`);
  const landed = tip !== null && tip !== headBefore;
  const reason = landed
    ? `the worktree was removed while the commit ran; the commit is on branch ${branch} (${tip.slice(0, 12)}), the step is not completed`
    : 'the worktree was removed while the commit ran; nothing was committed';
  return new TugError(
    'WorktreeNotFound',
    { worktree: W, repo_root: repo.mainRoot, branch, ...(landed ? { commit_hash: tip } : {}), reason },
    {
      message: `${W}: ${reason}`,
      hint: landed
        ? `restore the worktree (git worktree prune && git worktree add ${shellArg(W)} ${shellArg(branch)}), then finish the step there`
        : 'git worktree list   (pass the root of one of these)',
    },
  );
}

function emptyData(commitHash: string, branch: string, logRel: string): CommitData {
  return {
    committed: true,
    commit_hash: commitHash,
    branch,
    files_staged: [],
    log_entry_path: logRel,
    integrated: false,
    integration_branch: null,
    state_updated: false,
    state_update_failed: false,
    state_failure_reason: null,
    state_error: null,
    plan_completed: false,
  };
}

/**
 * HEAD of `W` when it is a commit of this step (its Tug-Step and Tug-Plan trailers) that integration is
 * due for (the integration branch exists, or `--integrate`) and that is not on the integration branch yet;
 * else null.
 */
export async function unintegratedStepHead(
  g: GitRunner,
  W: string,
  o: { planPath: string; step: string; integ: string; integrate: boolean },
): Promise<string | null> {
  const { parseTrailerLog, TRAILER_LOG_FORMAT } = await import('../git/trailers.js');
  const r = await g.tryRun(['log', '-1', `--format=${TRAILER_LOG_FORMAT}`, 'HEAD', '--'], W);
  const head = r.status === 0 ? parseTrailerLog(r.stdout).commits[0] : undefined;
  if (!head || !head.steps.includes(o.step) || !head.plans.includes(o.planPath)) return null;
  const tip = await resolveCommit(g, W, `refs/heads/${o.integ}`);
  if (!tip) return o.integrate ? head.hash : null;
  return (await isAncestor(g, W, head.hash, tip)) ? null : head.hash;
}

/** The step a commit completes, and where it integrates. */
interface FinishTarget {
  W: string;
  branch: string;
  planPath: string;
  step: string;
  integ: string;
  attempt: number | undefined;
  integrate: boolean | undefined;
}

/**
 * docs/git.md §4 steps 5–6 for the commit in `data`: integrate when the plan has an integration branch (or
 * `--integrate`) and the strict completion preconditions hold, then complete the step. Failures are
 * reported in `data`, never thrown (the commit exists); a commit left off the integration branch is also a
 * warning that says so plainly.
 */
async function finishStep(ctx: FlowCtx, g: GitRunner, o: FinishTarget, data: CommitData): Promise<CommitData> {
  const stepRef = { planPath: o.planPath, step: o.step, worktree: o.W, attempt: o.attempt };
  let failure: TugError | null = null;
  try {
    if (o.integrate || (await branchExists(g, ctx.repo.mainRoot, o.integ))) {
      data.integration_branch = o.integ;
      failure = await integrateStep(ctx, g, o, data);
    }
    if (!failure) {
      const done = await state.complete(ctx, { ...stepRef, commit: data.commit_hash });
      data.state_updated = true;
      data.plan_completed = done.plan_completed;
    }
  } catch (e) {
    // The commit exists: whatever failed after it is reported, never thrown (exit 0).
    failure =
      e instanceof TugError ? e : new TugError('DatabaseError', { reason: e instanceof Error ? e.message : String(e) });
  }
  if (failure) {
    data.state_update_failed = true;
    data.state_failure_reason = failureReason(failure);
    data.state_error = fail('state complete', withThenRun(failure, o, data));
  }
  if (data.integration_branch && !data.integrated) warnNotIntegrated(ctx, o, data);
  return data;
}

/**
 * Integrate the commit when the step could complete (its completion blocker, else the merge's failure,
 * else null); `data` says where it landed.
 */
async function integrateStep(ctx: FlowCtx, g: GitRunner, o: FinishTarget, data: CommitData): Promise<TugError | null> {
  const { repo } = ctx;
  const stepRef = { planPath: o.planPath, step: o.step, worktree: o.W, attempt: o.attempt };
  const failure = await state.completionBlocker(ctx, stepRef);
  const base = (await getBranchPlan(g, repo.mainRoot, o.branch))?.base_branch ?? ctx.config.run.base_branch;
  const createFrom = { base, planPath: o.planPath };
  // The step's own blockers (open items, substeps, refactors): the plan integrates from now on. Not for
  // a step this worktree does not own.
  if (failure && o.integrate && failureReason(failure) !== 'ownership')
    await createIntegrationBranch(g, repo, o.integ, createFrom);
  if (failure) return failure;
  try {
    await state.localTarget(ctx, { planPath: o.planPath, worktree: o.W, integ: o.integ }, 'record');
  } catch (e) {
    if (e instanceof TugError) return e;
    throw e;
  }
  const r = await integrate({
    git: g,
    repo,
    worktree: o.W,
    integrationBranch: o.integ,
    createFrom,
    heartbeat: () => state.heartbeat(ctx, stepRef),
  });
  if (!r.integrated) return r.error;
  data.integrated = true;
  data.commit_hash = r.head;
  return null;
}

/**
 * `tugcode commit` again for this step: with nothing new to commit it integrates the commit and completes
 * the step; with new changes it makes the step's commit again over them. No `--message`: the commit's own
 * message is kept (docs/git.md §4.2).
 */
function commitAgain(o: FinishTarget): string {
  return [
    'tugcode commit',
    `--worktree ${shellArg(o.W)}`,
    `--plan ${shellArg(o.planPath)}`,
    `--step ${shellArg(o.step)}`,
    ...(o.attempt !== undefined ? [`--attempt ${o.attempt}`] : []),
    '--integrate',
  ].join(' ');
}

/**
 * A blocker of the step itself (open items, substeps, refactors) with `then_run`, what finishes the step
 * once it is cleared, so its hint (src/contract/errors.ts) names both: commit again when the commit is to
 * integrate, else complete the step with this commit. Other failures are returned as they are.
 */
function withThenRun(e: TugError, o: FinishTarget, data: CommitData): TugError {
  if (!['open_items', 'substeps', 'refactors'].includes(failureReason(e))) return e;
  const then_run = data.integration_branch
    ? commitAgain(o)
    : [
        `tugcode state complete ${shellArg(o.planPath)} ${shellArg(o.step)} --worktree ${shellArg(o.W)}`,
        ...(o.attempt !== undefined ? [`--attempt ${o.attempt}`] : []),
        `--commit ${data.commit_hash}`,
      ].join(' ');
  return new TugError(e.code, { ...e.details, then_run }, { message: e.message });
}

/** The NotIntegrated warning: the commit stays on the worker branch, and how to integrate it. */
function warnNotIntegrated(ctx: FlowCtx, o: FinishTarget, data: CommitData): void {
  const again = commitAgain(o);
  ctx.warnings.add(
    'NotIntegrated',
    `commit ${data.commit_hash.slice(0, 12)} was NOT integrated into ${o.integ} (${data.state_failure_reason ?? 'not integrated'}); ` +
      `it stays on ${o.branch} only, and merge will not ship it. Fix the cause, then run ${again} ` +
      '(it integrates this commit and completes the step; changes made meanwhile are folded into this commit, its message kept)',
    { commit_hash: data.commit_hash, integration_branch: o.integ, branch: o.branch },
  );
}
