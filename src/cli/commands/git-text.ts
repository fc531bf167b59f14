/** Text renderings of the git-flow operations' results. */
import type { CliEnv } from '../define.js';
import { table } from '../../util/table.js';
import { shellArg } from '../../util/shell-arg.js';
import { usdText, type UsageTotals } from '../../contract/usage.js';
import { deadDriverLines } from './driver-text.js';
import { decideCommands, resetCommand } from '../../contract/errors.js';
import { noteLine } from '../../contract/status.js';
import { slugOfPlanPath } from '../../plan/resolve.js';
import { liveRunNote } from '../../run/render-text.js';

type R = any; // each renderer gets its operation's result

export const worktreeCreate = (d: R): string =>
  [
    `${d.reused ? 'reusing' : 'created'} ${d.worktree_path}`,
    `branch ${d.branch_name} (from ${d.base_branch}), plan ${d.plan_path}`,
    `ready: ${d.ready_steps.join(', ') || '(none)'}   all: ${d.all_steps.length} step(s)`,
  ].join('\n');

export async function worktreeList(d: R, cli: CliEnv): Promise<string> {
  if (!d.worktrees.length) return 'no worktrees under .tugtree/';
  return table(
    ['worktree', 'branch', 'head', 'flags', 'plan', 'holds'],
    d.worktrees.map((w: R) => [
      w.worktree_path,
      w.branch ?? '(detached)',
      w.head?.slice(0, 12) ?? '-',
      [w.missing ? 'MISSING' : '', w.dirty ? 'dirty' : ''].filter(Boolean).join(',') || '-',
      w.plan_path ?? '(no plan)',
      w.claimed_steps.map((c: R) => `${c.step_anchor}${c.lease_expired ? ' (expired)' : ''}`).join(', ') || '-',
    ]),
    cli,
  );
}

export const worktreeRemove = (d: R): string =>
  [
    `removed ${d.worktree_path}`,
    d.branch_deleted
      ? `deleted branch ${d.branch} (was ${d.branch_tip?.slice(0, 12)}; restore with git branch ${d.branch} ${d.branch_tip})`
      : '',
    d.released_claims.length ? `released: ${d.released_claims.map((c: R) => c.step_anchor).join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('\n');

/**
 * What to run after a commit whose step did not complete: for the step's own blockers the error's hint
 * (clear them, then finish the step), else `state reconcile`, which completes it from the trailers later.
 */
function commitFix(d: R): string {
  const hint: string | undefined = d.state_error?.error.hint;
  if (hint && ['open_items', 'substeps', 'refactors'].includes(d.state_failure_reason)) return `next: ${hint}`;
  // The commit is not on the integration branch, so reconcile has nothing to find: the conflict is the
  // user's to resolve on the worktree's branch (docs/git.md §4.2).
  if (d.state_failure_reason === 'integration_conflict' && d.integration_branch) {
    const files: string[] = d.state_error?.error.details?.files ?? [];
    const these = files.length
      ? `resolve ${files.join(', ')}, git add ${files.length === 1 ? 'it' : 'them'}`
      : 'resolve';
    return (
      `next: in the worktree of ${d.branch}: git rebase ${d.integration_branch}, ${these} and git rebase --continue; ` +
      'then run this tugcode commit --integrate again'
    );
  }
  return `heal later with: tugcode state reconcile ${shellArg(d.state_error?.error.details?.plan_path ?? '<plan>')}`;
}

export const commit = (d: R): string =>
  [
    d.committed
      ? `committed ${d.commit_hash.slice(0, 12)} on ${d.branch} (${d.files_staged.length} file(s))`
      : `nothing new to commit: ${d.commit_hash.slice(0, 12)} on ${d.branch} is this step's commit`,
    d.integrated
      ? `integrated into ${d.integration_branch}`
      : d.integration_branch
        ? `NOT integrated into ${d.integration_branch}: the commit is only on ${d.branch}`
        : '',
    d.state_updated ? `state: step completed${d.plan_completed ? '; plan completed' : ''}` : '',
    d.state_update_failed
      ? `state NOT updated (${d.state_failure_reason}): ${d.state_error?.error.message}\n  ${commitFix(d)}`
      : '',
  ]
    .filter(Boolean)
    .join('\n');

export function merge(d: R): string {
  // A dry run of a merge already done says so, as the merge itself would.
  const verb = d.already_merged ? 'already merged' : d.dry_run ? 'would merge' : 'merged';
  return [
    `${verb} ${d.branch} into ${d.into}${d.merge_commit ? ` (${d.merge_commit.slice(0, 12)})` : ''}: ${d.steps_included.length} step(s)`,
    ...d.worktrees_removed.map((w: R) => `${d.dry_run ? 'would remove' : 'removed'} worktree ${w}`),
    ...d.branches_deleted.map((b: R) => `${d.dry_run ? 'would delete' : 'deleted'} branch ${b}`),
    ...d.kept.map((k: R) => `kept ${k.branch}${k.worktree_path ? ` (${k.worktree_path})` : ''}: ${k.reason}`),
  ].join('\n');
}

