/**
 * The run's ledger (docs/run.md §7.1–§7.2): each agent run's usage recorded in the state under the step's
 * claim, announced as a `usage` event, summed for the summary; and the budget, compared with the plan's
 * totals in the state (so a restarted run counts what earlier runs spent), which stops new claims once
 * reached. The implementer's phase records its own runs; the review and conflict phases call `recordUsage`
 * with their role.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { TugError } from '../contract/errors.js';
import { runLogDir } from '../contract/layout.js';
import { topLevelOf } from '../plan/lift.js';
import { addUsage, boundUsage, budgetReachedBy, priced, type Usage, type UsageRole } from '../contract/usage.js';
import { announceChange, stateCallIn, type RunCtx, type RunSetup } from './context.js';
import type { UsageReport } from './implementer.js';
import type { StepRun } from './step.js';

/** The configured budget as words, for warnings and the error. */
function budgetWords(rc: Pick<RunSetup, 'opts'>): string {
  const b: string[] = [];
  if (rc.opts.budgetUsd !== null) b.push(`--budget-usd ${rc.opts.budgetUsd}`);
  if (rc.opts.budgetTokens !== null) b.push(`--budget-tokens ${rc.opts.budgetTokens}`);
  return b.join(' and ');
}

export function hasBudget(rc: Pick<RunSetup, 'opts'>): boolean {
  return rc.opts.budgetUsd !== null || rc.opts.budgetTokens !== null;
}

// An absurd value (1e308) as its exponent, not 103 groups of digits.
const num = (n: number) => (n < 1e16 ? n.toLocaleString('en-US') : Number(n.toPrecision(4)).toExponential());

/**
 * A report as the ledger records it, from whichever source (claude, codex, `TUG_USAGE_OUT`): priced from
 * `[run.prices]` when it has tokens but no cost, and each value held to its bound (boundUsage: docs/run.md
 * §7.1), tokens before pricing (so the price is finite) and the cost after. A value held is a
 * `UsageOutOfBounds` warning naming what was reported.
 */
function asRecorded(rc: Pick<RunSetup, 'opts' | 'warn'>, who: string, reported: Usage): Usage {
  const tokens = boundUsage(reported);
  const withCost = priced(tokens.usage, rc.opts.prices);
  const all = boundUsage(withCost);
  const capped = [...tokens.capped, ...all.capped];
  if (capped.length)
    rc.warn(
      'UsageOutOfBounds',
      // Each value beside what it counts as: the numbers hold commas of their own.
      `${who}: ${capped
        .map(
          (k) =>
            `${k} ${num((reported[k] ?? withCost[k])!)}${reported[k] === null ? ' (priced)' : ''} counted as ${num(all.usage[k]!)}`,
        )
        .join('; ')} (past the ledger's bound)`,
      { fields: capped },
    );
  return all.usage;
}

/**
 * Records one run's report for the unit `anchor` of the claimed step, by `role`: its usage (priced from
 * `[run.prices]` when it has tokens but no cost) in the state, fenced by the claim; a `usage` event; then
 * the budget. Never fails the attempt: a report it cannot record is a warning, and counts nowhere.
 */
export async function recordUsage(x: StepRun, role: UsageRole, anchor: string, report: UsageReport): Promise<void> {
  try {
    await recordReport(x, role, anchor, report);
  } finally {
    // Handled (recorded, or warned about): a report left on disk is one a killed run never got to.
    if (report.usage_file) await rm(report.usage_file, { force: true }).catch(() => undefined);
  }
}

