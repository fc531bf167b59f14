/**
 * The watchdog of one implementer run (docs/run.md §7.3): a heartbeat keeps the lease alive whatever the
 * agent does, so a looping or hung agent would hold its step until the step timeout. The watchdog ends the
 * run `Stalled` once it shows, for `stall_seconds`, none of:
 *
 * - **output**: the log file's size and mtime (one `stat`, every tick), its growth bounded by `logMax`
 *   (looked at once more when the run ends, and an overflowed log cut back to it);
 * - **item change**: its subtree's item statuses and artifacts in the state (one indexed read);
 * - **file change** in the worktree: `git --no-optional-locks status --porcelain -z --untracked-files=all`
 *   (asynchronous, never takes the index lock the agent may need), the list's hash, and the newest mtime of
 *   at most STAT_MAX of the paths it lists (an edit of a file already modified changes no status line).
 *
 * Cost: the output check every `fast` ms (≤ 5 s); the state and git checks only once the run was quiet for
 * a tick (¼ of stall_seconds, 250 ms to 30 s), at most once per tick. Nothing blocks the event loop: every
 * check is asynchronous, and one tick's checks never overlap the next's. The kill is the step timeout's:
 * the process group, SIGTERM then SIGKILL (child.ts), through the signal it hands to the child.
 */
