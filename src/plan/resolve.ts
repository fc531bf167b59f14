/**
 * The one plan-argument resolver (docs/output.md §5, docs/state.md §4) and plan listing. Cheap to import
 * (no markdown-it): hot state commands use it.
 *
 * A plan argument is a path (absolute, or relative: `./x` and `../x` to the current directory, anything
 * else to the current directory first and then to the work tree root) inside the repository or the work
 * tree, or a slug (`foo` → `.tugtool/tugplan-foo.md`). It names a plan when the file exists in the work
 * tree or the plan is known to state.db; otherwise `PlanNotFound`. Nothing is ever auto-selected.
 */
import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { TugError } from '../contract/errors.js';
import { PLAN_FILE_RE, planPathForSlug, RESERVED_PLAN_FILES, TUGTOOL_DIR } from '../contract/layout.js';
import { isValidSlug, SLUG_RULE } from './anchors.js';
import type { Diagnostic } from './types.js';

export interface ResolvePlanOptions {
  /** Main repository root (where `.tugtool/state.db` lives). */
  repoRoot: string;
  /** The work tree the plan is read from (the main root or a linked worktree). */
  workTree: string;
  /** Plan paths with rows in state.db: such a plan names a plan even when its file is gone. */
  knownPlanPaths?: readonly string[];
  /** Base directory for relative paths (the caller's current directory; the library never reads it). */
  cwd: string;
  /**
   * The root of the repository's work tree holding an absolute path, if any (git/repo.ts workTreeHolding):
   * a path into another worktree then names the same repo-relative plan. Without it, paths are judged
   * against the work tree and the main root only.
   */
  workTreeHolding?: (abs: string) => string | null;
}

export interface ResolvedPlan {
  /** Repo-relative, `/` separators. */
  plan_path: string;
  /** Absolute path of the plan file in the work tree. */
  abs_path: string;
  /** Whether the file exists (as a regular file) in the work tree. */
  exists: boolean;
}

/** The slug of `.tugtool/tugplan-<slug>.md`, else null. */
export function slugOfPlanPath(planPath: string): string | null {
  const m = PLAN_FILE_RE.exec(basename(planPath));
  return m ? m[1]! : null;
}

/**
 * E004 when the file name is not `tugplan-<slug>.md` with a valid slug (docs/plan-format.md: `<slug>` matches
 * `^[a-z0-9][a-z0-9-]{0,63}$` without `--`): such a plan cannot be named by slug, and `worktree create` and
 * `run` refuse it. Null for a well-named plan.
 */
export function planNameDiagnostic(planPath: string): Diagnostic | null {
  const slug = slugOfPlanPath(planPath);
  if (slug !== null && isValidSlug(slug)) return null;
  const why =
    slug === null
      ? `the file name ${JSON.stringify(basename(planPath))} is not tugplan-<slug>.md`
      : `the file name's slug ${JSON.stringify(slug)} is not a valid slug (${SLUG_RULE})`;
  return {
    code: 'E004',
    severity: 'error',
    message: `${why}; rename the file to .tugtool/tugplan-<slug>.md (worktree create and run refuse this name)`,
  };
}