async function recordReport(x: StepRun, role: UsageRole, anchor: string, report: UsageReport): Promise<void> {
  const { rc } = x;
  if (report.usage_warning) rc.warn('UsageUnreadable', `${anchor} (${role}): ${report.usage_warning}`);
  if (!report.usage) {
    // A run the stop (or a lost claim) killed says nothing of what a budget measures.
    if (!x.beat.signal.aborted) noteSilent(rc, anchor, role, 'reported no usage');
    return;
  }
  const usage = asRecorded(rc, `${anchor} (${role})`, report.usage);
  if (usage.cost_usd === null && rc.opts.budgetUsd !== null) noteSilent(rc, anchor, role, 'reported no cost');
  try {
    await rc.store.recordUsage(x.sc, {
      plan: rc.prep.planPath,
      step: anchor,
      worktree: x.tree.path,
      attempt: x.attempt,
      role,
      usage,
    });
  } catch (e) {
    if (!(e instanceof TugError)) throw e;
    // The claim ended meanwhile, or the store refused the report (out of bounds: docs/run.md §7.1). The
    // run's totals never count a report the state does not hold, so the summary's `usage` and the
    // plan's totals agree with `state show`.
    rc.warn('UsageNotRecorded', `${anchor} (${role}): its usage was not recorded: ${e.code}: ${e.message}`);
    return;
  }
  const ledger = rc.tally.ledger;
  ledger.run = addUsage(ledger.run, role, usage);
  ledger.plan = await rc.store
    .usageTotals(stateCallIn(rc, rc.flow.repo.mainRoot), { plan: rc.prep.planPath })
    .catch(() => addUsage(ledger.plan, role, usage));
  rc.emit({
    type: 'usage',
    worker: x.tree.worker,
    step_anchor: anchor,
    attempt: x.attempt,
    role,
    usage,
    plan: { tokens: ledger.plan.tokens, cost_usd: ledger.plan.cost_usd },
  });
  checkBudget(rc);
}

/** The first run that leaves a budget blind is said once (docs/run.md §7.2: never a silent no-op). */
function noteSilent(rc: RunCtx, anchor: string, role: UsageRole, what: string): void {
  const ledger = rc.tally.ledger;
  if (!hasBudget(rc) || ledger.silentWarned) return;
  ledger.silentWarned = true;
  rc.warn(
    'BudgetUnmeasured',
    `the ${role} of ${anchor} ${what}: ${budgetWords(rc)} ${rc.opts.budgetUsd !== null && rc.opts.budgetTokens !== null ? 'do' : 'does'} not count it` +
      (what === 'reported no cost'
        ? ' (set [run.prices] to price its tokens)'
        : ' (see TUG_USAGE_OUT, docs/run.md §7.1)'),
  );
}

/**
 * At the start: the plan's totals so far, and what a budget cannot see whatever the runs do — no agent or
 * command runs that could report, or codex under `--budget-usd` without `[run.prices]` (codex never
 * reports a cost). A command may well report through TUG_USAGE_OUT: it is judged by its first run
 * (noteSilent), not warned about here. Either way the warning is said once per run (docs/run.md §7.2).
 */
export async function startLedger(rc: RunCtx): Promise<void> {
  const ledger = rc.tally.ledger;
  ledger.plan = await rc.store.usageTotals(stateCallIn(rc, rc.flow.repo.mainRoot), { plan: rc.prep.planPath });
  if (!hasBudget(rc)) return;
  const { agent, implementer, reviewer, reviewAgent, resolver } = rc.opts;
  const blind =
    !agent && !implementer && !reviewer && !reviewAgent && !resolver
      ? `${budgetWords(rc)}: no implementer runs, so nothing is counted`
      : agent === 'codex' && rc.opts.budgetUsd !== null && Object.keys(rc.opts.prices).length === 0
        ? `--budget-usd: codex reports tokens but no cost; without [run.prices] its runs cost nothing toward the budget`
        : null;
  if (blind) {
    ledger.silentWarned = true;
    rc.warn('BudgetUnmeasured', blind);
  }
  checkBudget(rc);
}

/** Whether the plan's totals reached a budget. */
export function budgetReached(rc: RunCtx): boolean {
  return budgetReachedBy(rc.tally.ledger.plan, rc.opts);
}

/**
 * Once a budget is reached: no worker claims again (the steps running finish), a `budget_exhausted` event,
 * and the run ends BudgetExhausted (exit 4) with the totals.
 */
