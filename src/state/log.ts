/**
 * `state log` (docs/state.md §4): without `after_id` the latest `limit` events (default 50, at most 1000)
 * in ascending id order; with it the first `limit` events after that id. `next_after_id` pages forward.
 * `omitted` counts the matching events the limit left out: older ones without `after_id`, newer ones with it.
 */
import { TugError } from '../contract/errors.js';
import { shellArg } from '../util/shell-arg.js';
import type { StateContext } from './context.js';
import { stepArg } from './owner.js';
import { resolvePlanRef, requirePlanRow } from './plan-ref.js';
import { countEvents, listEvents } from './queries/events.js';

export interface LogInput {
  plan?: string | undefined;
  step?: string | undefined;
  limit?: number | undefined;
  after_id?: number | undefined;
  /** ISO instant, already normalized. */
  since?: string | undefined;
  /** Count `omitted` (default true); the board's probes skip the count (docs/board.md §2: one indexed read). */
  count_omitted?: boolean | undefined;
}

export interface LogResult {
  events: LogEvent[];
  next_after_id: number | null;
  /** Matching events left out by the limit (absent when `count_omitted` is false). */
  omitted?: number;
}

export interface LogEvent {
  id: number;
  at: string;
  plan_path: string | null;
  step_anchor: string | null;
  command: string;
  actor: string;
  attempt: number | null;
  details: Record<string, unknown>;
}

export const LOG_DEFAULT_LIMIT = 50;
export const LOG_MAX_LIMIT = 1000;

export async function log(ctx: StateContext, input: LogInput = {}): Promise<LogResult> {
  const limit = input.limit ?? LOG_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > LOG_MAX_LIMIT) {
    throw new TugError('InvalidArgument', {
      reason: `--limit must be an integer from 1 to ${LOG_MAX_LIMIT}`,
      argument: '--limit',
    });
  }
  if (input.step !== undefined && input.plan === undefined)
    throw new TugError(
      'InvalidArgument',
      { reason: '--step needs a plan argument', argument: '--step' },
      { hint: `tugcode state log <plan> --step ${shellArg(input.step)}   (tugcode status lists the plans)` },
    );
  let plan_path: string | undefined;
  if (input.plan !== undefined) {
    const ref = await resolvePlanRef(ctx, input.plan);
    await requirePlanRow(ctx, ref);
    plan_path = ref.plan_path;
  }
  const store = ctx.store;
  const count = input.count_omitted !== false;
  if (!store) return { events: [], next_after_id: input.after_id ?? null, ...(count ? { omitted: 0 } : {}) };
  const step_anchor = input.step === undefined ? undefined : stepArg(input.step);
  const filter = { plan_path, step_anchor, after_id: input.after_id, since: input.since, limit };
  const { rows, omitted } = await store.read(async (c) => {
    const rows = await listEvents(c, filter);
    // Only a full page can have left events out: the count is paid for by long logs alone.
    if (!count || rows.length < limit) return { rows, omitted: 0 };
    const beyond = input.after_id === undefined ? { before_id: rows[0]!.id } : { after_id: rows[rows.length - 1]!.id };
    return { rows, omitted: await countEvents(c, { ...filter, ...beyond }) };
  });
  const events = rows.map((r) => ({
    id: r.id,
    at: r.at,
    plan_path: r.plan_path,
    step_anchor: r.step_anchor,
    command: r.command,
    actor: r.actor,
    attempt: r.attempt,
    details: JSON.parse(r.details_json) as Record<string, unknown>,
  }));
  const last = events[events.length - 1];
  return { events, next_after_id: last ? last.id : (input.after_id ?? null), ...(count ? { omitted } : {}) };
}
