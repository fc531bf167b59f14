/**
 * `tugcode doctor` (docs/git.md §7): read-only health checks, each `{name, status, message, fix}`. Exit 0
 * when no check fails (warnings allowed); otherwise `DoctorFailed` (exit 4) carrying every check.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { WarningSink } from '../contract/envelope.js';
import { TugError } from '../contract/errors.js';
import { AGENT_DIR, CONFIG_FILE, STATE_DB, STATE_DB_FILES, TUGTOOL_DIR, TUGTREE_DIR } from '../contract/layout.js';
import { gitRunner, gitVersion, type GitRunner } from '../git/exec.js';
import type { RepoCtx } from './flow-context.js';
import { MIN_GIT_VERSION, versionAtLeast, versionString } from '../git/refs.js';
import { gitWorktrees, resolveRepo, type Repo } from '../git/repo.js';
import type { StateStore } from '../state/store.js';
import { operationInProgress, type GitOperation } from '../git/in-progress.js';
import { shellArg } from '../util/shell-arg.js';
import { rebasingBranchOf } from './conflict.js';

export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  message: string;
  fix: string;
  /**
   * The check did not run (what it reads is missing): status stays `pass` so the JSON enum keeps its three
   * values, and `skipped` says it (docs/git.md §7). Always present in the output.
   */
  skipped?: boolean;
}

export interface DoctorData {
  checks: (DoctorCheck & { skipped: boolean })[];
  /** `pass` counts the skipped checks too (they are `pass`); `skipped` how many of them did not run. */
  summary: { total: number; pass: number; warn: number; fail: number; skipped: number };
}

const NONE = 'none needed';

/** The checks that run git, in gitChecks' order: skipped when git does not run (docs/git.md §7). */
const GIT_CHECKS = ['state-files-untracked', 'worktrees-present', 'tugtree-registered', 'worktrees-settled'];

async function gitChecks(g: GitRunner, repo: Repo, gitRuns: boolean): Promise<DoctorCheck[]> {
  const out: DoctorCheck[] = [];
  const root = repo.mainRoot;
  out.push(
    existsSync(join(root, TUGTOOL_DIR))
      ? { name: 'tugtool-initialized', status: 'pass', message: '.tugtool/ exists in the main checkout', fix: NONE }
      : {
          name: 'tugtool-initialized',
          status: 'fail',
          message: `${root} has no .tugtool/ directory`,
          fix: 'tugcode init',
        },
  );
  if (!gitRuns) {
    const { skip, NO_GIT } = await import('./doctor-state.js');
    return [...out, ...GIT_CHECKS.map((n) => skip(n, NO_GIT))];
  }
  const tracked = (await g.tryRun(['ls-files', '--', ...STATE_DB_FILES], root)).stdout.split('\n').filter(Boolean);
  const ignored = (await g.tryRun(['check-ignore', '-q', '--no-index', STATE_DB], root)).status === 0;
  if (tracked.length > 0) {
    out.push({
      name: 'state-files-untracked',
      status: 'fail',
      message: `state files are tracked by git: ${tracked.join(', ')}`,
      fix: `git rm --cached ${tracked.join(' ')} && git commit -m "chore: untrack tugcode state"; then tugcode init (adds the ignore lines)`,
    });
  } else if (!ignored) {
    out.push({
      name: 'state-files-untracked',
      status: 'warn',
      message: '.tugtool/state.db is not ignored by git',
      fix: 'tugcode init   (adds the runtime files to .gitignore and info/exclude)',
    });
  } else
    out.push({
      name: 'state-files-untracked',
      status: 'pass',
      message: 'state files are ignored and untracked',
      fix: NONE,
    });

  const worktrees = (await gitWorktrees(g, repo)).filter((w) => !w.bare);
  const missing = worktrees.filter((w) => !existsSync(w.path));
  out.push(
    missing.length
      ? {
          name: 'worktrees-present',
          status: 'warn',
          message: `worktrees registered in git but missing on disk: ${missing.map((w) => `${w.path}${w.branch ? ` (${w.branch})` : ''}`).join(', ')}`,
          fix: `tugcode worktree remove <path> for each (keeps unmerged branches), or git worktree prune`,
        }
      : {
          name: 'worktrees-present',
          status: 'pass',
          message: `${worktrees.length} worktree(s), all present on disk`,
          fix: NONE,
        },
  );
  const tugtree = join(root, TUGTREE_DIR);
  let stray: string[] = [];
  try {
    const registered = new Set(worktrees.map((w) => w.path));
    stray = readdirSync(tugtree, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !registered.has(join(tugtree, d.name)))
      .map((d) => `${TUGTREE_DIR}/${d.name}`);
  } catch {
    stray = [];
  }
  out.push(
    stray.length
      ? {
          name: 'tugtree-registered',
          status: 'warn',
          message: `directories under .tugtree/ that git does not know: ${stray.join(', ')}`,
          fix: `inspect them, copy out anything you need, then delete them (rm -rf ${stray.join(' ')})`,
        }
      : {
          name: 'tugtree-registered',
          status: 'pass',
          message: 'every .tugtree/ directory is a registered worktree',
          fix: NONE,
        },
  );
  out.push(settledCheck(repo, worktrees));
  return out;
}

