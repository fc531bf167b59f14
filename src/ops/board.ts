/**
 * The reads and actions of `tugcode board` (docs/board.md §5–§6), all through the operations the CLI runs in
 * process: `state log` (the cheap probe for new events), `state show` (the snapshot), `state graph`, a
 * step's events and artifacts, and the admin commands the page may run (`state reset`, `state decide`),
 * each with its own call so its events and envelope are the CLI's. Nothing here spawns a process.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fail, ok, type ErrorEnvelope, type OkEnvelope } from '../contract/envelope.js';
import { toTugError } from '../contract/errors.js';
import { parsePlan } from '../plan/parse.js';
import { newCall, type Call, type OpsContext } from './context.js';
import { stateGraph, stateLog, stateShow } from './state-read.js';
import { stateOf } from './support.js';

/** At most this many events per probe (the probe pages forward on the next tick when there are more). */
export const PROBE_LIMIT = 500;
/** A step detail's latest events and artifacts, and the characters of each artifact's content sent. */
export const DETAIL_EVENTS = 200;
export const DETAIL_ARTIFACTS = 50;
export const ARTIFACT_CONTENT_MAX = 16 * 1024;
/** The most substeps whose usage reports a step's detail reads (one indexed read each). */
export const DETAIL_SUBSTEPS = 100;

/**
 * New events since `after_id` (every state change appends one, a plain heartbeat aside), or, without it,
 * the latest event alone (where the cursor starts, and how a store that went back in time is noticed).
 */
export async function boardProbe(ctx: OpsContext, input: { after_id?: number | undefined }, call: Call) {
  return input.after_id === undefined
    ? stateLog(ctx, { limit: 1, count_omitted: false }, call)
    : stateLog(ctx, { after_id: input.after_id, limit: PROBE_LIMIT, count_omitted: false }, call);
}

/** The `tugcode run` holding a plan's run lock; `alive` false when its pid on this host is gone. */
export interface BoardRunDriver {
  pid: number;
  host: string;
  started_at: string;
  alive: boolean | null;
  /** The run that takes its claims over (its recorded flags, else the plan's last run's, else a placeholder implementer). */
  command: string;
  /** The run's own `--stall-seconds`, when it was given one: its watchdog's, not the configuration's. */
  stall_seconds?: number;
  /** The workers it started, and its `--workers` when it started fewer (as `tugcode status` says them). */
  workers?: number;
  workers_requested?: number;
}

/** Every active and done plan with its steps' status, owner, lease and counts; the backend; the config the board uses. */
export async function boardRead(ctx: OpsContext, _input: Record<string, never>, call: Call) {
  const shown = await stateShow(ctx, { items: 'none' }, call);
  const { repo, config } = await ctx.load(call);
  const run = config.run as { stall_seconds?: unknown };
  // The run holding each plan's lock (docs/run.md §1.8): one whose pid is gone leaves its claims in Needs you.
  const { driverLine, flagNumber, runDriverOf } = await import('../gitflow/run-driver.js');
  const { slugOfPlanPath } = await import('../plan/resolve.js');
  const run_drivers: Record<string, BoardRunDriver> = {};
  for (const p of shown.plans) {
    const slug = slugOfPlanPath(p.plan_path);
    const d = slug === null ? null : runDriverOf(repo.mainRoot, slug);
    if (!d) continue;
    // As status says it: a lock without flags (an older tugcode's) takes the plan's last run's (docs/run.md §1.2).
    const { pid, host, started_at, alive, command, workers, workers_requested } = driverLine(
      d,
      p.plan_path,
      p.steps,
      config.run,
      p.last_run?.run_flags,
    );
    // The holding run's own watchdog only: the last run's may differ.
    const stall = flagNumber(d.run_flags, '--stall-seconds');
    run_drivers[p.plan_path] = {
      pid,
      host,
      started_at,
      alive,
      command,
      ...(stall !== null ? { stall_seconds: stall } : {}),
      ...(workers !== null ? { workers } : {}),
      ...(workers_requested !== undefined ? { workers_requested } : {}),
    };
  }
  // A plan whose structure changed since `state init` (docs/board.md §3), as `tugcode status` says it.
  const edited: string[] = [];
  for (const p of shown.plans) {
    const hash = structureHashOf(join(repo.mainRoot, p.plan_path));
    if (hash === null) continue;
    const { store, sc } = await stateOf(ctx, call);
    const stored = await store.storedPlan(sc, { plan: p.plan_path }).catch(() => null);
    if (stored && stored.structure_hash !== hash) edited.push(p.plan_path);
  }
  return {
    ...shown,
    edited,
    repo_root: repo.mainRoot,
    stall_seconds: typeof run.stall_seconds === 'number' ? run.stall_seconds : null,
    run_drivers,
  };
}

