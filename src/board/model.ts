/**
 * What the board shows, shaped from the state's own JSON (docs/board.md §3–§4): the one place that decides a
 * step's lane, what it needs from a person and the command that resolves it, its phase and last activity,
 * its attempts and its usage. Pure: the reads are src/ops/board.ts, the files src/board/files.ts.
 *
 * Typed by the shapes `state show` returns through the operations layer (ShownStep picks the fields it
 * reads), and still lenient where the state may grow: a status this board does not know lands in Needs you
 * under its own name, an event it does not know leaves an attempt's outcome alone, and usage is read field
 * by field (a role or a field of a later version is kept or ignored, never an error).
 */
import type { stateShow } from '../ops/state-read.js';
import { shellArg } from '../util/shell-arg.js';
import { itemProgress } from '../contract/status.js';
import { decideCommands } from '../contract/errors.js';
import { RUN_PHASES } from '../contract/schemas/run.js';
import { liveRunNote } from '../run/render-text.js';

export const LANES = ['blocked', 'ready', 'running', 'needs_you', 'done'] as const;
export type Lane = (typeof LANES)[number];

/** Why a step is in Needs you. */
export type NeedKind = 'failed' | 'needs_human' | 'stalled' | 'expired' | 'dead_run' | 'unknown';
/** What the page may do about it (docs/board.md §6): each is one CLI command, never forced. */
export type ActionName = 'reset' | 'release' | 'approve' | 'revise' | 'reject';

export interface Usage {
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  /** All four kinds together (the ledger's `tokens`, else their sum). */
  tokens: number | null;
  cost_usd: number | null;
}
const TOKEN_KEYS = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens'] as const;
const USAGE_KEYS = [...TOKEN_KEYS, 'tokens', 'cost_usd'] as const;

export interface Need {
  kind: NeedKind;
  /** What happened, for people (the failure reason, the reviewer's escalation, the lease that ran out). */
  reason: string;
  /** The command that resolves it (or shows more), ready to paste: the first of `commands`. */
  command: string;
  /**
   * Every command that resolves it, one per choice (a `needs_human` step: approve, revise with notes, reject
   * with a reason); `[command]` when there is one. Additive: `command` stays for older readers.
   */
  commands: string[];
  /** What the page offers when actions are allowed. */
  actions: ActionName[];
}

export interface Owner {
  /** The claim's owner as the state names it (`<host>:<path>` on PostgreSQL). */
  claimed_by: string;
  host: string | null;
  worktree: string;
  /** `w1`, … for a run's worker worktree; the worktree's name otherwise. */
  worker: string | null;
}

export interface Card {
  anchor: string;
  id: string;
  title: string;
  index: number;
  status: string;
  lane: Lane;
  need: Need | null;
  depends_on: string[];
  blocked_by: string[];
  attempt: number;
  failures: number;
  owner: Owner | null;
  lease_expires_at: string | null;
  heartbeat_at: string | null;
  started_at: string | null;
  completed_at: string | null;
  phase: string | null;
  /** The substep the phase runs for (docs/run.md §1.3); null for the step's own, or when not known. */
  phase_substep: string | null;
  last_activity_at: string | null;
  commit: string | null;
  completed_via: string | null;
  /** A `needs_human` step a person approved (`state decide --approve`): the kept commit the next run integrates. */
  approved_commit: string | null;
  /**
   * A `needs_human` step: the commit the reviewer escalated, kept as `refs/tugplan/review/<slug>/<step>`
   * (docs/run.md §6), that `state decide --approve` has the next run integrate; null otherwise.
   */
  kept_commit: string | null;
  /** A person's `state decide --revise` notes, for the step's next attempt (docs/board.md §3); null when none. */
  human_notes: string | null;
  /** Completed items of the step and its substeps; deferred ones are counted apart (docs/state.md §5). */
  items: { done: number; deferred: number; total: number };
  substeps: { done: number; total: number };
  usage: Usage | null;
}

export interface BoardPlan {
  plan_path: string;
  slug: string | null;
  title: string | null;
  status: string;
  progress: { done: number; total: number; percent: number };
  lanes: Record<Lane, number>;
  usage: Usage | null;
  /** The plan file's structure changed since `state init` (docs/board.md §3): the next run takes it over. */
  edited: boolean;
  /** The run holding the plan's lock (docs/run.md §1.8), null when none; `alive` false: its pid is gone. */
  run_driver: RunDriver | null;
  /**
   * The plan's last run that ended (docs/state.md §2): the `tugcode run` that repeats it and when it ended;
   * null when the state records none.
   */
  last_run: { command: string; ended_at: string } | null;
  cards: Card[];
}

