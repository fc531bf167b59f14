/**
 * The final summary of `tugcode run` in text mode (docs/run.md §1 item 6): a table of the steps this run
 * settled (completed, failed with reason, blocked with what it waits on, interrupted) and those it left
 * unclaimed when it stopped claiming early (not run), in plan order; a
 * table of per-worker utilisation (when a worker did something); then the outcome (`plan done` when it is), commits and wall time. The
 * error, if any, is not repeated here: it is the one diagnostic line (and hint) on stderr (docs/output.md
 * §1), so a terminal shows it once. cli-table3 is loaded only here, when the table is drawn; the style
 * follows src/cli/table.ts (no borders, bold header only with colour) without importing the CLI layer.
 */
import { duration, fileList, painter, shortHash } from './render-text.js';
import type { HeldElsewhere, RunSummary } from './types.js';
import { shellArg } from '../util/shell-arg.js';
import { table } from '../util/table.js';
import { decideCommands, raisedBudgetRun, resetCommand, runAgainAfterFailures, tugcodeIn } from '../contract/errors.js';
import { usageLine } from '../contract/usage.js';

/** `next`: the command to run next, the last line (`tugcode merge <plan>` once the plan is done, docs/run.md §1.1 item 6). */
export async function summaryText(s: RunSummary, o: { color: boolean; next?: string | undefined }): Promise<string> {
  const paint = painter(o);
  const blocks: string[] = [];
  // Integrated as a human approved it (docs/run.md §6.3): neither the implementer nor the reviewer ran.
  const approved = new Set(s.human_approved ?? []);
  const rounds = new Map((s.review_rounds ?? []).map((r) => [r.step_anchor, r.rounds]));
  const reviewed = (a: string) => {
    const n = rounds.get(a);
    if (approved.has(a)) return 'approved by a human';
    return n === undefined ? '' : `reviewed, ${n} round${n === 1 ? '' : 's'}`;
  };
  const needs = s.needs_human ?? [];
  const heldBy = new Set((s.held_steps ?? []).map((h) => h.step_anchor));
  const blockedWhy = new Map((s.blocked_reasons ?? []).map((b) => [b.step_anchor, b.reason]));
  // Rows in plan order (completion order says little once workers overlap); unknown anchors last.
  const order = new Map((s.plan_steps ?? []).map((a, i) => [a, i]));
  const rank = (row: string[]) => order.get(row[0]!) ?? order.size;
  const stepRows: string[][] = [
    ...s.steps_completed.map((a) => [a, paint('green', 'completed'), reviewed(a)]),
    // Completed behind the driver's back while it held them (docs/agents.md §1.7): not the driver's work.
    ...(s.completed_outside ?? []).map((c) => [
      c.step_anchor,
      paint('yellow', 'completed outside'),
      (c.own_worktree ? 'by its own implementer (tugcode commit or state complete)' : 'by someone else') +
        (c.kept_commit ? `; its work is ${shortHash(c.kept_commit)}` : ''),
    ]),
    ...s.failed_steps.map((f) => [f.step_anchor, paint('red', 'failed'), firstLine(f.reason)]),
    // The reason as its maker wrote it: a reviewer's says so, the budget's too (docs/run.md §6.3).
    ...needs.map((n) => [n.step_anchor, paint('yellow', 'needs you'), firstLine(n.reason)]),
    ...s.blocked_steps.map((a) => [a, paint('yellow', 'blocked'), firstLine(blockedWhy.get(a) ?? '')]),
    // Behind a step waiting for a human: the decision lets them run (docs/run.md §1.10, as the dry run says).
    ...(s.waiting_reasons ?? []).map((w) => [w.step_anchor, paint('yellow', 'waiting'), firstLine(w.reason)]),
    // Never claimed: the run stopped claiming first (its error says why); the next run takes them.
    ...(s.not_run_steps ?? [])
      .filter((a) => !heldBy.has(a))
      .map((a) => [a, paint('yellow', 'not run'), 'the run stopped claiming before it']),
    // Held by an owner outside the run, which waited on it (docs/run.md §1.4): who, and what frees it.
    ...(s.held_steps ?? []).map((h) => [h.step_anchor, paint('yellow', 'held'), heldRow(h, s)]),
    // Running when the run stopped (docs/run.md §1.1 item 5): nothing of it was kept.
    ...(s.interrupted_steps ?? []).map((i) => [
      i.step_anchor,
      paint('yellow', 'interrupted'),
      i.released
        ? 'stopped mid-step, its claim released: the next run does it again'
        : 'stopped mid-step, its claim not released: free once its lease expires',
    ]),
  ].sort((a, b) => rank(a) - rank(b));
  if (stepRows.length > 0) blocks.push(await table(['step', 'result', 'detail'], stepRows, o));
  // A run in which no worker did anything (nothing was left to run) has no utilisation worth a table.
  if (s.workers.some((w) => w.busy_ms > 0)) {
    const rows = s.workers.map((w) => [
      w.worker,
      // An idle worker reads `0s` like the others, not a precise-looking `0ms`.
      w.busy_ms > 0 ? duration(w.busy_ms) : '0s',
      s.wall_ms > 0 ? `${Math.min(100, Math.round((w.busy_ms / s.wall_ms) * 100))}%` : '-',
    ]);
    blocks.push(await table(['worker', 'busy', 'utilisation'], rows, o));
  }
  if (needs.length > 0) {
    // What to do next (docs/run.md §6.3): a human decides each escalated step, then the plan runs on.
    const plan = (s.error?.details.plan_path as string | undefined) ?? '<plan>';
    const lines = needs.flatMap((n) => [
      `${n.step_anchor} (its commit is kept as ${n.review_ref}; git show ${n.review_ref}):`,
      ...decideCommands(plan, n.step_anchor, s.error?.details).map((c) => `  ${c}`),
    ]);
    // A failed step stays failed through the decisions: the run again needs its reset too (docs/run.md §1.2).
    for (const f of s.failed_steps)
      lines.push(
        `${f.step_anchor} (failed; to run it again):`,
        `  ${resetCommand(plan, f.step_anchor, s.error?.details)}`,
      );
    // After a spent budget, the same budget again would stop the run at once: the flag with `<more>` (§7.2).
    const d = { plan_path: plan, ...s.error?.details };
    const again =
      s.error?.code === 'BudgetExhausted'
        ? raisedBudgetRun(d)
        : runAgainAfterFailures({ failed_steps: s.failed_steps, ...d });
    blocks.push([paint('bold', 'waiting for you:'), ...lines, `then: ${again}`].join('\n'));
  }
  const outside = s.completed_outside?.length ?? 0;
  const counts = [
    outside > 0 ? `${s.steps_completed.length} completed by the driver` : `${s.steps_completed.length} completed`,
    ...(outside > 0 ? [`${outside} completed outside it`] : []),
    ...(s.failed_steps.length > 0 ? [`${s.failed_steps.length} failed`] : []),
    ...(needs.length > 0 ? [`${needs.length} waiting for you`] : []),
    ...(s.blocked_steps.length > 0 ? [`${s.blocked_steps.length} blocked`] : []),
    ...(s.waiting_steps?.length ? [`${s.waiting_steps.length} waiting`] : []),
    ...(s.interrupted_steps?.length ? [`${s.interrupted_steps.length} interrupted`] : []),
    ...(s.held_steps?.length ? [`${s.held_steps.length} held elsewhere`] : []),
    ...(s.not_run_steps && s.not_run_steps.length > heldBy.size
      ? [`${s.not_run_steps.length - heldBy.size} not run`]
      : []),
  ];
  // A run that finds the plan done says so, with what earlier runs (or other hosts) did (docs/run.md §1.1 item 6).
  const already = s.already_completed?.length ?? 0;
  const steps = (n: number) => `${n} step${n === 1 ? '' : 's'}`;
  let outcome = [...counts, ...(already > 0 ? [`${already} already completed`] : [])].join(', ');
  // The headline agrees with the exit status: a done plan whose run failed says so and how (docs/run.md §1.1 item 6).
  if (s.plan_done && s.status === 'error' && s.error)
    outcome = `plan done, but the run ended ${s.error.code}: ${outcome}`;
  else if (s.plan_done)
    outcome =
      s.steps_completed.length === 0 && already > 0
        ? `plan done: nothing to run, all ${steps(already)} already completed`
        : `plan done: ${outcome}`;
  const tail = [
    `${outcome} · ${s.commits.length} commit${s.commits.length === 1 ? '' : 's'} · wall ${duration(s.wall_ms)}`,
  ];
  // Where a failed step's output went (docs/run.md §1.1 item 6): its last attempt's logs; the summary's JSON
  // lists every attempt's.
  for (const f of s.failed_steps) {
    const lines = logLines(f.step_anchor, f.logs ?? []);
    // A hook's refusal is cut in the row: its whole output is at the end of the log of the unit whose commit it
    // refused, which the reason names first (`HookFailed: step-1-2: …`; docs/run.md §1.3).
    if (f.reason.startsWith('HookFailed') && lines.length > 0) {
      const unit = /^HookFailed: ([\w-]+):/.exec(f.reason)?.[1];
      const i = lines.findIndex((l) => unit !== undefined && l.includes(`/${unit}-attempt`));
      lines[Math.max(0, i)] += " (the hook's whole output at its end)";
    }
    tail.push(...lines);
  }
  if (s.commits.length > 0) tail.push(`commits: ${s.commits.map(shortHash).join(' ')}`);
  // Conflicts a resolver merged in the same attempt (docs/run.md §1.9): no step was redone for them.
  for (const c of s.conflicts_resolved ?? [])
    tail.push(`conflict resolved: ${c.step_anchor} (round ${c.round}) in ${fileList(c.files)}`);
  // What the agents used (docs/run.md §7.1): this run's, and the plan's when earlier runs spent too.
  if (s.usage && s.usage.reports > 0) tail.push(`usage: ${usageLine(s.usage)}`);
  if (s.plan_usage && s.plan_usage.reports > (s.usage?.reports ?? 0))
    tail.push(`plan usage: ${usageLine(s.plan_usage)}`);
  if (o.next) tail.push(`next: ${o.next}`);
  return [...blocks, tail.join('\n')].join('\n\n') + '\n';
}

