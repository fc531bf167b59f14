/**
 * The board's view of the state (docs/board.md §5): it reads only while a page is connected, through the
 * operations layer in this process, and publishes a snapshot only when its hash changed, with what changed
 * per plan (the stream's `plans` frames).
 *
 * Every `probeMs` it asks `state log` for events after the last one seen (one indexed read, well under a
 * millisecond); a full read (`state show` of every plan, plus the log files of running steps) follows when
 * events came, when the run beside it reported something, or every `refreshMs` while a step is held (a
 * plain heartbeat appends no event, yet moves the lease and the heartbeat age). Full reads are at least ten
 * times their own duration apart, so the board never takes more than about a tenth of the event loop of the
 * process it runs in (a `tugcode run`); on SQLite those reads are synchronous, on PostgreSQL they go
 * through the pool. A failed read (PostgreSQL restarting) keeps the last snapshot, reports the error and
 * tries again on the next tick.
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { runLockDir } from '../gitflow/run-driver.js';
import { newCall, type Call, type OpsContext } from '../ops/context.js';
import { heldStepLogs, phaseFromLogs } from './files.js';
import {
  activityKey,
  reasonOf,
  shapeSnapshot,
  slugOf,
  type Activity,
  type BoardRead,
  type BoardSnapshot,
  type LoggedEvent,
} from './model.js';

export interface Published {
  hash: string;
  /** The SSE `data:` of the whole snapshot: `{hash, at, snapshot}` as one JSON line (built when first asked). */
  readonly json: string;
  snapshot: BoardSnapshot;
}

/**
 * What changed since the snapshot `base` (docs/board.md §5): the SSE `data:` of a `plans` frame, `{hash, base,
 * at, board?, order?, removed, plans}`. `base` null: there was none before (the first read), so it is no delta.
 */
export interface Delta {
  base: string | null;
  json: string;
}

export type SourceMessage = { kind: 'snapshot'; published: Published; delta: Delta } | { kind: 'status'; json: string };

/** A plan as last published: its JSON, its head's (all but the cards), each card's, its cards' anchors in order. */
interface PlanSent {
  json: string;
  head: string;
  cards: Map<string, string>;
  anchors: string;
}

/** What the run beside the board reports (`run --board`): the fields of its events the board uses. */
export interface RunEventLike {
  type: string;
  at: string;
  plan_path?: string;
  worker?: string;
  step_anchor?: string;
  phase?: string;
  /** The substep a `phase` runs for (docs/run.md §1.3). */
  substep_anchor?: string;
}

export interface SourceOptions {
  ctx: OpsContext;
  allowActions: boolean;
  probeMs?: number;
  refreshMs?: number;
}

/** A read slower than this is reported on the page while it goes on. */
const SLOW_MS = 3000;
/** The most steps the board remembers activity for (the memory of a long-lived board stays bounded). */
const MAX_ACTIVITY = 100_000;

export class BoardSource {
  private readonly subs = new Set<(m: SourceMessage) => void>();
  private readonly probeMs: number;
  private readonly refreshMs: number;
  private current: Published | null = null;
  /** Per plan, what the current snapshot holds (the next delta is against it), and the snapshot's own fields. */
  private sent = new Map<string, PlanSent>();
  private boardHead = '';
  private statusJson: string | null = null;
  private cursor: number | undefined;
  private readonly events = new Map<string, { at: string; reason: string | null }>();
  private readonly runs = new Map<string, NonNullable<Activity['run']>>();
  private runPlan: string | null = null;
  /** Each worker of the run beside the board and the step (its activity key) it holds. */
  private readonly holding = new Map<string, string>();
  /** The run's watchdog: the epoch ms of a worker's implementer's last activity, while one runs. */
  private activeOf: ((worker: string) => number | undefined) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private dueAt = 0;
  private ticking: Promise<void> | null = null;
  private dirty = true;
  private lastFull = 0;
  private fullMs = 0;
  private anyHeld = false;
  private closed = false;
  /** The SQLite file the store has open (OpsContext `storeFileId`): a new one is read anew. */
  private dbFile: string | undefined;
  /** The plan files' sizes and mtimes at the last look. */
  private planFiles: string | undefined;
  constructor(private readonly o: SourceOptions) {
    this.probeMs = o.probeMs ?? 300;
    this.refreshMs = o.refreshMs ?? 2000;
  }

