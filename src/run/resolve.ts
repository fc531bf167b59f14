/**
 * Conflicts resolved in the same attempt (docs/run.md §1.9). When the integration rebase stops on a
 * conflict, the rebase stays stopped in the worker's worktree (under the claim: its heartbeat goes on, the
 * integration lock is released) and the resolver runs there — `run.resolver`, else the implementer (an
 * agent preset gets a conflict prompt) — with the step's brief plus `conflict`. Untrusted like the
 * implementer: nothing outside the worktree may change, and it must leave git to the driver. Then: no
 * conflict markers and no unmerged paths, stage, `rebase --continue` without an editor (again for the next
 * commit that conflicts), each step commit still there, the checkpoints again (and the review gate when a
 * reviewer is configured: StepRun.afterResolve), and integrate, which may rebase once more onto a newer
 * tip. At most `resolve_rounds` resolver runs per attempt; a failed run is a used round. Then the rebase is
 * aborted and the attempt fails `IntegrationConflict` as before (redone on the newer tip).
 */
import { TugError } from '../contract/errors.js';
import type { RebaseStop } from '../gitflow/integrate.js';
import type { PlanStep } from '../plan/types.js';
import type { AgentName } from './agents.js';
import { stateCallIn, timed, type RunOptions } from './context.js';
import { Aborted, StepFailure } from './failure.js';
import { faultPoint } from './fault.js';
import { pastTimeout, type StepRun } from './step.js';
import type { ChildOutcome, ConflictBrief } from './types.js';

/** An integration that landed: the tip it was rebased onto and the new tip. */
export interface Landed {
  before: string;
  after: string;
}

/** One integration try: landed, or a rebase left stopped on a conflict (only when asked to keep it). */
export type Integration = Landed | { stop: RebaseStop };

/** Which command or preset resolves (docs/run.md §1.9): `run.resolver`, else the implementer; null: none. */
export function resolverOf(
  opts: Pick<RunOptions, 'resolver' | 'implementer' | 'agent'>,
): { implementer: string | null; agent: AgentName | null } | null {
  if (opts.resolver) return { implementer: opts.resolver, agent: null };
  if (opts.agent) return { implementer: null, agent: opts.agent };
  if (opts.implementer) return { implementer: opts.implementer, agent: null };
  return null;
}

/** The attempt's resolver runs: how many were used, why the failed ones failed, and their logs. */
interface Rounds {
  used: number;
  max: number;
  failures: string[];
  logs: string[];
}

/** The end of an IntegrationConflict's reason once the rounds are used up: why each one failed. */
const roundsFailed = (r: Rounds) => `${r.used} resolution round(s) did not merge it: ${r.failures.join('; ')}`;

/**
 * Integrate the step's commits, resolving the conflicts of the rebase in the same attempt. `once(keep)`
 * integrates once; with `keep` a conflict comes back as `stop` (the rebase left stopped), without it a
 * conflict fails the attempt (`IntegrationConflict`) as it always did. After a resolution the checkpoints
 * run again, then `afterResolve` (the review gate): `escalated` when its reviewer handed the step to a
 * human instead (nothing integrated; the claim has ended).
 */
export async function integrateResolving(
  x: StepRun,
  units: PlanStep[],
  once: (keep: boolean) => Promise<Integration>,
): Promise<Landed | 'escalated'> {
  const resolver = resolverOf(x.rc.opts);
  const rounds: Rounds = { used: 0, max: resolver ? x.rc.opts.resolveRounds : 0, failures: [], logs: [] };
  const top = units[units.length - 1]!;
  for (;;) {
    // A step a human approved, once the budget is spent (docs/run.md §7.2): its integration costs nothing, but
    // a conflict would take the resolver (an agent, which costs) or a new attempt: a human has it back instead.
    const spentApproved = x.rc.tally.ledger.exhausted && x.rc.tally.humanApproved.has(top.anchor);
    const r = await once(rounds.used < rounds.max || spentApproved).catch((e: unknown) => {
      // The rounds are used up and the rebase conflicted again: the reason says why each round failed (a
      // resolver that ran git itself, …) and the failure names the resolver's logs (docs/run.md §1.9).
      if (!(e instanceof StepFailure) || e.code !== 'IntegrationConflict' || rounds.failures.length === 0) throw e;
      throw new StepFailure(e.code, `${e.reason}; ${roundsFailed(rounds)}`, e.output, e.artifact, rounds.logs);
    });
    if (!('stop' in r)) return r;
    if (spentApproved) {
      await handBack(x, top, r.stop);
      return 'escalated';
    }
    const merged = await timed(x.tr, 'resolve', () => resolveRebase(x, units, r.stop, rounds, resolver!));
    if (merged) {
      // The step's commits now sit on the newer tip with a merge nobody has checked: its checkpoints again,
      // then the reviewer on the merged commits (which may send the implementer back, or a human in).
      const { checkpointsAgain } = await import('./step.js');
      await checkpointsAgain(x, units);
      if ((await x.afterResolve?.(units)) === 'escalated') return 'escalated';
    }
    x.phase('integrate');
  }
}

