/**
 * The live view of `tugcode run` on a TTY (docs/run.md §1): one line per worker (step, phase, elapsed) and
 * the plan's progress bar, redrawn in place with ANSI cursor movement (no dependency). Failures, lost
 * claims and completed steps are also printed as permanent lines above the block.
 */
import { attemptText, duration, eventLine, painter, planSpend, unitText, waitingText } from './render-text.js';
import type { RenderOptions } from './render.js';
import type { RunEvent, WorkerName } from './types.js';

/** The live view takes the renderer's options (src/run/render.ts). */
export type LiveOptions = RenderOptions;

type WorkerState =
  | { kind: 'idle'; since: number }
  | { kind: 'waiting'; since: number; why: string }
  /** `attempt`: the claim's attempt text past the first (render-text.ts attemptText), else ''. */
  /** `shown`: the step as its line says it, with the substep its phase runs for (render-text.ts unitText). */
  | { kind: 'busy'; step: string; shown: string; attempt: string; phase: string; since: number; claimed: number }
  | { kind: 'stopped'; reason: 'done' | 'signal' };

const BAR_WIDTH = 24;

export class LiveView {
  private readonly workers = new Map<WorkerName, WorkerState>();
  private readonly started: number;
  private done: number;
  private failedAttempts = 0;
  /** Steps escalated to a human during this run (docs/run.md §6.3). */
  private needsHuman = 0;
  /** Conflicts a resolver merged (docs/run.md §1.9). */
  private resolved = 0;
  /** The plan's spend after the last `usage` event, if any came. */
  private spend: { tokens: number; cost_usd: number | null } | null = null;
  /** Lines of the block currently on screen (the cursor sits just below it). */
  private shown = 0;
  private timer: ReturnType<typeof setInterval> | null;
  private closed = false;

  constructor(private readonly o: LiveOptions) {
    this.started = o.now();
    this.done = o.steps_done;
    for (const w of o.workers) this.workers.set(w, { kind: 'idle', since: this.started });
    this.timer = setInterval(() => this.draw(), 1000);
    this.timer.unref?.();
  }

  event(e: RunEvent): void {
    if (this.closed) return;
    const now = this.o.now();
    let permanent: string | null = null;
    switch (e.type) {
      case 'run_started':
        permanent = eventLine(e, this.o);
        break;
      case 'claimed':
        this.workers.set(e.worker, {
          kind: 'busy',
          step: e.step_anchor,
          shown: e.step_anchor,
          attempt: e.attempt > 1 ? attemptText(e) : '',
          phase: 'claimed',
          since: now,
          claimed: now,
        });
        break;
      case 'phase': {
        const w = this.workers.get(e.worker);
        const claimed = w?.kind === 'busy' && w.step === e.step_anchor ? w.claimed : now;
        const attempt = w?.kind === 'busy' ? w.attempt : '';
        const shown = unitText(e);
        this.workers.set(e.worker, {
          kind: 'busy',
          step: e.step_anchor,
          shown,
          attempt,
          phase: e.phase,
          since: now,
          claimed,
        });
        break;
      }
      case 'step_completed':
        this.done = Math.min(this.o.steps_total, this.done + 1);
        this.workers.set(e.worker, { kind: 'idle', since: now });
        permanent = eventLine(e, this.o);
        break;
      case 'attempt_failed':
        this.failedAttempts++;
        this.workers.set(e.worker, { kind: 'idle', since: now });
        permanent = eventLine(e, this.o);
        break;
      case 'claim_lost':
        this.workers.set(e.worker, { kind: 'idle', since: now });
        permanent = eventLine(e, this.o);
        break;
      case 'review':
        // The worker stays on its step (a REVISE round, or integrating next): the verdict is a permanent line.
        permanent = eventLine(e, this.o);
        break;
      case 'needs_human':
        this.needsHuman++;
        for (const [name, w] of this.workers)
          if (w.kind === 'busy' && w.step === e.step_anchor) this.workers.set(name, { kind: 'idle', since: now });
        break;
      case 'conflict':
        permanent = eventLine(e, this.o);
        break;
      case 'conflict_resolved':
        this.resolved++;
        permanent = eventLine(e, this.o);
        break;
      case 'waiting':
        {
          // The wait's start stays; the reason follows the latest answer (Touches that held a step back).
          const w = this.workers.get(e.worker);
          const since = w?.kind === 'waiting' ? w.since : now;
          this.workers.set(e.worker, { kind: 'waiting', since, why: waitingText(e) });
        }
        break;
      case 'worker_stopped':
        this.workers.set(e.worker, { kind: 'stopped', reason: e.reason });
        break;
      case 'usage':
        this.spend = e.plan;
        break;
      case 'stalled':
      case 'step_failed':
      case 'budget_exhausted':
      case 'warning':
        permanent = eventLine(e, this.o);
        break;
      case 'summary':
        break;
    }
    this.draw(permanent);
  }