  /** The latest snapshot (null before the first read). */
  get snapshot(): Published | null {
    return this.current;
  }

  /** The latest status line when the last read failed, else null. */
  get status(): string | null {
    return this.statusJson;
  }

  /** Receive every new snapshot and status; reading runs while anyone listens. */
  subscribe(fn: (m: SourceMessage) => void): () => void {
    this.subs.add(fn);
    if (this.subs.size === 1) this.schedule(0);
    return () => {
      this.subs.delete(fn);
      if (this.subs.size === 0 && this.timer) {
        clearTimeout(this.timer);
        this.timer = null;
      }
    };
  }

  /** An event of the run beside the board: its phase and worker on the card, and a read soon. */
  runEvent(e: RunEventLike): void {
    if (e.type === 'run_started' && e.plan_path) this.runPlan = e.plan_path;
    if (!this.runPlan || !e.step_anchor) return;
    const key = activityKey(this.runPlan, e.step_anchor);
    if (e.type === 'claimed' && e.worker) this.holding.set(e.worker, key);
    if (e.type === 'step_completed' || e.type === 'attempt_failed' || e.type === 'claim_lost') {
      this.runs.delete(key);
      if (e.worker && this.holding.get(e.worker) === key) this.holding.delete(e.worker);
    } else {
      const prev = this.runs.get(key);
      this.runs.set(key, {
        worker: e.worker ?? prev?.worker ?? '',
        phase: e.type === 'phase' ? (e.phase ?? null) : e.type === 'claimed' ? 'claimed' : (prev?.phase ?? null),
        substep:
          e.type === 'phase' ? e.substep_anchor : e.type === 'claimed' ? undefined : (prev?.substep ?? undefined),
        event: e.type,
        at: e.at,
        active_at: e.type === 'claimed' ? undefined : prev?.active_at,
      });
    }
    this.dirty = true;
    if (this.subs.size > 0) this.schedule(50);
  }

  /**
   * The run's watchdog's last activity per worker (`run --board`; docs/run.md §7.3: an implementer's output,
   * item or file change), read at each full read: the last activity of the step the worker holds.
   */
  runActivity(fn: (worker: string) => number | undefined): void {
    this.activeOf = fn;
    this.dirty = true;
  }

  /** Read again soon (after an action). */
  refreshSoon(): void {
    this.dirty = true;
    if (this.subs.size > 0) this.schedule(0);
  }

  /** The snapshot now: read first when no page keeps the board reading (a `curl` of /api/snapshot). */
  async now(): Promise<Published | null> {
    if (this.subs.size === 0 && !this.closed) await this.readNow();
    return this.current;
  }

  /** A full read now, after the one under way (ticks never overlap). */
  private async readNow(): Promise<void> {
    while (this.ticking) await this.ticking;
    this.dirty = true;
    this.lastFull = 0;
    const t = this.tick();
    this.ticking = t;
    try {
      await t;
    } finally {
      if (this.ticking === t) this.ticking = null;
    }
  }

  /**
   * One last read for the pages still connected (the run beside the board ended: its last step's card
   * moves to Done before the board stops).
   */
  async flush(): Promise<void> {
    if (this.closed || this.subs.size === 0) return;
    await this.readNow();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
  }

