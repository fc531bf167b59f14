/** Text renderings of the `state` operations' results (the JSON carries the same facts). */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CliEnv } from '../define.js';
import { touchesHeldText } from '../../contract/touches.js';
import { itemProgress, itemProgressText } from '../../contract/status.js';
import { shellArg } from '../../util/shell-arg.js';
import { decideLine } from '../../contract/errors.js';

/** The path the claim stored (realpath); the path as given if it went away since. */
function canonical(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return p;
  }
}

type R = any; // each renderer gets its operation's result; the operation's own type checks the fields

export async function init(r: R, cli: CliEnv, input: { plan: string }): Promise<string> {
  const what = r.reinitialized ? 'Re-initialized' : r.already_initialized ? 'Already initialized' : 'Initialized';
  let text = `${what} ${r.plan_path}: ${r.steps_created} steps, ${r.checklist_items_created} checklist items, ${r.refactors_created} refactors created`;
  // Nothing added: "0 steps … created" would read as if the plan had none; say what is there instead.
  if (
    r.steps_created + r.checklist_items_created + r.refactors_created === 0 &&
    (r.reinitialized || r.already_initialized)
  ) {
    const n = await stepCount(cli, input.plan);
    const steps = n === null ? 'its steps' : `${n} step${n === 1 ? '' : 's'}`;
    text = r.reinitialized
      ? `${what} ${r.plan_path}: no step, checklist item or refactor added; ${n === null ? steps : `its ${steps}`} kept`
      : `${what} ${r.plan_path}: structure unchanged, ${steps}`;
  }
  // What --force deleted: without it, a re-init that only removed steps read as if nothing changed.
  if (r.steps_removed > 0) text += `; ${r.steps_removed} step${r.steps_removed === 1 ? '' : 's'} removed`;
  if (r.implicit_sequential) text += ' (no Depends-on lines: steps run in order)';
  if (r.gitignore_added?.length) text += `\nAdded to .gitignore: ${r.gitignore_added.join(', ')}`;
  return text;
}

/** How many steps (substeps too) the plan has in the state; null when the read fails (the init is done). */
async function stepCount(cli: CliEnv, plan: string): Promise<number | null> {
  const { stateShow } = await import('../../ops/state-read.js');
  const { newCall } = await import('../../ops/context.js');
  const shown = await stateShow(cli.ctx, { plan }, newCall('state show')).catch(() => null);
  return shown?.plans[0]?.steps.length ?? null;
}

export async function claim(r: R, cli: CliEnv, input: { plan: string; worktree?: string }): Promise<string> {
  if (!r.claimed)
    return (
      `Nothing claimed (${r.reason})` +
      (r.blocked_by?.length ? `; blocked by: ${r.blocked_by.join(', ')}` : '') +
      (r.claimed_by ? `; claimed by ${r.claimed_by}` : '') +
      (r.touches_overlap ? `; its Touches overlap running ${r.touches_overlap}` : '') +
      (r.touches_held?.length ? `\nHeld back by Touches: ${touchesHeldText(r.touches_held)}` : '') +
      (r.blocked_steps.length ? `\nBlocked: ${r.blocked_steps.join(', ')}` : '') +
      (r.claimed_steps.length ? `\nClaimed: ${r.claimed_steps.join(', ')}` : '') +
      (r.failed_steps.length ? `\nFailed: ${r.failed_steps.join(', ')}` : '') +
      (r.needs_human_steps ?? []).map((s: string) => `\nNeeds a human: ${s}: ${decideLine(input.plan, s)}`).join('')
    );
  const head =
    `${r.resumed ? 'Resumed' : 'Claimed'} ${r.step_anchor}: ${r.step_title} (attempt ${r.attempt}${r.reclaimed_from_expired ? `, taken over from ${r.previous_owner}` : ''})\n` +
    `Lease expires ${r.lease_expires_at}; ${r.remaining_ready} more ready, ${r.total_remaining} not completed`;
  // What to do next: the step's and its substeps' items with the ordinals `state update` takes, as
  // `state show --step <anchor> --items all` prints them (read after the claim committed).
  const { stateShow } = await import('../../ops/state-read.js');
  const { newCall } = await import('../../ops/context.js');
  // The claim is made: a failing read only leaves the items out, never turns the claim into an error.
  const shown = await stateShow(
    cli.ctx,
    { plan: input.plan, step: r.step_anchor, items: 'all' },
    newCall('state show'),
  ).catch(() => null);
  const plan = shown?.plans[0];
  if (!plan) return head;
  const { renderSteps } = await import('../../state/show-text.js');
  const steps = renderSteps(plan.steps, { now: cli.now(), color: cli.color, anchors: true, plan: input.plan });
  const p = shellArg(input.plan);
  // A claim made for another worktree (`--worktree W`) is W's: the next commands name it too, or run from
  // here they would be NotOwner (docs/output.md §5: left out, --worktree is the current work tree).
  const wt = input.worktree ? ` --worktree ${shellArg(canonical(resolve(cli.ctx.cwd, input.worktree)))}` : '';
  return [
    head,
    '',
    ...steps,
    // The step is known, so the command names it; a substep's items go under the substep's own anchor.
    `Next: tugcode state start ${p} ${r.step_anchor}${wt} --attempt ${r.attempt}; mark items with tugcode state update ${p} ${r.step_anchor}${wt} --task N completed` +
      (plan.steps.length > 1 ? " (a substep's items: its anchor instead)" : ''),
  ].join('\n');
}