/** A run lock's holder as the board shows it (src/ops/board.ts). */
export interface RunDriver {
  pid: number;
  host: string;
  started_at: string;
  alive: boolean | null;
  /** The run that takes the plan's claims over. */
  command: string;
  /** The run's own `--stall-seconds`, when given: the plan's stall hint follows it (docs/board.md §3). */
  stall_seconds?: number;
  /** The workers it started, and its `--workers` when it started fewer. */
  workers?: number;
  workers_requested?: number;
  /**
   * What the plan's line says of a live run, as `tugcode status` does (`run: pid … on … since …, 2 workers`);
   * empty when its pid is gone (its claims are in Needs you instead).
   */
  note: string;
}

/** A run lock's holder as the operations read it (src/ops/board.ts), before the board words it. */
export type HeldBy = Omit<RunDriver, 'note'>;

export interface BoardSnapshot {
  schema: 1;
  repo: { root: string; name: string };
  backend: { kind: string; location: string };
  allow_actions: boolean;
  /** The watchdog's threshold when the configuration has one: a running step silent longer is stalled. */
  stall_seconds: number | null;
  usage: Usage | null;
  plans: BoardPlan[];
}

/** A plan and a step as `state show` returns them through the operations layer (src/ops/state-read.ts). */
type OpsPlan = Awaited<ReturnType<typeof stateShow>>['plans'][number];
type OpsStep = OpsPlan['steps'][number];

/** The parts of a `state show` step the board reads (more may be there; `items` only in a step's detail). */
export type ShownStep = Pick<
  OpsStep,
  | 'anchor'
  | 'id'
  | 'title'
  | 'parent_anchor'
  | 'step_index'
  | 'status'
  | 'attempt'
  | 'failures'
  | 'claimed_by'
  | 'lease_expires_at'
  | 'lease_expired'
  | 'heartbeat_at'
  | 'started_at'
  | 'completed_at'
  | 'commit_hash'
  | 'completed_via'
  | 'fail_reason'
  | 'depends_on'
  | 'blocked_by'
  | 'counts'
  | 'review_commit'
  | 'human_decision'
  | 'usage'
> &
  Partial<Pick<OpsStep, 'items' | 'human_notes'>>;

/** The parts of a `state show` plan the board reads. */
export type ShownPlan = Pick<OpsPlan, 'plan_path' | 'phase_title' | 'status' | 'overall' | 'usage'> & {
  steps: ShownStep[];
} & Partial<Pick<OpsPlan, 'last_run'>>;

/** What `boardRead` returns (src/ops/board.ts), as far as the board reads it. */
export interface BoardRead {
  plans: ShownPlan[];
  backend: { kind: string; location: string };
  repo_root: string;
  stall_seconds: number | null;
  /** By plan path: the run holding the plan's lock (absent: none). */
  run_drivers?: Record<string, HeldBy>;
  /** The plans whose file's structure changed since `state init`. */
  edited?: string[];
}

/** What the board knows of a step besides the state: the run's events, its log files, its latest state events. */
export interface Activity {
  /**
   * From the run this board runs beside (`run --board`): the worker, its phase, its last event, and the
   * watchdog's last activity of the worker's implementer (output, item or file change; docs/run.md §7.3).
   */
  run?: {
    worker: string;
    phase: string | null;
    /** The substep its phase runs for, when a substep's (the `phase` event's `substep_anchor`). */
    substep?: string | undefined;
    event: string;
    at: string;
    active_at?: string | undefined;
  };
  /** From the run's log files of the current attempt (src/board/files.ts); `anchor`: the newest one's (sub)step. */
  files?: { phase: string | null; at: string | null; anchor?: string | undefined };
  /** From the state's events: the latest one's time and the latest reason one gave. */
  events?: { at: string; reason: string | null };
}

export const activityKey = (plan_path: string, anchor: string): string => `${plan_path}\u0000${anchor}`;

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const later = (a: string | null, b: string | null | undefined): string | null => (b && (!a || b > a) ? b : a);