/** A plan file's structure hash by its path, size and mtime: a full read parses only a file that changed. */
const parsedHashes = new Map<string, { key: string; hash: string | null }>();

/** The structure hash of the plan file at `file`; null when it cannot be read or parsed. */
function structureHashOf(file: string): string | null {
  let key: string;
  try {
    const st = statSync(file);
    key = `${st.size}:${st.mtimeMs}`;
  } catch {
    return null;
  }
  const kept = parsedHashes.get(file);
  if (kept?.key === key) return kept.hash;
  let hash: string | null = null;
  try {
    hash = parsePlan(readFileSync(file)).structure_hash;
  } catch {
    hash = null;
  }
  if (parsedHashes.size > 1000) parsedHashes.clear();
  parsedHashes.set(file, { key, hash });
  return hash;
}

/**
 * One top-level step for the detail panel: it and its substeps with every item, its latest events and
 * artifacts, and its substeps' usage reports (the ledger records an implementer run under the substep it
 * worked on, docs/run.md §7.1; the detail shows usage per attempt).
 */
export async function boardStep(ctx: OpsContext, input: { plan: string; step: string }, call: Call) {
  const shown = await stateShow(ctx, { plan: input.plan, step: input.step, items: 'all' }, call);
  const log = await stateLog(ctx, { plan: input.plan, step: input.step, limit: DETAIL_EVENTS }, call);
  const plan = shown.plans[0]!;
  const usage_events: typeof log.events = [];
  for (const sub of plan.steps.filter((s) => s.parent_anchor !== null && s.usage).slice(0, DETAIL_SUBSTEPS)) {
    const l = await stateLog(ctx, { plan: plan.plan_path, step: sub.anchor, limit: DETAIL_EVENTS }, call);
    usage_events.push(...l.events.filter((e) => typeof e.details.usage_id === 'number'));
  }
  const { store, sc } = await stateOf(ctx, call);
  const { artifacts } = await store.artifacts(sc, {
    plan: input.plan,
    step: input.step,
    limit: DETAIL_ARTIFACTS,
    content_max: ARTIFACT_CONTENT_MAX,
  });
  return { plan, events: log.events, usage_events, artifacts };
}

/** `state graph` of one plan (its nodes and edges lay out the page's graph; its Mermaid text is offered as is). */
export async function boardGraph(ctx: OpsContext, input: { plan: string }, call: Call) {
  return stateGraph(ctx, { plan: input.plan, format: 'mermaid' }, call);
}

/** What the page may ask for (docs/board.md §6): never anything forced. */
export type BoardAction =
  | { action: 'reset'; plan: string; step: string }
  | {
      action: 'decide';
      plan: string;
      step: string;
      decision: 'approve' | 'revise' | 'reject';
      notes?: string | undefined;
      reason?: string | undefined;
    };

/**
 * Runs one action as its CLI command would (`state reset <plan> <step>`, `state decide …`): the same
 * operation, a call of that command (so the event's command and actor are the CLI's: actor `admin`), and
 * the same envelope, success or error.
 */
export async function boardAction(ctx: OpsContext, input: BoardAction): Promise<OkEnvelope | ErrorEnvelope> {
  const command = input.action === 'reset' ? 'state reset' : 'state decide';
  const call = newCall(command);
  try {
    let data: object;
    if (input.action === 'reset') {
      const { stateReset } = await import('./state-write.js');
      data = await stateReset(ctx, { plan: input.plan, step: input.step }, call);
    } else {
      const { stateDecide } = await import('./state-write.js');
      data = await stateDecide(
        ctx,
        {
          plan: input.plan,
          step: input.step,
          ...(input.decision === 'approve' ? { approve: true } : {}),
          ...(input.decision === 'revise' ? { revise: input.notes ?? '' } : {}),
          ...(input.decision === 'reject' ? { reject: input.reason ?? '' } : {}),
        },
        call,
      );
    }
    return ok(command, data, call.warnings.items);
  } catch (e) {
    return fail(command, toTugError(e), call.warnings.items);
  }
}