export const start = (r: R): string =>
  r.already_started ? `${r.step_anchor} was already in progress (since ${r.started_at})` : `Started ${r.step_anchor}`;

export const heartbeat = (r: R): string => `Lease of ${r.step_anchor} renewed until ${r.lease_expires_at}`;

export function update(r: R): string {
  const c = (k: { open: number; in_progress: number; completed: number; deferred: number }) =>
    itemProgressText(itemProgress(k));
  let text = `Updated ${r.updated} item(s) of ${r.step_anchor}: tasks ${c(r.tasks)}, tests ${c(r.tests)}, checkpoints ${c(r.checkpoints)}`;
  if (r.auto_completed_steps.length) text += `\nAuto-completed: ${r.auto_completed_steps.join(', ')}`;
  return text;
}

export const artifact = (r: R): string =>
  `Recorded ${r.kind} #${r.artifact_id} for ${r.step_anchor}${r.truncated ? ' (truncated)' : ''}`;

export function complete(r: R): string {
  let text = r.already_completed
    ? `${r.step_anchor} was already completed`
    : `Completed ${r.step_anchor}${r.forced ? ` (forced: ${r.force_reason})` : ''}`;
  if (r.commit_hash) text += ` at ${r.commit_hash.slice(0, 12)}`;
  text += r.plan_completed ? '\nThe plan is complete.' : `\n${r.remaining_steps} step(s) not completed`;
  return text;
}

export const release = (r: R): string => `Released ${r.step_anchor}`;

export const fail = (r: R): string =>
  `Attempt ${r.attempt} of ${r.step_anchor} failed (${r.failures} failure(s)); the step is ${r.step_status}`;

export const reset = (r: R): string => {
  const head = `Reset ${r.step_anchor} (was ${r.previous_status}${r.previous_owner ? `, claimed by ${r.previous_owner}` : ''})`;
  // What went with it of the review gate (docs/state.md §3.11): a person's decision is not silently lost.
  const d = r.dropped_review;
  if (!d) return head;
  const what = [
    d.human_decision === 'approved' ? 'the human approval' : '',
    d.human_notes !== null ? 'the notes for the next attempt' : '',
    d.review_commit ? `the kept commit ${d.review_commit.slice(0, 12)}${d.review_ref ? ` (${d.review_ref})` : ''}` : '',
  ].filter(Boolean);
  return what.length ? `${head}; dropped ${what.join(' and ')}` : head;
};

export const decide = (r: R): string =>
  r.decision === 'approve'
    ? `Approved ${r.step_anchor}: the next \`tugcode run\` integrates commit ${String(r.review_commit).slice(0, 12)} as it is`
    : r.decision === 'revise'
      ? `${r.step_anchor} goes back to pending; its next brief carries your notes`
      : `Rejected ${r.step_anchor}: the step is failed`;