/**
 * Tugplan worktrees in the middle of a rebase, merge, cherry-pick or revert: a `tugcode commit --integrate`
 * killed mid-rebase, or one left by hand. `tugcode commit` refuses there (GitOperationInProgress), and
 * nothing else says so. File checks only, no git process (docs/git.md §7).
 */
function settledCheck(repo: Repo, worktrees: { path: string; branch: string | null }[]): DoctorCheck {
  const name = 'worktrees-settled';
  const tugtree = join(repo.mainRoot, TUGTREE_DIR) + '/';
  const stuck = worktrees
    .filter((w) => w.path !== repo.mainRoot && existsSync(w.path))
    .filter(
      (w) =>
        w.path.startsWith(tugtree) ||
        w.branch?.startsWith('tugplan/') ||
        rebasingBranchOf(w.path)?.startsWith('tugplan/'),
    )
    .map((w) => ({ path: w.path, op: operationInProgress(w.path) }))
    .filter((w): w is { path: string; op: GitOperation } => w.op !== null);
  if (stuck.length === 0)
    return { name, status: 'pass', message: 'no tugplan worktree is in the middle of a git operation', fix: NONE };
  return {
    name,
    status: 'warn',
    message: `tugplan worktrees in the middle of a git operation: ${stuck.map((w) => `${w.path} (${w.op})`).join(', ')}`,
    fix:
      stuck.map((w) => `git -C ${shellArg(w.path)} ${w.op} --continue (after resolving) or --abort`).join('; ') +
      '; then the same tugcode commit --integrate finishes the step',
  };
}

/** The context of doctor's checks: `gitRuns` false when `git --version` did not run. */
export type DoctorCtx = RepoCtx & { gitRuns: boolean };

async function kernelCheck(ctx: RepoCtx): Promise<DoctorCheck> {
  const name = 'kernel-backends';
  let probe:
    | ((
        sessionDir: string,
        o: { python?: string; rustAnalyzer?: string; env?: Record<string, string | undefined>; workspace?: string },
      ) => Promise<Record<string, unknown>>)
    | undefined;
  try {
    probe = (await import('../kernel/index.js')).doctor;
  } catch {
    probe = undefined;
  }
  if (!probe)
    return {
      name,
      status: 'warn',
      message: 'kernel not available in this build',
      fix: 'install a tugcode build that includes the refactor kernel',
    };
  try {
    // The kernel reads no process environment of its own: its probes get the caller's.
    const o: { python?: string; rustAnalyzer?: string; env?: Record<string, string | undefined>; workspace?: string } =
      {
        env: ctx.env,
        workspace: ctx.repo.worktreeRoot,
      };
    if (ctx.config.kernel.python) o.python = ctx.config.kernel.python;
    if (ctx.config.kernel.rust_analyzer) o.rustAnalyzer = ctx.config.kernel.rust_analyzer;
    const r = (await probe(join(ctx.repo.worktreeRoot, AGENT_DIR), o)) as {
      summary?: { failed?: number; warnings?: number; total?: number };
      checks?: { name: string; status: string; message: string }[];
    };
    const failed = (r.checks ?? []).filter((c) => c.status === 'failed');
    const warned = (r.checks ?? []).filter((c) => c.status === 'warning');
    const list = (cs: { name: string; message: string }[]) => cs.map((c) => `${c.name}: ${c.message}`).join('; ');
    if (failed.length)
      return {
        name,
        status: 'fail',
        message: list(failed),
        fix: 'tug doctor shows every backend probe; install or repair the failing ones',
      };
    if (warned.length)
      return {
        name,
        status: 'warn',
        message: list(warned),
        fix: 'optional backends: install them to refactor those languages (tug doctor)',
      };
    return { name, status: 'pass', message: `${r.checks?.length ?? 0} kernel probe(s) passed`, fix: NONE };
  } catch (e) {
    return { name, status: 'warn', message: `kernel probe failed to run: ${(e as Error).message}`, fix: 'tug doctor' };
  }
}

/** state.db's checks, or the PostgreSQL server's when `[state] url` is set (docs/state.md §8). */
async function backendChecks(ctx: DoctorCtx, o: DoctorInput): Promise<DoctorCheck[]> {
  if (!ctx.config.state.url) return (await import('./doctor-state.js')).stateChecks(ctx);
  const { pgStateChecks } = await import('./doctor-pg.js');
  const open = o.openStore;
  return pgStateChecks(ctx, async () => {
    if (!open) throw new TugError('InternalError', { reason: 'doctor was not given a way to open the state store' });
    return open(ctx.repo, ctx.config);
  });
}

function summarize(checks: DoctorData['checks']): DoctorData['summary'] {
  return {
    total: checks.length,
    pass: checks.filter((c) => c.status === 'pass').length,
    warn: checks.filter((c) => c.status === 'warn').length,
    fail: checks.filter((c) => c.status === 'fail').length,
    skipped: checks.filter((c) => c.skipped).length,
  };
}

