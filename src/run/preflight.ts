/**
 * Before any worker starts (docs/run.md §1 items 1–2): the plan must be committed on the base branch and
 * equal to the main checkout's copy; it is validated (errors are fatal), `state init` from the committed
 * blob, reconciled from the integration branch, and the integration branch `tugplan/<slug>` is created from
 * the base when missing, or brought up to it when the plan changed there.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TugError } from '../contract/errors.js';
import type { GitRunner } from '../git/exec.js';
import type { FlowCtx } from '../gitflow/flow-context.js';
import type { ParsedPlan } from '../plan/types.js';
import type { Config } from '../config/schema.js';
import type { WarningSinkCode } from '../contract/warnings.js';

type RunConfig = Config['run'];

export interface Prepared {
  planPath: string;
  slug: string;
  base: string;
  integration: string;
  plan: ParsedPlan;
  blob: Buffer;
  /**
   * A preview only (`--dry-run`, docs/run.md §1.10): the plan is not committed on the base as the main
   * checkout has it, so `plan` and `blob` are the main checkout's copy and this is what the real run refuses.
   */
  uncommitted?: TugError;
}

/** `preview`: a plan that is not committed as the main checkout has it is read from the checkout, not refused. */
export async function preflight(
  ctx: FlowCtx,
  g: GitRunner,
  planArg: string,
  baseArg?: string,
  o: { preview?: boolean } = {},
): Promise<Prepared> {
  const { repo } = ctx;
  const { requireGitVersion } = await import('../git/refs.js');
  const { refTip } = await import('../git/ref-files.js');
  const { resolvePlanInMain, committedPlan, missingBase, parseAndValidate, planNotCommitted } =
    await import('../gitflow/plan-file.js');
  const { slugOfPlan } = await import('../gitflow/naming.js');
  const { integrationBranch } = await import('../contract/layout.js');
  // The checks' git reads (each a process) run side by side; their refusals are still told in this order.
  const version = settled(requireGitVersion(g));
  const planPath = await resolvePlanInMain(repo, planArg).catch(async (e: unknown) => {
    (await version)();
    throw e;
  });
  const slug = slugOfPlan(planPath);
  const base = baseArg ?? ctx.config.run.base_branch;
  const baseTip = settled(refTip(g, repo.commonDir, repo.mainRoot, base));
  const checks = [
    noSubmodules(g, repo.mainRoot, base),
    identityKnown(g, repo.mainRoot),
    roomForBranches(g, repo, integrationBranch(slug)),
  ].map(settled);
  const committed = settled(committedPlan(g, repo, planPath, base));
  (await version)();
  const main = join(repo.mainRoot, planPath);
  const mainCopy = existsSync(main) ? readFileSync(main) : null;
  let uncommitted: TugError | undefined;
  if ((await baseTip)() === null) {
    const why = await missingBase(g, repo, planPath, base);
    // A repository with no commits yet: a dry run previews the main checkout's copy (docs/run.md §1.10).
    if (!(o.preview && mainCopy && why.code === 'PlanNotCommitted')) throw why;
    uncommitted = why;
  }
  for (const check of checks) (await check)();
  let blob: Buffer | null = null;
  try {
    if (!uncommitted) blob = (await committed)();
  } catch (e) {
    if (!(o.preview && mainCopy && e instanceof TugError && e.code === 'PlanNotCommitted')) throw e;
    uncommitted = e;
  }
  if (blob && (!mainCopy || !mainCopy.equals(blob)))
    uncommitted = await planNotCommitted(
      g,
      repo,
      planPath,
      base,
      mainCopy ? `the main checkout's copy differs from ${base}` : `the main checkout has no ${planPath}`,
    );
  if (uncommitted && !(o.preview && mainCopy)) throw uncommitted;
  const text = uncommitted ? mainCopy! : blob!;
  const plan = await parseAndValidate(planPath, text);
  const p = { planPath, slug, base, integration: integrationBranch(slug), plan, blob: text };
  return uncommitted ? { ...p, uncommitted } : p;
}

/**
 * Worker worktrees are checked out without their submodules, so an implementer's edits under one would be
 * in no commit (docs/git.md): a base with `.gitmodules` is refused before anything is claimed.
 */
async function noSubmodules(g: GitRunner, root: string, base: string): Promise<void> {
  const r = await g.tryRun(['cat-file', '-e', `refs/heads/${base}:.gitmodules`], root);
  if (r.status !== 0) return;
  throw new TugError(
    'SubmodulesUnsupported',
    { base_branch: base, path: '.gitmodules' },
    {
      hint: 'work on this plan by hand (tugcode worktree create, then git submodule update --init in that worktree)',
    },
  );
}