export function reconcile(r: R): string {
  const lines = [`Scanned ${r.scanned_commits} commit(s); reconciled ${r.reconciled.length} step(s)`];
  for (const x of r.reconciled)
    lines.push(`  ${x.step_anchor}: ${x.previous_status} → completed at ${x.commit_hash.slice(0, 12)}`);
  for (const x of r.skipped_mismatches)
    lines.push(`  ${x.step_anchor}: skipped, DB has ${x.db_hash.slice(0, 12)}, git has ${x.git_hash.slice(0, 12)}`);
  for (const x of r.skipped_steps) lines.push(`  ${x.step_anchor}: skipped (${x.reason})`);
  if (r.unknown_steps.length) lines.push(`  unknown anchors: ${r.unknown_steps.join(', ')}`);
  return lines.join('\n');
}

export function prune(r: R, cli: CliEnv): string {
  const purge = Boolean((cli.cmd.opts() as { purge?: boolean }).purge);
  const verb = purge ? 'purge' : 'archive';
  return r.pruned.length === 0
    ? 'Nothing to prune'
    : `${r.dry_run ? `Would ${verb}` : purge ? 'Purged' : 'Archived'}: ${r.pruned.join(', ')}`;
}

export function ready(r: R): string {
  const line = (name: string, l: string[]) => `${name.padEnd(10)} ${l.length ? l.join(', ') : '-'}`;
  return [
    line('ready:', r.ready_steps),
    line('claimed:', r.claimed_steps),
    line('blocked:', r.blocked_steps),
    line('completed:', r.completed_steps),
    line('failed:', r.failed_steps),
    ...(r.needs_human_steps.length ? [line('needs you:', r.needs_human_steps)] : []),
    ...(r.expired_claims.length ? [line('expired:', r.expired_claims)] : []),
  ].join('\n');
}

export async function log(r: R, cli: CliEnv, input: { limit?: number; after_id?: number }): Promise<string> {
  const { renderLog } = await import('../../state/log-text.js');
  const { newCall } = await import('../../ops/context.js');
  // The repository was resolved by the operation (the context caches it): its root names the main checkout.
  const mainRoot = await cli.ctx.load(newCall('state log')).then(
    ({ repo }) => repo.mainRoot,
    () => undefined,
  );
  return renderLog(r.events, { mainRoot, omitted: r.omitted, limit: input.limit, after_id: input.after_id });
}

export async function list(r: R, cli: CliEnv): Promise<string> {
  if (!r.plans.length) return 'No plans initialized (tugcode state init <plan>)';
  const { table } = await import('../../util/table.js');
  return table(
    ['plan', 'status', 'steps', 'items', 'claimed'],
    r.plans.map((p: R) => [
      p.plan_path,
      p.status,
      `${p.steps_completed}/${p.steps_total}`,
      // items_completed counts deferred items too (docs/state.md §4): progress counts them apart.
      itemProgressText({
        done: p.items_completed - p.items_deferred,
        deferred: p.items_deferred,
        total: p.items_total,
      }),
      p.claimed_steps.join(', ') || '-',
    ]),
    cli,
  );
}

export const graph = (r: R): string => r.text;

const countsText = (c: R): string =>
  `${c.steps} step(s), ${c.checklist_items} item(s), ${c.step_artifacts} artifact(s), ${c.step_refactors} refactor(s), ` +
  `${c.step_usage ? `${c.step_usage} usage report(s), ` : ''}${c.events} event(s)`;

/** Without --output the document itself is the output (`state export demo > demo.json`). */
export const exported = (r: R): string =>
  r.output === null
    ? JSON.stringify(r.document, null, 2)
    : `Exported ${r.plan_path} to ${r.output}: ${countsText(r.counts)}`;

export const imported = (r: R): string =>
  [
    `${r.replaced ? 'Replaced' : 'Imported'} ${r.plan_path}: ${countsText(r.imported)}`,
    `From: ${r.source.backend} ${r.source.location}`,
    `Into: ${r.backend.kind === 'postgres' ? 'PostgreSQL' : 'SQLite'} ${r.backend.location}`,
  ].join('\n');