function logLines(anchor: string, logs: string[]): string[] {
  const attemptOf = (p: string) => Number(/-attempt(\d+)\.(?:log|out)$/.exec(p)?.[1] ?? 0);
  const last = Math.max(0, ...logs.map(attemptOf));
  const lines = logs.filter((p) => attemptOf(p) === last).map((p) => `${anchor} log: ${p}`);
  const earlier = new Set(logs.map(attemptOf).filter((a) => a !== last)).size;
  if (earlier > 0 && lines.length > 0)
    lines[lines.length - 1] += ` (and ${earlier} earlier attempt${earlier === 1 ? "'s" : "s'"} beside it)`;
  return lines;
}

/** `held by <owner> until <at>: tugcode state release <plan> <step> --worktree <owner>, or wait for its lease`. */
function heldRow(h: HeldElsewhere, s: RunSummary): string {
  const d = s.error?.details ?? {};
  const plan = (d.plan_path as string | undefined) ?? '<plan>';
  const lease =
    h.lease_expires_at === null
      ? ''
      : h.lease_expired
        ? ` (lease expired at ${h.lease_expires_at})`
        : ` until ${h.lease_expires_at}`;
  const release = `${tugcodeIn(d)} state release ${shellArg(plan)} ${shellArg(h.step_anchor)} --worktree ${shellArg(h.owner)}`;
  return `held by ${h.owner}${lease}: ${release}, or wait for its lease`;
}

function firstLine(s: string): string {
  const l = (s.split('\n').find((x) => x.trim() !== '') ?? '').trim();
  return l.length > 120 ? l.slice(0, 119) + '…' : l;
}
