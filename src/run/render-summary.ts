/**
 * The final summary of `tugcode run` in text mode (docs/run.md §1 item 6): a table of the steps this run
 * settled (completed, failed with reason, blocked), a table of per-worker utilisation, then commits and wall
 * time. The error, if any, is not repeated here: it is the one diagnostic line (and hint) on stderr
 * (docs/output.md §1), so a terminal shows it once. cli-table3 is loaded only here, when the table is drawn; the style follows
 * src/cli/table.ts (no borders, bold header only with colour) without importing the CLI layer.
 */
import { duration, painter, shortHash } from './render-text.js';
import type { RunSummary } from './types.js';
import { table } from '../util/table.js';
import { usageLine } from '../contract/usage.js';

export async function summaryText(s: RunSummary, o: { color: boolean }): Promise<string> {
  const paint = painter(o);
  const blocks: string[] = [];
  const stepRows: string[][] = [
    ...s.steps_completed.map((a) => [a, paint('green', 'completed'), '']),
    ...s.failed_steps.map((f) => [f.step_anchor, paint('red', 'failed'), firstLine(f.reason)]),
    ...s.blocked_steps.map((a) => [a, paint('yellow', 'blocked'), '']),
  ];
  if (stepRows.length > 0) blocks.push(await table(['step', 'result', 'detail'], stepRows, o));
  if (s.workers.length > 0) {
    const rows = s.workers.map((w) => [
      w.worker,
      duration(w.busy_ms),
      s.wall_ms > 0 ? `${Math.min(100, Math.round((w.busy_ms / s.wall_ms) * 100))}%` : '-',
    ]);
    blocks.push(await table(['worker', 'busy', 'utilisation'], rows, o));
  }
  const counts = [
    `${s.steps_completed.length} completed`,
    ...(s.failed_steps.length > 0 ? [`${s.failed_steps.length} failed`] : []),
    ...(s.blocked_steps.length > 0 ? [`${s.blocked_steps.length} blocked`] : []),
  ];
  const tail = [
    `${counts.join(', ')} · ${s.commits.length} commit${s.commits.length === 1 ? '' : 's'} · wall ${duration(s.wall_ms)}`,
  ];
  if (s.commits.length > 0) tail.push(`commits: ${s.commits.map(shortHash).join(' ')}`);
  // What the agents used (docs/run.md §7.1): this run's, and the plan's when earlier runs spent too.
  if (s.usage && s.usage.reports > 0) tail.push(`usage: ${usageLine(s.usage)}`);
  if (s.plan_usage && s.plan_usage.reports > (s.usage?.reports ?? 0))
    tail.push(`plan usage: ${usageLine(s.plan_usage)}`);
  return [...blocks, tail.join('\n')].join('\n\n') + '\n';
}

function firstLine(s: string): string {
  const l = (s.split('\n').find((x) => x.trim() !== '') ?? '').trim();
  return l.length > 120 ? l.slice(0, 119) + '…' : l;
}