/** Runs every check; throws DoctorFailed (with all checks in details) when one fails. */
export interface DoctorInput {
  cwd: string;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  warnings: WarningSink;
  loadConfig: (repo: Repo) => Promise<Config>;
  /** Probe the refactor kernel's backends (slow: it runs them). Default true. */
  kernel?: boolean;
  /**
   * Opens the repository's state store (the ops layer picks the backend). Needed when `[state] url` names
   * PostgreSQL: the state checks are then the server's (doctor-pg.ts) instead of state.db's.
   */
  openStore?: (repo: Repo, config: Config) => Promise<StateStore>;
}

export async function runDoctor(o: DoctorInput): Promise<DoctorData> {
  const checks: DoctorCheck[] = [];
  const g = gitRunner(o.env);
  const v = await gitVersion(g);
  checks.push(
    !v
      ? {
          name: 'git-version',
          status: 'fail',
          message: 'git is not installed or cannot run',
          fix: `install git ${versionString(MIN_GIT_VERSION)} or newer`,
        }
      : versionAtLeast(v, MIN_GIT_VERSION)
        ? { name: 'git-version', status: 'pass', message: `git ${versionString(v)}`, fix: NONE }
        : {
            name: 'git-version',
            status: 'fail',
            message: `git ${versionString(v)} is older than ${versionString(MIN_GIT_VERSION)}`,
            fix: `install git ${versionString(MIN_GIT_VERSION)} or newer`,
          },
  );
  let repo: Repo | null = null;
  try {
    repo = resolveRepo(o.cwd, o.env);
    checks.push({ name: 'repo-found', status: 'pass', message: `main checkout ${repo.mainRoot}`, fix: NONE });
  } catch (e) {
    checks.push({
      name: 'repo-found',
      status: 'fail',
      message: (e as Error).message,
      fix: 'run tugcode inside a git repository (git init), or pass -C <dir>',
    });
  }
  if (!repo) checks.push(...(await repoChecksSkipped(o)));
  if (repo) {
    let config: Config | null = null;
    try {
      config = await o.loadConfig(repo);
      checks.push({ name: 'config', status: 'pass', message: 'configuration is valid', fix: NONE });
    } catch (e) {
      checks.push({ name: 'config', status: 'fail', message: (e as Error).message, fix: configFix(e) });
    }
    const ctx: DoctorCtx | null = config
      ? { repo, config, clock: o.clock, warnings: o.warnings, env: o.env, gitRuns: v !== null }
      : null;
    // The kernel's probes (docs/kernel.md §4.5) run each tool once, about 3 s in all (pyright's CLI most of
    // it), and read nothing the other checks write: they start now and run beside them, listed last as before.
    const kernel = ctx && o.kernel !== false ? kernelCheck(ctx) : null;
    // Git missing (or not running) fails `git-version`; the checks that would run it are skipped, not aborted.
    checks.push(...(await gitChecks(g, repo, v !== null)));
    if (ctx) {
      const state = await backendChecks(ctx, o);
      checks.splice(
        checks.findIndex((c) => c.name === 'state-files-untracked'),
        0,
        ...state,
      );
      if (kernel) checks.push(await kernel);
    }
  }
  const out = checks.map(({ name, status, message, fix, skipped }) => ({
    name,
    status,
    message,
    fix,
    skipped: skipped === true,
  }));
  const summary = summarize(out);
  // The text of a failure is the CLI's, the same table as a success (src/cli/commands/git-text.ts).
  if (summary.fail > 0) throw new TugError('DoctorFailed', { failed: summary.fail, checks: out, summary });
  return { checks: out, summary };
}

/**
 * Outside a repository the checks that read one are listed as skipped, so doctor lists the same checks
 * wherever it runs (docs/git.md §7), in their order inside one; the state checks are state.db's (no
 * configuration names another backend).
 */
async function repoChecksSkipped(o: DoctorInput): Promise<DoctorCheck[]> {
  const { skip, STATE_DB_CHECKS } = await import('./doctor-state.js');
  const names = [
    'config',
    'tugtool-initialized',
    ...STATE_DB_CHECKS,
    ...GIT_CHECKS,
    ...(o.kernel !== false ? ['kernel-backends'] : []),
  ];
  return names.map((n) => skip(n, 'not a git repository'));
}

/**
 * The fix of a configuration that does not load: the error's own hint (the line to edit). A fresh template
 * is offered only for the file and only beside it, without discarding it: `init --force` would overwrite
 * the user's settings (and the implementation log index).
 */
function configFix(e: unknown): string {
  const hint = e instanceof TugError ? e.hint : undefined;
  const fromFile = !(e instanceof TugError) || e.details.source === CONFIG_FILE;
  if (!fromFile) return hint ?? 'fix the environment variable the message names';
  const aside = `or start over: mv ${CONFIG_FILE} ${CONFIG_FILE}.bak && tugcode init (writes a fresh template)`;
  return `${hint ?? `edit ${CONFIG_FILE}`}; ${aside}`;
}