  /** The next tick in `ms` (an earlier one replaces a later one). */
  private schedule(ms: number): void {
    if (this.closed) return;
    const at = Date.now() + ms;
    if (this.timer) {
      if (this.dueAt <= at) return;
      clearTimeout(this.timer);
    }
    this.dueAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.ticking) return this.schedule(this.probeMs);
      this.ticking = this.tick().finally(() => {
        this.ticking = null;
        if (this.subs.size > 0 && !this.timer) this.schedule(this.probeMs);
      });
    }, ms);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    // A call per tick: its warnings (a plan that drifted, …) are not the board's to keep.
    const call = newCall('board');
    // A read that does not answer (PostgreSQL restarting: the store retries for up to two minutes) is said.
    const slow = slowWatch(SLOW_MS, () => {
      const json = JSON.stringify({
        ok: false,
        at: this.o.ctx.clock.now(),
        code: 'Waiting',
        message: `the state has not answered for ${SLOW_MS / 1000} s`,
      });
      this.statusJson = json;
      this.emit({ kind: 'status', json });
    });
    try {
      await this.followDbFile(call);
      this.notePlanFiles();
      await this.probe(call);
      const since = Date.now() - this.lastFull;
      const due = this.dirty || (this.anyHeld && since >= this.refreshMs) || since >= 30_000;
      // Full reads at least ten times their own duration apart (and probeMs at the least).
      if (due && since >= Math.max(this.probeMs, 10 * this.fullMs)) await this.full(call);
      else if (due) this.schedule(Math.max(this.probeMs, 10 * this.fullMs) - since);
      if (this.statusJson !== null) {
        this.statusJson = null;
        this.emit({ kind: 'status', json: JSON.stringify({ ok: true, at: this.o.ctx.clock.now() }) });
      }
    } catch (e) {
      const err = e as { code?: unknown; message?: unknown };
      const json = JSON.stringify({
        ok: false,
        at: this.o.ctx.clock.now(),
        code: typeof err.code === 'string' ? err.code : 'InternalError',
        message: typeof err.message === 'string' ? err.message : String(e),
      });
      if (json !== this.statusJson) this.emit({ kind: 'status', json });
      this.statusJson = json;
      this.dirty = true;
    } finally {
      slow.stop();
    }
  }

  /**
   * A state.db removed or made again while the board is up (docs/board.md §5): the store's open handle
   * still reads the old file, so the board drops it and reads the file the CLI now reads (none: no plan).
   */
  private async followDbFile(call: Call): Promise<void> {
    // The context opens the file the CLI now reads by itself (ops/context.ts `store`); the board's cursor and
    // events belong to the old one.
    await this.o.ctx.store(call);
    const id = this.o.ctx.storeFileId;
    if (this.dbFile !== undefined && id !== this.dbFile) {
      this.cursor = undefined;
      this.events.clear();
      this.dirty = true;
    }
    this.dbFile = id;
  }

  /**
   * A plan file written, or its run lock taken or let go, since the last full read is read again at once (its
   * edit, its run's start and end show, docs/board.md §3). The full read keeps the files' sizes and mtimes as
   * it reads them, so an edit right after it counts.
   */
  private notePlanFiles(): void {
    const snap = this.current?.snapshot;
    if (!snap || this.planFiles === undefined) return;
    if (planFilesKey(snap.repo.root, snap.plans) !== this.planFiles) this.dirty = true;
  }

  /** New events since the cursor: their steps' latest time and reason. */
  private async probe(call: Call): Promise<void> {
    const { boardProbe } = await import('../ops/board.js');
    if (this.cursor === undefined) {
      const { stateLog } = await import('../ops/state-read.js');
      const seed = await stateLog(this.o.ctx, { limit: 500 }, call);
      this.note(seed.events);
      this.cursor = seed.next_after_id ?? 0;
      this.dirty = true;
      return;
    }
    const r = await boardProbe(this.o.ctx, { after_id: this.cursor }, call);
    if (r.events.length > 0) {
      this.note(r.events);
      this.cursor = r.next_after_id ?? this.cursor;
      this.dirty = true;
    }
  }

  private note(events: (LoggedEvent & { plan_path: string | null })[]): void {
    if (this.events.size > MAX_ACTIVITY) this.events.clear();
    for (const e of events) {
      if (!e.plan_path || !e.step_anchor) continue;
      const key = activityKey(e.plan_path, e.step_anchor);
      const prev = this.events.get(key);
      // A reset or a completion starts the step's story again: an old failure's reason no longer applies.
      const fresh = e.details.reset === true || e.details.completed === true || e.details.claimed === true;
      this.events.set(key, { at: e.at, reason: reasonOf(e.details) ?? (fresh ? null : (prev?.reason ?? null)) });
    }
  }

  private async full(call: Call): Promise<void> {
    const t0 = Date.now();
    this.dirty = false;
    const { boardRead, boardProbe } = await import('../ops/board.js');
    const prev = this.current?.snapshot;
    const filesBefore = prev ? planFilesKey(prev.repo.root, prev.plans) : undefined;
    const read: BoardRead = await boardRead(this.o.ctx, {}, call);
    this.planFiles = filesBefore ?? planFilesKey(read.repo_root, read.plans);
    // A store that went back in time (state.db deleted, events purged): the cursor follows it.
    const latest = await boardProbe(this.o.ctx, {}, call);
    const top = latest.events[0]?.id ?? 0;
    if (this.cursor !== undefined && top < this.cursor) {
      this.cursor = top;
      this.events.clear();
    }
    const files = new Map<string, Activity['files']>();
    this.anyHeld = false;
    for (const p of read.plans) {
      const slug = slugOf(p.plan_path);
      const held = p.steps.filter(
        (s) => s.parent_anchor === null && (s.status === 'claimed' || s.status === 'in_progress'),
      );
      if (held.length === 0) continue;
      this.anyHeld = true;
      if (!slug) continue;
      // Only the held steps' files: the directory holds every step's logs of every run (docs/board.md §5).
      const { logs } = await heldStepLogs(
        read.repo_root,
        slug,
        p.steps,
        held.map((s) => s.anchor),
      );
      for (const s of held) {
        const mine = logs.get(s.anchor) ?? [];
        files.set(activityKey(p.plan_path, s.anchor), phaseFromLogs(mine, s.attempt));
      }
    }
    if (this.activeOf)
      for (const [worker, key] of this.holding) {
        const ms = this.activeOf(worker);
        const r = this.runs.get(key);
        if (ms === undefined || !r || !Number.isFinite(ms)) continue;
        const at = new Date(ms).toISOString();
        // Kept once the implementer ended (the watchdog forgets it then): the card's activity never goes back.
        if (!r.active_at || at > r.active_at) r.active_at = at;
      }
    const activity = (plan_path: string, anchor: string): Activity | undefined => {
      const key = activityKey(plan_path, anchor);
      const run = this.runs.get(key);
      const f = files.get(key);
      const ev = this.events.get(key);
      return run || f || ev
        ? { ...(run ? { run } : {}), ...(f ? { files: f } : {}), ...(ev ? { events: ev } : {}) }
        : undefined;
    };
    const snapshot = shapeSnapshot(read, activity, { now: this.o.ctx.clock.now(), allow_actions: this.o.allowActions });
    this.fullMs = Date.now() - t0;
    this.lastFull = Date.now();
    this.publish(snapshot);
  }

  /**
   * The snapshot when it differs from the current one, with what changed per plan (docs/board.md §5): the
   * JSON is built per card and per plan, so a plan whose content did not change is recognised without
   * comparing objects, and the whole JSON (its hash the stream's event id) is the same text as
   * `JSON.stringify(snapshot)` (the plans are the snapshot's last field, the cards the plan's).
   */
  private publish(snapshot: BoardSnapshot): void {
    const plans = new Map<string, PlanSent>();
    for (const p of snapshot.plans) {
      const cards = new Map<string, string>();
      const list: string[] = [];
      for (const c of p.cards) {
        const j = JSON.stringify(c);
        cards.set(c.anchor, j);
        list.push(j);
      }
      const head = JSON.stringify({ ...p, cards: undefined });
      plans.set(p.plan_path, {
        json: `${head.slice(0, -1)},"cards":[${list.join(',')}]}`,
        head,
        cards,
        anchors: JSON.stringify(p.cards.map((c) => c.anchor)),
      });
    }
    const boardHead = JSON.stringify({ ...snapshot, plans: undefined });
    const body = `${boardHead.slice(0, -1)},"plans":[${[...plans.values()].map((p) => p.json).join(',')}]}`;
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 20);
    if (hash === this.current?.hash) return;
    const at = JSON.stringify(this.o.ctx.clock.now());
    const base = this.current?.hash ?? null;
    // Only the plans whose JSON changed, each with its head and only its changed cards; `anchors` when the
    // plan's steps or their order changed (a new plan: all of them).
    const changed: string[] = [];
    for (const [path, p] of plans) {
      const was = this.sent.get(path);
      if (was?.json === p.json) continue;
      const cards = [...p.cards].filter(([a, j]) => was?.cards.get(a) !== j).map(([, j]) => j);
      const anchors = was?.anchors === p.anchors ? '' : `,"anchors":${p.anchors}`;
      changed.push(`${p.head.slice(0, -1)},"cards":[${cards.join(',')}]${anchors}}`);
    }
    const removed = [...this.sent.keys()].filter((path) => !plans.has(path));
    const order = [...plans.keys()];
    const sameOrder = order.length === this.sent.size && [...this.sent.keys()].every((path, i) => path === order[i]);
    const deltaJson =
      `{"hash":${JSON.stringify(hash)},"base":${JSON.stringify(base)},"at":${at}` +
      (boardHead !== this.boardHead ? `,"board":${boardHead}` : '') +
      (sameOrder ? '' : `,"order":${JSON.stringify(order)}`) +
      `,"removed":${JSON.stringify(removed)},"plans":[${changed.join(',')}]}`;
    this.sent = plans;
    this.boardHead = boardHead;
    let json: string | null = null;
    // The whole snapshot's frame only when something asks for it (a page connecting, /api/snapshot).
    this.current = {
      hash,
      snapshot,
      get json() {
        return (json ??= `{"hash":${JSON.stringify(hash)},"at":${at},"snapshot":${body}}`);
      },
    };
    this.emit({ kind: 'snapshot', published: this.current, delta: { base, json: deltaJson } });
  }

  private emit(m: SourceMessage): void {
    for (const fn of [...this.subs]) fn(m);
  }
}