/**
 * An approved step's conflict once the budget is spent (docs/run.md §7.2): the rebase aborted, the step's
 * commits as they were, and the step waits for a human again with them kept; no resolver runs.
 */
async function handBack(x: StepRun, top: PlanStep, stop: RebaseStop): Promise<void> {
  const { rc, tree } = x;
  const c = await import('../gitflow/conflict.js');
  rc.emit({ type: 'conflict', worker: tree.worker, step_anchor: top.anchor, files: stop.files });
  await c.abortRebase(rc.g, tree.path);
  await rc.g.run(['reset', '--quiet', '--hard', stop.head], tree.path);
  const { keepForHuman } = await import('./review.js');
  await keepForHuman(
    x,
    top,
    `approved, but integrating it conflicts in ${stop.files.join(', ')} and the budget is spent, so no resolver ` +
      'runs: approve it again once the budget is raised',
  );
}

/** `tugplan/<slug>`, or `<remote>/tugplan/<slug>` with --remote: what the reasons name. */
function intoName(x: StepRun): string {
  const { rc } = x;
  return rc.remote ? `${rc.remote.name}/${rc.prep.integration}` : rc.prep.integration;
}

/**
 * The resolver's rounds on a stopped rebase until it is finished. Returns true when it finished with every
 * step commit, false when it must be done again from the step's own commits (a resolver that disturbed
 * the rebase, or a resolution that emptied a step's commit: the round counts). Rounds used up: the rebase
 * is aborted and the attempt fails IntegrationConflict.
 */
async function resolveRebase(
  x: StepRun,
  units: PlanStep[],
  stop: RebaseStop,
  rounds: Rounds,
  resolver: { implementer: string | null; agent: AgentName | null },
): Promise<boolean> {
  const { rc, tree } = x;
  const W = tree.path;
  const g = rc.g;
  const top = units[units.length - 1]!;
  const c = await import('../gitflow/conflict.js');
  const { boundedGitRunner } = await import('../git/bounded.js');
  const rg = boundedGitRunner(rc.ops.env, { timeoutMs: x.left, signal: x.beat.signal });
  let files = stop.files;
  for (;;) {
    rc.emit({ type: 'conflict', worker: tree.worker, step_anchor: top.anchor, files });
    x.phase('resolve');
    // Read while the round prepares (side by side with its other reads).
    const integrated = c.integratedTouching(g, W, { onto: stop.onto, head: stop.head, files });
    integrated.catch(() => undefined);
    for (;;) {
      if (x.beat.signal.aborted) throw new Aborted();
      if (rounds.used >= rounds.max) {
        await c.abortRebase(g, W);
        throw new StepFailure(
          'IntegrationConflict',
          `rebase onto ${intoName(x)} conflicted in ${files.join(', ')}; ${roundsFailed(rounds)}`,
          null,
          'coder_report',
          rounds.logs,
        );
      }
      rounds.used++;
      const r = await resolveRound(x, units, { onto: stop.onto, files, integrated }, rounds, resolver);
      if (r.ok) break;
      rounds.failures.push(`round ${rounds.used}: ${r.why}`);
      if (!r.restorable) {
        // The resolver moved HEAD or ended the rebase itself: start over from the step's own commits.
        await c.abortRebase(g, W);
        await g.run(['reset', '--quiet', '--hard', stop.head], W);
        return false;
      }
      await c.restoreConflict(g, W);
    }
    rc.emit({ type: 'conflict_resolved', worker: tree.worker, step_anchor: top.anchor, files, round: rounds.used });
    rc.tally.resolved.push({ step_anchor: top.anchor, files, round: rounds.used });
    faultPoint(rc.ops.env, 'after-resolve', top.anchor);
    const next = await timed(x.tr, 'resolve.continue', () =>
      c.continueRebase(rg, g, W, { notesRewrite: rc.notesRewrite }),
    ).catch(async (e: unknown) => {
      await c.abortRebase(g, W);
      if (x.beat.signal.aborted) throw new Aborted();
      throw e;
    });
    if (next.done) break;
    if ('error' in next) {
      await c.abortRebase(g, W);
      throw new StepFailure(
        'HookFailed',
        `${top.anchor}: continuing the rebase onto ${intoName(x)} failed: ${next.error}`,
      );
    }
    files = next.files;
  }
  // A resolution that took the integrated side whole leaves a step commit empty, and git drops it.
  const missing = await timed(x.tr, 'resolve.verify', () => missingCommits(x, units, stop.onto));
  if (missing.length === 0) return true;
  rounds.failures.push(`round ${rounds.used}: the resolution left no change in the commit of ${missing.join(', ')}`);
  await g.run(['reset', '--quiet', '--hard', stop.head], W);
  return false;
}