const BAR = 12;
/** The plan's usage in the notes column: `$1.25, 120,000 tokens` (docs/git.md §6). */
function usageNote(u: UsageTotals): string {
  const tokens = `${u.tokens.toLocaleString('en-US')} tokens`;
  return u.cost_usd === null ? `used ${tokens}` : `spent ${usdText(u.cost_usd)}, ${tokens}`;
}

export async function status(d: R, cli: CliEnv): Promise<string> {
  if (d.plans.length === 0) return 'no plans (.tugtool/tugplan-*.md)';
  const dead = deadDriverLines(d.plans, cli.now());
  const t = await table(
    ['plan', 'steps', 'progress', 'status', 'notes'],
    d.plans.map((p: R) => {
      const filled = Math.floor((BAR * p.percent) / 100);
      const notes = [
        liveRunNote(p.run_driver),
        p.claimed_steps.length ? `claimed: ${p.claimed_steps.join(', ')}` : '',
        p.plan_error ? `invalid: ${p.plan_error.code} ${p.plan_error.message} — see ${p.plan_error.command}` : '',
        p.structure_changed
          ? "edited: the plan's structure changed since state init; the next tugcode run re-initialises it (completed steps kept)"
          : '',
        p.failed_steps.length ? `failed: ${p.failed_steps.join(', ')} (see below)` : '',
        ...(p.revised_steps ?? []).map((v: R) => `revised: ${v.step_anchor} (${noteLine(v.notes)})`),
        ...(p.approved_steps ?? []).map(
          (a: R) =>
            `approved: ${a.step_anchor} (the next tugcode run integrates its kept commit${a.review_commit ? ` ${a.review_commit.slice(0, 12)}` : ''})`,
        ),
        p.needs_human_steps?.length ? `needs you: ${p.needs_human_steps.join(', ')} (see below)` : '',
        p.source === 'checkboxes' ? '(from checkboxes; no state)' : '',
        p.usage ? usageNote(p.usage) : '',
      ].filter(Boolean);
      // An invalid plan file reads `invalid`, not active (docs/git.md §6); one with no steps to count (empty,
      // binary) and no state shows `-` rather than a progress of 0/0.
      const counted = !p.plan_error || p.source === 'state' || p.steps_total > 0;
      return [
        p.plan_path,
        counted ? `${p.steps_completed}/${p.steps_total}` : '-',
        counted ? `${'█'.repeat(filled)}${'░'.repeat(BAR - filled)} ${String(p.percent).padStart(3)}%` : '-',
        p.plan_error ? 'invalid' : p.status,
        notes.join('  ') || '-',
      ];
    }),
    cli,
  );
  const below = [...decideLines(d.plans), ...dead];
  return below.length ? `${t}\n\n${below.join('\n')}` : t;
}

/**
 * The literal decisions for each step waiting for a human (docs/git.md §6), as the run's summary words
 * them (docs/run.md §6.3): a partial `tugcode state decide` leaves the plan, step and flags to guess.
 */
function decideLines(plans: R[]): string[] {
  return plans.flatMap((p: R) => [
    ...(p.needs_human_steps ?? []).flatMap((a: string) => [
      `${p.plan_path}: ${a} waits for your decision:`,
      ...decideCommands(slugOfPlanPath(p.plan_path) ?? p.plan_path, a).map((c) => `  ${c}`),
    ]),
    // A failed step stays failed until reset (docs/run.md §1.2): the way out, as the run's hint names it.
    ...(p.failed_steps ?? []).flatMap((a: string) => [
      `${p.plan_path}: ${a} failed; to run it again:`,
      `  ${resetCommand(slugOfPlanPath(p.plan_path) ?? p.plan_path, a)}`,
    ]),
  ]);
}

/**
 * One table whatever the outcome (docs/git.md §7): a success renders `data`, a DoctorFailed its `details`
 * (same checks and summary). A skipped check reads `skip`, never `ok`.
 */
export async function doctor(d: R, cli: CliEnv): Promise<string> {
  const mark: Record<string, string> = { pass: 'ok', warn: 'WARN', fail: 'FAIL' };
  const rows = d.checks.map((c: R) => [
    c.skipped ? 'skip' : (mark[c.status] ?? c.status),
    c.name,
    c.skipped
      ? String(c.message).replace(/^skipped: /, '')
      : c.status === 'pass'
        ? c.message
        : `${c.message}\nfix: ${c.fix}`,
  ]);
  const s = d.summary;
  const skipped = s.skipped ?? 0;
  const summary = `${s.total} checks: ${s.pass - skipped} ok, ${skipped} skipped, ${s.warn} warning(s), ${s.fail} failed`;
  return `${await table(['', 'check', 'result'], rows, cli)}\n\n${summary}`;
}