/** Plan-named entries of `.tugtool/` in the work tree that `keep` accepts, reserved names excluded, sorted. */
function planEntries(workTree: string, keep: (e: import('node:fs').Dirent) => boolean): string[] {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(join(workTree, TUGTOOL_DIR), { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => keep(e) && PLAN_FILE_RE.test(e.name) && !RESERVED_PLAN_FILES.includes(e.name))
    .map((e) => `${TUGTOOL_DIR}/${e.name}`)
    .sort();
}

/** Repo-relative paths of `.tugtool/tugplan-*.md` in the work tree, reserved names excluded, sorted. */
export function listPlans(workTree: string): string[] {
  return planEntries(workTree, (e) => e.isFile());
}

/**
 * Repo-relative paths of `.tugtool/tugplan-*.md` entries in the work tree that are symlinks (reserved names
 * excluded, sorted). `listPlans` leaves them out; whether one names a plan is up to `resolvePlanArg` (a
 * symlink out of the repository does not).
 */
export function listPlanLinks(workTree: string): string[] {
  return planEntries(workTree, (e) => e.isSymbolicLink());
}

/**
 * Whether `arg` can name only one place: a slug, an absolute or explicitly relative path, or a relative path
 * that reads the same from the caller's directory and from the work tree root. Then `knownPlanPaths` changes
 * nothing once the argument named an existing file, and a caller may skip reading them.
 */
export function namesOnePlace(arg: string, opts: Pick<ResolvePlanOptions, 'cwd' | 'workTree'>): boolean {
  if (looksLikeSlug(arg) || isAbsolute(arg) || /^\.\.?([/\\]|$)/.test(arg)) return true;
  return resolve(opts.cwd, arg) === resolve(opts.workTree, arg);
}

/** Neither the main root nor the work tree has `.tugtool/`: `tugcode init` never ran here. */
function uninitialized(opts: Pick<ResolvePlanOptions, 'repoRoot' | 'workTree'>): boolean {
  return !existsSync(join(opts.repoRoot, TUGTOOL_DIR)) && !existsSync(join(opts.workTree, TUGTOOL_DIR));
}

/** What names a plan, for an argument that cannot: its slug or its path, as validate lists them. */
const PLANS_HINT =
  'name a plan by its slug (demo for .tugtool/tugplan-demo.md) or its path in this repository; tugcode validate lists the plans';

/** Resolves a plan argument; throws `InvalidArgument` or `PlanNotFound`. */
export function resolvePlanArg(arg: string, opts: ResolvePlanOptions): ResolvedPlan {
  if (arg.trim() === '' || arg.includes('\0')) {
    throw new TugError(
      'InvalidArgument',
      { reason: 'the plan argument is empty or contains a NUL byte', argument: 'plan', value: arg },
      { hint: PLANS_HINT },
    );
  }
  const known = new Set(opts.knownPlanPaths ?? []);
  const roots = new Roots(opts.workTree, opts.repoRoot);
  const notFound = (planPath: string | null, why?: string): TugError => {
    const reason = why ?? (planPath === null ? undefined : notRegularFile(roots.inWorkTree(planPath)));
    return new TugError(
      'PlanNotFound',
      {
        plan: arg,
        ...(planPath ? { plan_path: planPath } : {}),
        ...(reason ? { reason } : {}),
        // Only plans a slug can name (a badly named file is reported by `tugcode validate`, E004).
        candidates: listPlans(opts.workTree).filter((p) => planNameDiagnostic(p) === null),
      },
      // A repository never set up has no plan to list: what helps is `init`, not `validate`.
      uninitialized(opts) ? { hint: 'tugcode init   (this repository has no .tugtool/ yet)' } : {},
    );
  };

  if (looksLikeSlug(arg)) {
    if (!isValidSlug(arg)) {
      throw new TugError(
        'InvalidArgument',
        { reason: `"${arg}" is not a valid plan slug (${SLUG_RULE})`, argument: 'plan', value: arg },
        { hint: PLANS_HINT },
      );
    }
    const planPath = planPathForSlug(arg);
    if (RESERVED_PLAN_FILES.includes(basename(planPath))) {
      throw notFound(planPath, `${basename(planPath)} is a reserved name, not a plan; name it by path`);
    }
    return finish(planPath, roots, known, notFound);
  }

  const cwd = opts.cwd;
  const explicitRelative = /^\.\.?([/\\]|$)/.test(arg);
  const candidates: string[] = [];
  if (isAbsolute(arg)) candidates.push(resolve(arg));
  else {
    candidates.push(resolve(cwd, arg));
    if (!explicitRelative) candidates.push(resolve(opts.workTree, arg));
  }
  let firstInside: string | null = null;
  const matches: string[] = [];
  for (const abs of candidates) {
    const planPath = roots.planPathOf(abs, opts.workTreeHolding?.(abs) ?? null);
    if (planPath === null) continue;
    firstInside ??= planPath;
    if ((isFile(roots.inWorkTree(planPath)) || known.has(planPath)) && !matches.includes(planPath))
      matches.push(planPath);
  }
  // A relative path read from a subdirectory and from the work tree root may name two different plans:
  // never guess which one was meant.
  if (matches.length > 1) throw new TugError('AmbiguousPlan', { plan: arg, candidates: matches });
  if (matches[0] !== undefined) return finish(matches[0], roots, known, notFound);
  if (firstInside === null) {
    throw new TugError(
      'InvalidArgument',
      { reason: `plan path "${arg}" is outside the repository`, argument: 'plan', value: arg },
      { hint: PLANS_HINT },
    );
  }
  throw notFound(firstInside);
}

function finish(
  planPath: string,
  roots: Roots,
  known: ReadonlySet<string>,
  notFound: (p: string) => TugError,
): ResolvedPlan {
  const abs = roots.inWorkTree(planPath);
  const exists = isFile(abs);
  if (exists) {
    // A symlink (the file itself or a directory on the way) must not lead out of the repository.
    if (!roots.containsReal(abs)) {
      throw new TugError('InvalidArgument', {
        reason: `plan path "${planPath}" leads outside the repository (symlink)`,
        argument: 'plan',
        value: planPath,
      });
    }
  } else if (!known.has(planPath)) {
    throw notFound(planPath);
  }
  return { plan_path: planPath, abs_path: abs, exists };
}

/** The work tree and repo roots, as given and as real paths. */
class Roots {
  private readonly lexical: string[];
  private readonly real: string[];

  constructor(
    private readonly workTree: string,
    repoRoot: string,
  ) {
    this.lexical = [resolve(workTree), resolve(repoRoot)];
    this.real = [realish(workTree), realish(repoRoot)];
  }

  /**
   * Repo-relative `/` path of `abs` when it lies inside the work tree (preferred) or the repo root, judged
   * on the path as written, else with the directories' symlinks resolved (the file name is kept, so a plan
   * that is a symlink keeps its own path); inside `holder` when another work tree holds it. Null when outside.
   */
  planPathOf(abs: string, holder: string | null = null): string | null {
    const real = join(realish(dirname(abs)), basename(abs));
    // Another work tree of the repository (a worker's under `.tugtree/` in the main checkout, or one elsewhere)
    // holds it: the path inside that tree is the plan's (docs/output.md §5).
    // Only when the path is not in this work tree, or that tree lies nested inside this one: a work tree that
    // is gone (removed mid-run) must not make its own paths read as the main checkout's `.tugtree/…`.
    if (holder !== null && holder !== this.real[0]) {
      const inHere = relInside(abs, this.lexical.slice(0, 1)) ?? relInside(real, this.real.slice(0, 1));
      if (inHere === null || relInside(holder, this.real.slice(0, 1)) !== null) return relInside(real, [holder]);
    }
    return relInside(abs, this.lexical) ?? relInside(real, this.real);
  }

  inWorkTree(planPath: string): string {
    return join(resolve(this.workTree), ...planPath.split('/'));
  }

  /** True when the fully resolved path lies inside one of the real roots. */
  containsReal(abs: string): boolean {
    return relInside(realish(abs), this.real) !== null;
  }
}

function relInside(abs: string, roots: readonly string[]): string | null {
  for (const root of roots) {
    const rel = relative(root, abs);
    if (rel === '' || rel === '..' || rel.startsWith('..' + sep) || isAbsolute(rel)) continue;
    return rel.split(sep).join('/');
  }
  return null;
}

/** A bare word (no path separator, no dot): read as a slug. */
function looksLikeSlug(arg: string): boolean {
  return !/[/\\.]/.test(arg) && !isAbsolute(arg);
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * Why an existing entry is no plan file: a FIFO (reading it would wait for a writer), a device (`/dev/zero`
 * never ends) or a directory, through a symlink or not. Undefined when nothing is there or it is a file.
 */
function notRegularFile(p: string): string | undefined {
  let st: import('node:fs').Stats;
  try {
    st = statSync(p);
  } catch {
    return undefined;
  }
  if (st.isFile()) return undefined;
  const kind = st.isFIFO()
    ? 'a FIFO'
    : st.isDirectory()
      ? 'a directory'
      : st.isCharacterDevice() || st.isBlockDevice()
        ? 'a device'
        : 'a socket or other special file';
  return `${basename(p)} is ${kind}, not a regular file`;
}

/** realpath of the longest existing prefix, plus the rest (so missing files still compare correctly). */
function realish(p: string): string {
  const abs = resolve(p);
  try {
    return realpathSync.native(abs);
  } catch {
    const parent = dirname(abs);
    if (parent === abs) return abs;
    return join(realish(parent), basename(abs));
  }
}