/** `.tugtool/tugplan-<slug>.md` → `<slug>`. */
export function slugOf(plan_path: string): string | null {
  return /(?:^|\/)tugplan-([a-z0-9][a-z0-9-]*)\.md$/.exec(plan_path)?.[1] ?? null;
}

/** A claim's owner: `<host>:<path>` on PostgreSQL, the path alone on SQLite; the worker from the worktree's name. */
export function ownerOf(claimed_by: string | null, backend: string): Owner | null {
  if (!claimed_by) return null;
  const colon = backend === 'postgres' ? claimed_by.indexOf(':') : -1;
  const host = colon > 0 ? claimed_by.slice(0, colon) : null;
  const worktree = colon > 0 ? claimed_by.slice(colon + 1) : claimed_by;
  const worker =
    /\/\.tugtree\/tugplan__[^/]*--([^/]+)$/.exec(worktree)?.[1] ?? worktree.split('/').filter(Boolean).pop() ?? null;
  return { claimed_by, host, worktree, worker };
}

/** A usage object of a later state version (docs/board.md §4), read leniently: null when none of its fields is a number. */
export function usageOf(v: unknown): Usage | null {
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  const u = Object.fromEntries(
    USAGE_KEYS.map((k) => [k, typeof o[k] === 'number' && Number.isFinite(o[k]) ? (o[k] as number) : null]),
  ) as unknown as Usage;
  if (u.tokens === null && TOKEN_KEYS.some((k) => u[k] !== null))
    u.tokens = TOKEN_KEYS.reduce((n, k) => n + (u[k] ?? 0), 0);
  return USAGE_KEYS.some((k) => u[k] !== null) ? u : null;
}

export function sumUsage(list: (Usage | null)[]): Usage | null {
  const present = list.filter((u): u is Usage => u !== null);
  if (present.length === 0) return null;
  const out = Object.fromEntries(USAGE_KEYS.map((k) => [k, null])) as unknown as Record<keyof Usage, number | null>;
  for (const u of present)
    for (const k of USAGE_KEYS) if (u[k] !== null) out[k] = Math.round(((out[k] ?? 0) + u[k]!) * 1e6) / 1e6;
  return out as Usage;
}

/** The step's items over the three kinds, by the one progress rule (itemProgress: deferred is not done). */
function itemCounts(counts: Record<string, unknown>): { done: number; deferred: number; total: number } {
  const sum = { done: 0, deferred: 0, total: 0 };
  for (const kind of ['tasks', 'tests', 'checkpoints']) {
    const c = counts[kind] as Record<string, unknown> | undefined;
    if (!c) continue;
    const n = (status: string) => (typeof c[status] === 'number' ? (c[status] as number) : 0);
    const p = itemProgress({
      open: n('open'),
      in_progress: n('in_progress'),
      completed: n('completed'),
      deferred: n('deferred'),
    });
    sum.done += p.done;
    sum.deferred += p.deferred;
    sum.total += p.total;
  }
  return sum;
}

/** The plan as commands name it: its slug when it has one. */
function planArg(plan_path: string): string {
  return shellArg(slugOf(plan_path) ?? plan_path);
}

/** The phases of a run in which no implementer runs, so no watchdog either. */
const DRIVER_PHASES: ReadonlySet<string> = new Set(RUN_PHASES.filter((p) => p !== 'implementer'));

/**
 * The lane of a top-level step and, in Needs you, why and what resolves it (docs/board.md §3). `now` and
 * `last_activity_at` decide "stalled" only when the configuration has a watchdog threshold.
 */