  /** Stops the timer and leaves the final frame on screen, the cursor on the line below it. */
  close(): void {
    if (this.closed) return;
    this.draw();
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Erases the block, runs `print` (a line on stderr, the same terminal), and draws the block below it. */
  aside(print: () => void): void {
    if (this.closed || this.shown === 0) return print();
    this.o.write(`\x1b[${this.shown}A\r\x1b[0J`);
    this.shown = 0;
    print();
    this.draw();
  }

  /** The block's lines for the current state, without newlines. */
  frame(): string[] {
    const now = this.o.now();
    const names = [...this.workers.keys()];
    const nameW = Math.max(0, ...names.map((n) => n.length));
    const stepW = Math.max(0, ...[...this.workers.values()].map((w) => (w.kind === 'busy' ? w.shown.length : 0)));
    const paint = painter(this.o);
    const lines = names.map((name) => {
      const w = this.workers.get(name)!;
      const head = paint('bold', name.padEnd(nameW));
      switch (w.kind) {
        case 'busy': {
          const phase = paint('cyan', w.phase.padEnd(11));
          const attempt = w.attempt ? paint('yellow', `  ${w.attempt}`) : '';
          // The implementer's last output, item or file change (the watchdog's, docs/run.md §7.3).
          const at = w.phase === 'implementer' ? this.o.last_activity?.(name) : undefined;
          const active = at === undefined ? '' : paint('dim', `  active ${duration(Math.max(0, now - at))} ago`);
          return `${head}  ${w.shown.padEnd(stepW)}  ${phase}  ${duration(now - w.since)}${attempt}${active}`;
        }
        case 'waiting':
          return `${head}  ${paint('dim', w.why)}  ${duration(now - w.since)}`;
        case 'idle':
          return `${head}  ${paint('dim', 'idle')}`;
        case 'stopped':
          return `${head}  ${w.reason === 'done' ? paint('green', 'done') : paint('yellow', 'stopped')}`;
      }
    });
    lines.push(this.bar(now));
    const cols = this.o.columns;
    return cols && cols > 1 ? lines.map((l) => clip(l, cols - 1)) : lines;
  }

  private bar(now: number): string {
    const total = this.o.steps_total;
    const filled = total > 0 ? Math.round((this.done / total) * BAR_WIDTH) : BAR_WIDTH;
    const paint = painter(this.o);
    const bar = paint('green', '█'.repeat(filled)) + paint('dim', '░'.repeat(BAR_WIDTH - filled));
    const failed =
      this.failedAttempts > 0
        ? paint('red', `  ${this.failedAttempts} failed attempt${this.failedAttempts === 1 ? '' : 's'}`)
        : '';
    const human =
      this.needsHuman > 0
        ? paint('yellow', `  ${this.needsHuman} need${this.needsHuman === 1 ? 's' : ''} a human`)
        : '';
    const resolved =
      this.resolved > 0 ? paint('green', `  ${this.resolved} conflict${this.resolved === 1 ? '' : 's'} resolved`) : '';
    const plan = this.o.plan_path.slice(this.o.plan_path.lastIndexOf('/') + 1);
    const spend = this.spend ? `  ${planSpend(this.spend)}` : '';
    return `[${bar}] ${this.done}/${total} steps  ${plan}  ${duration(now - this.started)}${spend}${failed}${human}${resolved}`;
  }

  private draw(permanent: string | null = null): void {
    if (this.closed) return;
    // Back to the top of the block, erase it and everything below, then print anew in one write.
    let out = this.shown > 0 ? `\x1b[${this.shown}A\r\x1b[0J` : '';
    if (permanent !== null) out += permanent + '\n';
    const lines = this.frame();
    out += lines.map((l) => l + '\n').join('');
    this.shown = lines.length;
    this.o.write(out);
  }
}

/** Clips a line to `width` visible characters, skipping SGR sequences, and resets colour when it cut. */
function clip(line: string, width: number): string {
  let visible = 0;
  let i = 0;
  while (i < line.length) {
    if (line.startsWith('\x1b[', i)) {
      const end = line.indexOf('m', i);
      i = end < 0 ? line.length : end + 1;
      continue;
    }
    if (visible === width) return line.slice(0, i) + (line.includes('\x1b[') ? '\x1b[0m' : '');
    visible++;
    i += line.codePointAt(i)! > 0xffff ? 2 : 1;
  }
  return line;
}