/**
 * Calls `onSlow` once `ms` of the event loop's free time passed (until `stop`). Counted in steps of 250 ms, a
 * step whose timer fires late not counted: the process was busy (the run beside the board verifying
 * refactors in process, docs/board.md §5), not waiting for the state, and a read that was waiting on I/O
 * then goes on before anyone could hear its answer.
 */
export function slowWatch(ms: number, onSlow: () => void): { stop(): void } {
  const STEP = 250;
  let waited = 0;
  let timer: NodeJS.Timeout | null = null;
  const arm = () => {
    const due = Date.now() + STEP;
    timer = setTimeout(() => {
      if (Date.now() - due < STEP) waited += STEP;
      if (waited >= ms) {
        timer = null;
        onSlow();
      } else arm();
    }, STEP);
    timer.unref?.();
  };
  arm();
  return {
    stop: () => {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

/**
 * The plan files' sizes and mtimes and their run locks' holders, one key ('' for a file that cannot be read):
 * a run that takes a plan's lock or lets it go appends no event, yet changes the plan's `run_driver` and,
 * once it ended, its `last run` (docs/board.md §3).
 */
function planFilesKey(root: string, plans: { plan_path: string }[]): string {
  const key = (path: string) => {
    try {
      const st = statSync(path);
      return `${st.size}:${st.mtimeMs}`;
    } catch {
      return '';
    }
  };
  return plans
    .map((p) => {
      const slug = slugOf(p.plan_path);
      return `${key(join(root, p.plan_path))}/${slug ? key(join(runLockDir(root, slug), 'holder.json')) : ''}`;
    })
    .join('|');
}