export function placeStep(
  s: ShownStep,
  o: {
    plan_path: string;
    now: string;
    stall_seconds: number | null;
    last_activity_at: string | null;
    reason: string | null;
    /** The run holding the plan's lock, if any. */
    driver?: HeldBy | null;
    /** The card's phase (`phaseOf`): a run's phase other than its implementer's is never stalled. */
    phase?: string | null;
  },
): { lane: Lane; need: Need | null } {
  const p = planArg(o.plan_path);
  const step = shellArg(s.anchor);
  switch (s.status) {
    case 'completed':
      return { lane: 'done', need: null };
    case 'pending':
      return { lane: s.blocked_by.length > 0 ? 'blocked' : 'ready', need: null };
    case 'failed':
      return {
        lane: 'needs_you',
        need: {
          kind: 'failed',
          reason: s.fail_reason ?? o.reason ?? `failed after ${s.failures} attempt(s)`,
          command: `tugcode state reset ${p} ${step}`,
          commands: [`tugcode state reset ${p} ${step}`],
          actions: ['reset'],
        },
      };
    case 'needs_human': {
      // A person has three choices (docs/run.md §6.3): each is a command, approve first.
      const commands = decideCommands(slugOf(o.plan_path) ?? o.plan_path, s.anchor);
      return {
        lane: 'needs_you',
        need: {
          kind: 'needs_human',
          // The escalation's reason is its event's (`state escalate`): the latest reason the step's events gave.
          reason: o.reason ?? s.fail_reason ?? 'the reviewer escalated it',
          command: commands[0],
          commands: [...commands],
          actions: ['approve', 'revise', 'reject'],
        },
      };
    }
    case 'claimed':
    case 'in_progress': {
      // The run holding the claim is gone (killed): a new run takes it over at once, without waiting out the
      // lease. The page releases it only once its lease ran out (docs/board.md §6): before, the state refuses
      // an unforced reset, and the board never forces (a pid is only known gone on its own host, and a new run
      // may take the lock between the board's look and its reset).
      if (o.driver?.alive === false)
        return {
          lane: 'needs_you',
          need: {
            kind: 'dead_run',
            reason: s.lease_expired
              ? `its run (pid ${o.driver.pid}, started ${o.driver.started_at}) is gone and the lease of ${s.claimed_by ?? 'its worker'} ran out at ${s.lease_expires_at}: a new run takes it over, or release the claim`
              : `its run (pid ${o.driver.pid}, started ${o.driver.started_at}) is gone; the claim of ${s.claimed_by ?? 'its worker'} holds until ${s.lease_expires_at ?? 'its lease expires'} unless a new run takes it over`,
            command: o.driver.command,
            commands: [o.driver.command],
            actions: s.lease_expired ? ['release'] : [],
          },
        };
      if (s.lease_expired)
        return {
          lane: 'needs_you',
          need: {
            kind: 'expired',
            reason: `the lease of ${s.claimed_by ?? 'its owner'} ran out at ${s.lease_expires_at}: its worker stopped heartbeating (a running tugcode run takes it over)`,
            command: `tugcode state reset ${p} ${step}`,
            commands: [`tugcode state reset ${p} ${step}`],
            actions: ['release'],
          },
        };
      const silentMs = o.last_activity_at ? Date.parse(o.now) - Date.parse(o.last_activity_at) : 0;
      // The watchdog watches an implementer only (docs/run.md §7.3): a reviewer, a resolver or the checkpoints
      // silent that long are not ended, so the step is not called stalled then.
      const watched = o.phase === undefined || o.phase === null || !DRIVER_PHASES.has(o.phase);
      if (watched && o.stall_seconds !== null && silentMs > o.stall_seconds * 1000)
        return {
          lane: 'needs_you',
          need: {
            kind: 'stalled',
            reason: `no activity since ${o.last_activity_at} (the watchdog ends an attempt silent for ${o.stall_seconds} s)`,
            command: `tugcode state show ${p} --step ${step}`,
            commands: [`tugcode state show ${p} --step ${step}`],
            actions: [],
          },
        };
      return { lane: 'running', need: null };
    }
    default:
      return {
        lane: 'needs_you',
        need: {
          kind: 'unknown',
          reason: `status ${s.status}, which this board does not know`,
          command: `tugcode state show ${p} --step ${step}`,
          commands: [`tugcode state show ${p} --step ${step}`],
          actions: [],
        },
      };
  }
}

/** The phase a card shows: the run's own word when this board runs beside it, else what the log files say. */
function phaseOf(s: ShownStep, a: Activity | undefined): string | null {
  if (s.status !== 'claimed' && s.status !== 'in_progress') return null;
  return a?.run?.phase ?? a?.files?.phase ?? (s.status === 'claimed' ? 'claimed' : 'started');
}

/** The substep the card's phase runs for, from the same source as `phaseOf`; null for the step's own. */
function phaseSubstepOf(s: ShownStep, a: Activity | undefined): string | null {
  if (s.status !== 'claimed' && s.status !== 'in_progress') return null;
  if (a?.run?.phase) return a.run.substep ?? null;
  const f = a?.files;
  return f?.phase && f.anchor && f.anchor !== s.anchor ? f.anchor : null;
}