import { appendFile, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { stateCallIn } from './context.js';
import type { StepRun } from './step.js';

/** The most changed paths whose mtime one check reads. */
const STAT_MAX = 2000;
const TICK_MIN_MS = 250;
const TICK_MAX_MS = 30_000;
const FAST_MAX_MS = 5000;

export interface Watch {
  /** Aborts when the claim's heartbeat aborts, or when the run stalled: the child's signal. */
  signal: AbortSignal;
  /** The seconds of silence that made it stall; null while it did not. */
  stalled(): number | null;
  /**
   * The bytes it had written when it passed `logMax` (ended then, or seen at its end: a fast writer can pass the
   * cap between two ticks and exit); null while it did not.
   */
  overflowed(): number | null;
  /** Stops watching once the run has ended, and looks at the log's size a last time. */
  stop(): Promise<void>;
  /**
   * Cuts an overflowed log back to `logMax` bytes of this run's output, with a line saying so, so a retry does
   * not add another overflow on the disk. Best effort; call once the run's process group is gone.
   */
  cutOverflow(): Promise<void>;
}

/** How often the watchdog looks, for a stall after `stallMs`. */
export function tickOf(stallMs: number): { tick: number; fast: number } {
  const tick = Math.min(TICK_MAX_MS, Math.max(TICK_MIN_MS, Math.floor(stallMs / 4)));
  return { tick, fast: Math.min(tick, FAST_MAX_MS) };
}

/**
 * Watches the implementer run of unit `anchor` (of the claimed top-level step `top`), writing to `logPath`,
 * from now on; `logMax`: the bytes it may write there (`[run] log_max_mb`: an agent printing in a loop would
 * fill the disk long before its step timeout), checked with the output, so passed by at most a tick's worth.
 */
export function watchImplementer(
  x: StepRun,
  o: { logPath: string; anchor: string; top: string; logMax: number },
): Watch {
  const { rc, tree } = x;
  const stallMs = rc.opts.stallMs;
  const { tick, fast } = tickOf(stallMs);
  const ac = new AbortController();
  const onBeat = () => ac.abort();
  x.beat.signal.addEventListener('abort', onBeat, { once: true });
  if (x.beat.signal.aborted) ac.abort();

  const activity = rc.tally.ledger.activity;
  const step = o.anchor;
  let last = Date.now();
  let lastDeep = last;
  let log = { size: -1, mtime: 0 };
  let items: string | null = null;
  let files: string | null = null;
  let stalledFor: number | null = null;
  let overflowedAt: number | null = null;
  /** The log's size before this run: a later run of the same attempt appends to it. */
  let startSize: number | null = null;
  let busy = false;
  const seen = (at: number) => {
    if (at > last) last = Math.min(at, Date.now());
    activity.set(tree.worker, { step, at: last });
  };
  seen(last);
  void stat(o.logPath).then(
    (st) => (startSize ??= st.size),
    () => (startSize ??= 0),
  );

  const check = async () => {
    const now = Date.now();
    const st = await stat(o.logPath).catch(() => null);
    if (st && (st.size !== log.size || st.mtimeMs !== log.mtime)) {
      seen(st.mtimeMs);
      log = { size: st.size, mtime: st.mtimeMs };
    }
    if (st && startSize !== null && st.size - startSize > o.logMax && !ac.signal.aborted) {
      overflowedAt = st.size - startSize;
      ac.abort();
      return;
    }
    // The state and the files only once the output was quiet for a tick, at most once a tick.
    if (now - last < tick || now - lastDeep < tick) return;
    lastDeep = now;
    const a = await rc.store
      .stepActivity(stateCallIn(rc, tree.path), { plan: rc.prep.planPath, step: o.top })
      .catch(() => null);
    if (a) {
      if (items !== null && a.signature !== items) seen(Date.now());
      if (a.last_at) seen(Date.parse(a.last_at));
      items = a.signature;
    }
    const f = await fileActivity(x, tree.path);
    if (f) {
      if (files !== null && f.hash !== files) seen(Date.now());
      if (f.newest > 0) seen(f.newest);
      files = f.hash;
    }
    const idle = Date.now() - last;
    if (idle >= stallMs && !ac.signal.aborted) {
      stalledFor = Math.floor(idle / 1000);
      rc.emit({
        type: 'stalled',
        worker: tree.worker,
        step_anchor: step,
        attempt: x.attempt,
        idle_seconds: stalledFor,
      });
      ac.abort();
    }
  };
  const timer = setInterval(() => {
    if (busy || ac.signal.aborted) return;
    busy = true;
    check()
      .catch(() => undefined)
      .finally(() => {
        busy = false;
      });
  }, fast);
  timer.unref();
  return {
    signal: ac.signal,
    stalled: () => stalledFor,
    overflowed: () => overflowedAt,
    async stop() {
      clearInterval(timer);
      x.beat.signal.removeEventListener('abort', onBeat);
      if (activity.get(tree.worker)?.step === step) activity.delete(tree.worker);
      if (overflowedAt !== null || startSize === null) return;
      const st = await stat(o.logPath).catch(() => null);
      if (st && st.size - startSize > o.logMax) overflowedAt = st.size - startSize;
    },
    async cutOverflow() {
      if (overflowedAt === null || startSize === null) return;
      const keep = startSize + o.logMax;
      await truncate(o.logPath, keep)
        .then(() => appendFile(o.logPath, `\n[… ${overflowedAt! - o.logMax} bytes cut: the log passed log_max_mb]\n`))
        .catch(() => undefined);
    },
  };
}

/** The worktree's changed and untracked paths as a hash, and the newest mtime among them (ms; 0 for none). */
async function fileActivity(x: StepRun, W: string): Promise<{ hash: string; newest: number } | null> {
  const r = await x.rc.g
    .tryRun(['--no-optional-locks', 'status', '--porcelain=v1', '-z', '--untracked-files=all'], W)
    .catch(() => null);
  if (!r || r.status !== 0) return null;
  const paths: string[] = [];
  const entries = r.stdout.split('\0');
  for (let i = 0; i < entries.length && paths.length < STAT_MAX; i++) {
    const e = entries[i]!;
    if (e.length < 4) continue;
    paths.push(e.slice(3));
    if (e[0] === 'R' || e[0] === 'C') i++; // a rename's source follows as its own entry
  }
  let newest = 0;
  for (let i = 0; i < paths.length; i += 64) {
    const times = await Promise.all(
      paths.slice(i, i + 64).map((p) =>
        stat(join(W, p))
          .then((s) => s.mtimeMs)
          .catch(() => 0),
      ),
    );
    for (const t of times) newest = Math.max(newest, t);
  }
  return { hash: createHash('sha1').update(r.stdout).digest('hex'), newest };
}