/**
 * A branch named `tugplan` (git keeps refs as paths) leaves no room for `tugplan/<slug>` nor the worker
 * branches, which git would refuse only once the run started: refused before the first claim with the
 * rename that clears the way, as `worktree create` does (docs/git.md §3).
 */
async function roomForBranches(g: GitRunner, repo: FlowCtx['repo'], integration: string): Promise<void> {
  const { refTip } = await import('../git/ref-files.js');
  const { shellArg } = await import('../util/shell-arg.js');
  const parts = integration.split('/');
  for (let i = 1; i < parts.length; i++) {
    const blocker = parts.slice(0, i).join('/');
    if ((await refTip(g, repo.commonDir, repo.mainRoot, blocker)) === null) continue;
    throw new TugError(
      'WorktreeExists',
      { reason: `a branch named ${blocker} exists, so git cannot create ${integration}`, branch: blocker },
      { hint: `rename it (git branch -m ${shellArg(blocker)} <new-name>), then run again` },
    );
  }
}

/**
 * A promise that never rejects (nothing is left unobserved when an earlier refusal is thrown first), and
 * its outcome as a function: the value, or the error thrown.
 */
export function settled<T>(p: Promise<T>): Promise<() => T> {
  return p.then(
    (v) => () => v,
    (e: unknown) => () => {
      throw e;
    },
  );
}

/** The identity every step commit needs, checked before the first claim rather than at the first commit. */
async function identityKnown(g: GitRunner, root: string): Promise<void> {
  const vars = ['GIT_AUTHOR_IDENT', 'GIT_COMMITTER_IDENT'];
  const results = await Promise.all(vars.map((v) => g.tryRun(['var', v], root)));
  for (const [i, v] of vars.entries()) {
    const r = results[i]!;
    if (r.status === 0) continue;
    throw new TugError(
      'CommitFailed',
      { worktree: root, cause: 'identity', args: ['var', v], stderr: r.stderr.trim(), exit_code: r.status },
      { hint: 'git config user.name "Your Name" && git config user.email you@example.com' },
    );
  }
}

/**
 * Whether the plan's integration branch exists (read before the run may create it). One that shares no
 * history with the base was not made from it by tugcode: its tree lacks the plan and the project, so the
 * run is refused (IntegrationUnrelated) before a worker checks it out.
 */
export async function integrationExists(ctx: FlowCtx, g: GitRunner, p: Prepared): Promise<boolean> {
  const { refTip } = await import('../git/ref-files.js');
  const tip = await refTip(g, ctx.repo.commonDir, ctx.repo.mainRoot, p.integration);
  if (tip === null) return false;
  const r = await g.tryRun(['merge-base', tip, `refs/heads/${p.base}`], ctx.repo.mainRoot);
  if (r.status === 1)
    throw new TugError('IntegrationUnrelated', { branch: p.integration, base_branch: p.base, plan_path: p.planPath });
  return true;
}

/**
 * `state init` from the committed blob, and reconcile from the integration branch when it existed before
 * this run (heals a crash); a branch this run created from the base holds nothing of the plan's yet. The
 * committed blob is the plan of the run (docs/run.md §1.1 item 1): a structure edited on the base since the
 * last init is taken over as `state init --force` would (completed steps kept, new ones pending), with the
 * warning PlanReinitialized, so running again after an edit or a PlanDrift just works.
 */
export async function initState(
  ctx: FlowCtx,
  p: Prepared,
  o: {
    integrationExisted: boolean;
    warn: (code: WarningSinkCode, message: string, details?: Record<string, unknown>) => void;
  },
): Promise<void> {
  const { initAndReconcile } = await import('../gitflow/state-bridge.js');
  const refs = o.integrationExisted ? [p.integration] : [];
  const onDrift = (summary: string) =>
    o.warn(
      'PlanReinitialized',
      `${p.planPath}: the plan's structure changed on ${p.base} since state init (${summary}); re-initialised as state init --force would`,
      { plan_path: p.planPath, summary },
    );
  await initAndReconcile(ctx, p.planPath, p.blob, refs, 'run', { onDrift });
}

/**
 * The integration branch, created from the base when missing, and brought up to the base when the plan
 * there differs from the base's (catchUpWithBase): the workers' trees must hold the plan of the run, which
 * their claims compare with the state (docs/state.md §3.10). Returns its tip.
 */