/** One top-level step's card. `subs`: its substeps; `activity`: by anchor (the step's and its substeps'). */
export function cardOf(
  s: ShownStep,
  subs: ShownStep[],
  activity: (anchor: string) => Activity | undefined,
  o: { plan_path: string; backend: string; now: string; stall_seconds: number | null; driver?: HeldBy | null },
): Card {
  const own = activity(s.anchor);
  const held = s.status === 'claimed' || s.status === 'in_progress';
  let last: string | null = held ? s.started_at : null;
  let reason: string | null = own?.events?.reason ?? null;
  for (const a of [own, ...subs.map((x) => activity(x.anchor))]) {
    if (!a) continue;
    if (held) last = [a.run?.at, a.run?.active_at, a.files?.at, a.events?.at].reduce(later, last);
    reason ??= a.events?.reason ?? null;
  }
  const phase = phaseOf(s, own);
  const { lane, need } = placeStep(s, { ...o, last_activity_at: last, reason, phase });
  const items = itemCounts(s.counts);
  for (const x of subs) {
    const c = itemCounts(x.counts);
    items.done += c.done;
    items.deferred += c.deferred;
    items.total += c.total;
  }
  // The ledger records a run under the (sub)step it worked on: the card's usage is the step's and its substeps'.
  const usage = sumUsage([usageOf(s.usage), ...subs.map((x) => usageOf(x.usage))]);
  return {
    anchor: s.anchor,
    id: s.id,
    title: s.title,
    index: s.step_index,
    status: s.status,
    lane,
    need,
    depends_on: s.depends_on,
    blocked_by: s.blocked_by,
    attempt: s.attempt,
    failures: s.failures,
    owner: held ? ownerOf(s.claimed_by, o.backend) : null,
    lease_expires_at: held ? s.lease_expires_at : null,
    heartbeat_at: held ? s.heartbeat_at : null,
    started_at: s.started_at,
    completed_at: s.completed_at,
    phase,
    phase_substep: phaseSubstepOf(s, own),
    last_activity_at: last,
    commit: s.commit_hash,
    completed_via: s.completed_via,
    approved_commit: s.status !== 'completed' && s.human_decision === 'approved' ? s.review_commit : null,
    kept_commit: s.status === 'needs_human' ? (s.review_commit ?? null) : null,
    human_notes: s.status !== 'completed' ? (s.human_notes ?? null) : null,
    items,
    substeps: { done: subs.filter((x) => x.status === 'completed').length, total: subs.length },
    usage,
  };
}

/** The top-level step of each step of a plan. */
function topsOf(steps: ShownStep[]): Map<string, string> {
  const parent = new Map(steps.map((s) => [s.anchor, s.parent_anchor]));
  const top = new Map<string, string>();
  for (const s of steps) {
    let a = s.anchor;
    for (let p = parent.get(a); p; p = parent.get(a)) a = p;
    top.set(s.anchor, a);
  }
  return top;
}

/** The plan's cards (top-level steps, in plan order), its lane counts and progress. */
export function planOf(
  p: ShownPlan,
  activity: (plan_path: string, anchor: string) => Activity | undefined,
  o: { backend: string; now: string; stall_seconds: number | null; driver?: HeldBy | null; edited?: boolean },
): BoardPlan {
  const top = topsOf(p.steps);
  const subsOf = new Map<string, ShownStep[]>();
  for (const s of p.steps)
    if (s.parent_anchor !== null) {
      const t = top.get(s.anchor)!;
      (subsOf.get(t) ?? subsOf.set(t, []).get(t)!).push(s);
    }
  const cards = p.steps
    .filter((s) => s.parent_anchor === null)
    .map((s) =>
      cardOf(s, subsOf.get(s.anchor) ?? [], (a) => activity(p.plan_path, a), { ...o, plan_path: p.plan_path }),
    );
  const lanes = Object.fromEntries(LANES.map((l) => [l, 0])) as Record<Lane, number>;
  for (const c of cards) lanes[c.lane]++;
  const usage = usageOf(p.usage) ?? sumUsage(cards.map((c) => c.usage));
  return {
    plan_path: p.plan_path,
    slug: slugOf(p.plan_path),
    title: p.phase_title,
    status: p.status,
    progress: { done: p.overall.steps_completed, total: p.overall.steps_total, percent: p.overall.percent },
    lanes,
    usage,
    edited: o.edited ?? false,
    run_driver: o.driver ? { ...o.driver, note: liveRunNote(o.driver) } : null,
    last_run: p.last_run ? { command: p.last_run.command, ended_at: p.last_run.ended_at } : null,
    cards,
  };
}