export function checkBudget(rc: RunCtx): void {
  const ledger = rc.tally.ledger;
  if (ledger.exhausted || !hasBudget(rc) || !budgetReached(rc)) return;
  ledger.exhausted = true;
  const running = [...rc.tally.held.values()].map((h) => h.step);
  rc.emit({
    type: 'budget_exhausted',
    budget_usd: rc.opts.budgetUsd,
    budget_tokens: rc.opts.budgetTokens,
    usage: ledger.plan,
    running,
  });
  rc.tally.fatal ??= new TugError('BudgetExhausted', {
    plan_path: rc.prep.planPath,
    budget_usd: rc.opts.budgetUsd,
    budget_tokens: rc.opts.budgetTokens,
    usage: ledger.plan,
    running_steps: running,
  });
  // Steps a human approved still integrate (docs/run.md §7.2) unless the run drains for another reason too.
  rc.tally.approvedOnly = !rc.tally.draining;
  rc.tally.draining = true;
  announceChange(rc);
}

/** A `TUG_USAGE_OUT` file's name after `<unit>-`: whose run it was (step.ts, review.ts, resolve.ts name them). */
const LEFT_USAGE = /^(brief|review\d+-attempt|resolve\d+-brief)(\d+)\.usage\.json$/;

/**
 * At adoption (docs/run.md §1.1 item 3, §7.1): the reports a run killed outright (SIGKILL, a second signal)
 * left on disk for the claim `held` of the worker tree `worktree`, recorded under that claim, which the
 * adopting run holds as the same owner (worktree and attempt: the fencing of every owner command), before it
 * releases it. Earlier runs' totals, not this run's: no `usage` event; the plan's totals, read when the
 * ledger starts, count them. One the state refuses is a UsageNotRecorded warning naming its file.
 */
export async function recordLeftUsage(
  rc: RunSetup,
  worktree: string,
  held: { step_anchor: string; attempt: number },
): Promise<void> {
  const dir = runLogDir(rc.flow.repo.mainRoot, rc.prep.slug);
  const files = await readdir(dir).catch(() => [] as string[]);
  const units = rc.prep.plan.steps
    .filter((s) => topLevelOf(rc.prep.plan, s.anchor) === held.step_anchor)
    .map((s) => s.anchor);
  const { readUsageOut } = await import('./implementer.js');
  const sc = stateCallIn(rc, worktree);
  for (const file of files) {
    // `step-2-1-brief3…` starts with `step-2-` too: the unit is the one whose rest is a usage file's.
    let unit: string | undefined;
    let m: RegExpExecArray | null = null;
    for (const u of units) {
      m = file.startsWith(`${u}-`) ? LEFT_USAGE.exec(file.slice(u.length + 1)) : null;
      if (m) {
        unit = u;
        break;
      }
    }
    if (!unit || !m || Number(m[2]) !== held.attempt) continue;
    const role: UsageRole = m[1]!.startsWith('review')
      ? 'reviewer'
      : m[1]!.startsWith('resolve')
        ? 'resolver'
        : 'implementer';
    const path = join(dir, file);
    const report = await readUsageOut(path.replace(/\.usage\.json$/, '.json'));
    try {
      if (report.usage_warning) rc.warn('UsageUnreadable', `${unit} (${role}): ${report.usage_warning}`);
      if (!report.usage) continue;
      await rc.store.recordUsage(sc, {
        plan: rc.prep.planPath,
        step: unit,
        worktree,
        attempt: held.attempt,
        role,
        usage: asRecorded(rc, `${unit} (${role})`, report.usage),
      });
    } catch (e) {
      if (!(e instanceof TugError)) throw e;
      rc.warn(
        'UsageNotRecorded',
        `${unit} (${role}): the usage an interrupted run left in ${path} was not recorded: ${e.code}: ${e.message}`,
        { file: path },
      );
    } finally {
      await rm(path, { force: true }).catch(() => undefined);
    }
  }
}