/** The committing units whose commit (by its Tug-Step trailer) is not in `onto..HEAD`. */
async function missingCommits(x: StepRun, units: PlanStep[], onto: string): Promise<string[]> {
  const { trailersFormat, TUG_STEP } = await import('../git/trailers.js');
  const out = await x.rc.g.run(
    ['log', `--format=${trailersFormat([TUG_STEP], { valueOnly: true, separator: '%x2C' })}`, `${onto}..HEAD`],
    x.tree.path,
  );
  const have = new Set(
    out
      .split(/[\n,]/)
      .map((s) => s.trim().replace(/^#/, ''))
      .filter(Boolean),
  );
  return units.filter((u) => !u.no_commit && !have.has(u.anchor)).map((u) => u.anchor);
}

type RoundOutcome = { ok: true } | { ok: false; why: string; restorable: boolean };

/**
 * One resolver run on the stopped rebase: the brief of the unit whose commit is being applied, plus the
 * conflict; its outcome checked (docs/run.md §1.9) and recorded as a `conflict_resolution` artifact. A
 * resolution that holds is staged. Outside writes fail the attempt; a lost claim or a stop aborts it.
 */
async function resolveRound(
  x: StepRun,
  units: PlanStep[],
  stop: Omit<ConflictBrief, 'integrated'> & { integrated: Promise<ConflictBrief['integrated']> },
  rounds: Rounds,
  resolver: { implementer: string | null; agent: AgentName | null },
): Promise<RoundOutcome> {
  const { rc, tree, tr } = x;
  const round = rounds.used;
  const W = tree.path;
  const g = rc.g;
  const c = await import('../gitflow/conflict.js');
  const { headTip } = await import('../git/ref-files.js');
  const { briefState, logPathOf } = await import('./step.js');
  const { stepBrief } = await import('./brief.js');
  const { runStepImplementer } = await import('./agents.js');
  const { groupRecord } = await import('./orphans.js');
  const outside = await import('./outside-check.js');
  const { stateDbPath } = await import('../state/context.js');
  const guard = await import('./plan-guard.js');
  const [applying, span, head, integrated, contract] = await timed(tr, 'resolve.prepare', () =>
    Promise.all([
      c.stepsOf(g, W, 'REBASE_HEAD'),
      outside.OutsideSpan.open(rc, tree, { g }),
      headTip(g, W),
      stop.integrated,
      guard.snapshotContract(W, rc.prep.planPath),
    ]),
  );
  // The unit whose commit git is applying (its trailer); the step itself when none says.
  const u = units.find((v) => applying.includes(v.anchor)) ?? units[units.length - 1]!;
  const conflict: ConflictBrief = { onto: stop.onto, files: stop.files, integrated };
  const state = await briefState(x, u);
  const brief = {
    ...stepBrief(rc.prep.plan, u.anchor, { plan_path: rc.prep.planPath, attempt: x.attempt, ...state }),
    conflict,
  };
  const logPath = logPathOf(rc, u.anchor, x.attempt, `resolve${round}-attempt`);
  rounds.logs.push(logPath);
  const t = Date.now();
  const out = await runStepImplementer(resolver, {
    cwd: W,
    baseEnv: rc.ops.env,
    vars: { worktree: W, repo_root: rc.flow.repo.mainRoot, state_db: stateDbPath(rc.flow.repo.mainRoot, rc.ops.env) },
    brief,
    briefPath: logPathOf(rc, u.anchor, x.attempt, `resolve${round}-brief`).replace(/\.log$/, '.json'),
    timeoutMs: x.left(),
    logPath,
    signal: x.beat.signal,
    pidRecord: groupRecord(rc.flow.repo.mainRoot, rc.prep.slug, tree),
    agentAllow: rc.flow.config.run.agent_allow,
    role: 'the resolver',
  }).finally(() => tr?.('resolver', t));
  // What the resolver used counts whatever became of its round (docs/run.md §7.1), under the claim, a
  // stopped run's too.
  await (await import('./ledger.js')).recordUsage(x, 'resolver', u.anchor, out);
  if (out.aborted || x.beat.signal.aborted) throw new Aborted();
  const tc = Date.now();
  await span.close({ step: u.anchor, attempt: x.attempt, by: 'the resolver', logs: [logPath] }, out);
  // The running plan and config are not the resolver's to change either (plan-guard.ts): the attempt fails.
  const edited = guard.contractChanges(contract, await guard.snapshotContract(W, rc.prep.planPath));
  if (edited.length)
    throw guard.planEditFailure({
      step: u.anchor,
      attempt: x.attempt,
      by: 'the resolver',
      changed: edited,
      out,
      logs: [logPath],
    });
  const outcome = await judge(x, conflict.files, out, head);
  tr?.('resolve.check', tc);
  const report = out.final_message?.trim() || out.tail;
  await rc.store
    .artifact(stateCallIn(rc, W), {
      plan: rc.prep.planPath,
      step: u.anchor,
      worktree: W,
      attempt: x.attempt,
      kind: 'conflict_resolution',
      summary: outcome.ok
        ? `round ${round}: resolved ${conflict.files.join(', ')}`
        : `round ${round} failed: ${outcome.why}`,
      ...(report ? { content: report } : {}),
    })
    .catch((e: unknown) => {
      // A refused write means the claim is gone: the heartbeat says so next; anything else is the run's.
      if (!(e instanceof TugError)) throw e;
    });
  return outcome;
}

/** Whether the resolver's run merged the conflict: exit 0 in time, git left to the driver, no markers, staged. */
async function judge(x: StepRun, files: string[], out: ChildOutcome, head: string | null): Promise<RoundOutcome> {
  const W = x.tree.path;
  const g = x.rc.g;
  const c = await import('../gitflow/conflict.js');
  const { headTip } = await import('../git/ref-files.js');
  const { endedHow } = await import('./child.js');
  if (!c.rebaseInProgress(W) || (await headTip(g, W)) !== head)
    return {
      ok: false,
      restorable: false,
      why: 'the resolver ran git itself (the rebase moved or ended): it must only edit files; the driver continues the rebase',
    };
  if (out.timed_out) return { ok: false, restorable: true, why: pastTimeout(x.rc, 'resolver') };
  if (!out.ok) {
    const last = out.last_line.trim();
    return { ok: false, restorable: true, why: `the resolver ${endedHow(out)}${last ? `: ${last}` : ''}` };
  }
  const marked = c.conflictMarkers(W, files);
  if (marked.length) return { ok: false, restorable: true, why: `conflict markers left in ${marked.join(', ')}` };
  await c.stageResolution(g, W);
  const unmerged = await c.unmergedFiles(g, W);
  if (unmerged.length) return { ok: false, restorable: true, why: `unmerged paths left: ${unmerged.join(', ')}` };
  return { ok: true };
}