/** The whole snapshot the page renders; identical state gives identical JSON (its hash is the SSE event id). */
export function shapeSnapshot(
  read: BoardRead,
  activity: (plan_path: string, anchor: string) => Activity | undefined,
  o: { now: string; allow_actions: boolean },
): BoardSnapshot {
  const plans = read.plans.map((p) =>
    planOf(p, activity, {
      backend: read.backend.kind,
      now: o.now,
      stall_seconds: read.run_drivers?.[p.plan_path]?.stall_seconds ?? read.stall_seconds,
      driver: read.run_drivers?.[p.plan_path] ?? null,
      edited: read.edited?.includes(p.plan_path) ?? false,
    }),
  );
  return {
    schema: 1,
    repo: { root: read.repo_root, name: read.repo_root.split('/').filter(Boolean).pop() ?? read.repo_root },
    backend: read.backend,
    allow_actions: o.allow_actions,
    stall_seconds: read.stall_seconds,
    usage: sumUsage(plans.map((p) => p.usage)),
    plans,
  };
}

// ── the step detail ─────────────────────────────────────────────────────────────────────────────────────

/** A state event as `state log` returns it. */
export interface LoggedEvent {
  id: number;
  at: string;
  step_anchor: string | null;
  command: string;
  actor: string;
  attempt: number | null;
  details: Record<string, unknown>;
}

export interface AttemptView {
  attempt: number;
  owner: string | null;
  started_at: string;
  ended_at: string | null;
  /** running, completed, failed, released, taken over, reset, needs human, or the last event's command. */
  outcome: string;
  reason: string | null;
  commit: string | null;
  /** What the attempt's agent runs used (the ledger's reports, docs/run.md §7.1), and per role. */
  usage: Usage | null;
  by_role: UsageByRole | null;
}

/** One role's share of some usage: `implementer`, `reviewer`, `resolver` (or a role of a later version). */
export interface RoleUsage {
  tokens: number;
  cost_usd: number | null;
  reports: number;
}
export type UsageByRole = Record<string, RoleUsage>;

function addRole(to: UsageByRole | null, role: string, r: RoleUsage): UsageByRole {
  const out = { ...to };
  const was = out[role] ?? { tokens: 0, cost_usd: null, reports: 0 };
  out[role] = {
    tokens: was.tokens + r.tokens,
    cost_usd: r.cost_usd === null ? was.cost_usd : Math.round(((was.cost_usd ?? 0) + r.cost_usd) * 1e9) / 1e9,
    reports: was.reports + r.reports,
  };
  return out;
}

/**
 * A step's usage per role over its units: the `by_role` of each `state show` usage (the step's and its
 * substeps'), summed; null when none has one.
 */
export function rolesOf(usages: unknown[]): UsageByRole | null {
  let out: UsageByRole | null = null;
  for (const u of usages) {
    const by = (u as { by_role?: unknown } | null)?.by_role;
    if (!by || typeof by !== 'object') continue;
    for (const [role, v] of Object.entries(by as Record<string, unknown>)) {
      const r = v as Record<string, unknown> | null;
      if (!r || typeof r.tokens !== 'number') continue;
      out = addRole(out, role, {
        tokens: r.tokens,
        cost_usd: typeof r.cost_usd === 'number' ? r.cost_usd : null,
        reports: typeof r.reports === 'number' ? r.reports : 1,
      });
    }
  }
  return out;
}

/** The latest reason an event gives (a failure, an escalation, a decision's notes), or null. */
export function reasonOf(d: Record<string, unknown>): string | null {
  return str(d.reason) ?? str(d.fail_reason) ?? str(d.notes) ?? str(d.force_reason) ?? null;
}

/**
 * A step's attempts from its events (oldest first): who claimed each, how it ended and why, what it used.
 * Events this board does not know still end an attempt's story with their command's name. With `top`, the
 * events of other anchors (its substeps') count only for usage: the ledger records an implementer run under
 * the substep it worked on, with the top-level step's attempt.
 */