export async function ensureIntegrationBranch(ctx: FlowCtx, g: GitRunner, p: Prepared): Promise<string> {
  const { refTip } = await import('../git/ref-files.js');
  const { setBranchPlan } = await import('../git/branch-config.js');
  const { catchUpWithBase, withIntegrationLock } = await import('../gitflow/integrate.js');
  const root = ctx.repo.mainRoot;
  const tip = () => refTip(g, ctx.repo.commonDir, root, p.integration);
  const made = await withIntegrationLock(root, async () => {
    if ((await tip()) !== null) return false;
    await g.run(['branch', '--no-track', p.integration, `refs/heads/${p.base}`], root);
    await setBranchPlan(g, root, p.integration, p.planPath, p.base);
    return true;
  });
  if (!made)
    await catchUpWithBase(g, ctx.repo, { integrationBranch: p.integration, base: p.base, planPath: p.planPath });
  return (await tip())!;
}

/** The commands of a run as the user gave them: flags, or the config's `[run]` values. */
export interface RunPrograms {
  implementer?: string | undefined;
  agent?: string | undefined;
  reviewer?: string | undefined;
  review_agent?: string | undefined;
  resolver?: string | undefined;
}

/**
 * The run's commands with their programs made absolute and checked (docs/run.md §2), before anything is
 * claimed: a flag's program path is resolved against `cwd` (where tugcode runs), a config value's against
 * the repository root; each command the run will use must name a program that exists and is executable
 * (ProgramNotRunnable). Changes nothing; returns the flags and the `[run]` values to run with.
 */
export async function resolvePrograms<I extends RunPrograms>(
  input: I,
  run: RunConfig,
  o: { cwd: string; repoRoot: string; env: NodeJS.ProcessEnv },
): Promise<{ input: I; run: RunConfig }> {
  const { absoluteProgram, implementerArgv, programProblem } = await import('./implementer.js');
  const nextInput = { ...input };
  const nextRun = { ...run };
  const one = async (text: string, base: string, argument: string): Promise<string> => {
    // A refusal names the flag or key the command came from (`the --reviewer command is empty`).
    const abs = absoluteProgram(text, base, `the ${argument} command`);
    const program = implementerArgv(abs)[0]!;
    const problem = await programProblem(program, o.env);
    if (problem)
      throw new TugError('ProgramNotRunnable', {
        argument,
        program: implementerArgv(text)[0],
        reason: problem.reason,
        ...(problem.path ? { path: problem.path } : {}),
        base,
      });
    return abs;
  };
  // A blank --reviewer or --resolver is refused here, a blank --implementer by resolveImplementer.
  const { isAgentName, refuseBlankFlag } = await import('./agents.js');
  for (const flag of ['reviewer', 'resolver'] as const) refuseBlankFlag(flag, input[flag]);
  // Only the commands this run uses: a flag beats config, an agent preset replaces the command.
  const pick = async (flag: 'implementer' | 'reviewer', agent: 'agent' | 'review_agent') => {
    if (input[agent] !== undefined) return;
    if (input[flag] !== undefined) {
      // A blank --implementer is left to resolveImplementer's one refusal of an empty one (docs/run.md §2).
      if (input[flag].trim() !== '') nextInput[flag] = await one(input[flag], o.cwd, `--${flag}`);
    } else if (!run[agent] && run[flag] !== '') nextRun[flag] = await one(run[flag], o.repoRoot, `run.${flag}`);
  };
  await pick('implementer', 'agent');
  await pick('reviewer', 'review_agent');
  // An agent preset runs its CLI by its bare name, looked up on PATH as the spawn does (agents.ts, with the
  // tugcode launcher added first): one not installed is refused here, not after every step was implemented.
  const preset = async (flag: 'implementer' | 'reviewer', agent: 'agent' | 'review_agent') => {
    // The preset this run uses: a flag beats config; both flags, or both config keys, are refused later.
    let name: string | undefined;
    if (input[agent] !== undefined) name = input[flag] === undefined ? input[agent] : undefined;
    else if (input[flag] === undefined && !run[flag]) name = run[agent];
    if (!name || !isAgentName(name)) return; // none, or refused with the flags' own InvalidArgument
    const argument = input[agent] !== undefined ? `--${agent.replace('_', '-')}` : `run.${agent}`;
    const problem = await programProblem(name, o.env);
    if (problem)
      throw new TugError('ProgramNotRunnable', { argument, program: name, reason: problem.reason, preset: true });
  };
  await preset('implementer', 'agent');
  await preset('reviewer', 'review_agent');
  if (input.resolver !== undefined) nextInput.resolver = await one(input.resolver, o.cwd, '--resolver');
  else if (run.resolver) nextRun.resolver = await one(run.resolver, o.repoRoot, 'run.resolver');
  if (run.notify.trim() !== '') nextRun.notify = await one(run.notify, o.repoRoot, 'run.notify');
  return { input: nextInput, run: nextRun };
}