export function attemptsOf(events: LoggedEvent[], top?: string): AttemptView[] {
  const by = new Map<number, AttemptView>();
  const get = (n: number, at: string): AttemptView => {
    let a = by.get(n);
    if (!a) {
      a = {
        attempt: n,
        owner: null,
        started_at: at,
        ended_at: null,
        outcome: 'running',
        reason: null,
        commit: null,
        usage: null,
        by_role: null,
      };
      by.set(n, a);
    }
    return a;
  };
  const end = (a: AttemptView, at: string, outcome: string, reason: string | null = null) => {
    a.ended_at = at;
    a.outcome = outcome;
    if (reason !== null) a.reason = reason;
  };
  const seen = new Set<number>();
  for (const e of [...events].sort((x, y) => x.id - y.id)) {
    if (seen.has(e.id)) continue;
    seen.add(e.id);
    const d = e.details;
    if (e.command === 'takeover' && typeof d.previous_attempt === 'number') {
      end(get(d.previous_attempt, e.at), e.at, 'taken over', `lease expired; taken over by ${e.actor}`);
      get(e.attempt ?? d.previous_attempt + 1, e.at).owner = e.actor;
      continue;
    }
    if (d.reset === true && typeof d.previous_attempt === 'number' && d.previous_attempt > 0) {
      const a = by.get(d.previous_attempt);
      if (a && a.ended_at === null) end(a, e.at, 'reset', 'reset by admin');
      // A reset of a step waiting for a human, or approved, deletes its kept commit (docs/run.md §6.3): the
      // attempt no longer waits on it, nor names it.
      else if (a && (a.outcome === 'needs human' || a.outcome === 'decided: approve')) {
        end(a, e.at, 'reset', 'reset by admin; its kept commit dropped');
        a.commit = null;
      }
      continue;
    }
    if (e.attempt === null || e.attempt <= 0) continue;
    const own = top === undefined || e.step_anchor === top;
    const u = usageOf(d);
    if (!own && !u) continue;
    const a = get(e.attempt, e.at);
    if (u) {
      a.usage = sumUsage([a.usage, u]);
      const role = str(d.role);
      if (role) a.by_role = addRole(a.by_role, role, { tokens: u.tokens ?? 0, cost_usd: u.cost_usd, reports: 1 });
    }
    if (!own) continue;
    if (d.claimed === true) a.owner = e.actor;
    else if (d.failed_attempt === true) end(a, e.at, 'failed', reasonOf(d));
    else if (e.command === 'step_failed') a.reason ??= reasonOf(d);
    else if (d.released === true) end(a, e.at, 'released');
    else if (d.completed === true) {
      end(a, e.at, 'completed');
      a.commit = str(d.commit_hash);
    } else if (typeof d.decision === 'string') {
      // A decision's event names the kept commit too: it ends the attempt as decided, not as escalated.
      end(a, e.at, `decided: ${d.decision}`, reasonOf(d));
      if (d.decision !== 'approve') a.commit = null;
    } else if (typeof d.review_commit === 'string' || e.command.includes('needs_human')) {
      end(a, e.at, 'needs human', reasonOf(d));
      a.commit = str(d.review_commit); // the kept work a decision approves or not
    }
  }
  return [...by.values()].sort((x, y) => x.attempt - y.attempt);
}

/** The anchor of the unit whose parent is not among `steps`: the step a detail's subtree hangs from. */
export function topOf(steps: Pick<ShownStep, 'anchor' | 'parent_anchor'>[]): string | undefined {
  const anchors = new Set(steps.map((s) => s.anchor));
  return steps.find((s) => s.parent_anchor === null || !anchors.has(s.parent_anchor))?.anchor;
}

/** One event as a line: its command, actor and the details in short. */
export function eventLine(e: LoggedEvent): {
  id: number;
  at: string;
  step_anchor: string | null;
  command: string;
  actor: string;
  attempt: number | null;
  details: string;
} {
  const text = JSON.stringify(e.details);
  return {
    id: e.id,
    at: e.at,
    step_anchor: e.step_anchor,
    command: e.command,
    actor: e.actor,
    attempt: e.attempt,
    details: text.length > 300 ? `${text.slice(0, 299)}…` : text,
  };
}
