import { AppError, type Clock } from '../core';
import { PriorityQueue } from '../collections';
import { Emitter } from './emitter';

export interface Job {
  id: string;
  run: () => void | Promise<void>;
  /** Milliseconds between runs; absent for one-shot jobs. */
  everyMs?: number;
  /** Stop after this many runs. */
  maxRuns?: number;
}

interface Entry {
  job: Job;
  due: number;
  runs: number;
}

export class SchedulerError extends AppError {
  constructor(message: string) {
    super(message, 'scheduler');
  }
}

/**
 * Runs jobs at their due time on an injected clock: `tick()` runs everything due, in due order (ties by
 * insertion). Failures are reported as events and never stop other jobs.
 */
export class Scheduler extends Emitter<{ ran: { id: string; at: number }; failed: { id: string; error: unknown }; done: string }> {
  private queue = PriorityQueue.by<Entry>((e) => e.due);
  private readonly cancelled = new Set<string>();
  private readonly known = new Set<string>();

  constructor(private readonly clock: Clock) {
    super();
  }

  schedule(job: Job, delayMs = 0): this {
    if (this.known.has(job.id)) throw new SchedulerError(`job ${job.id} is already scheduled`);
    if (job.everyMs !== undefined && job.everyMs <= 0) throw new SchedulerError('everyMs must be positive');
    this.known.add(job.id);
    this.queue.push({ job, due: this.clock.now() + delayMs, runs: 0 });
    return this;
  }

  cancel(id: string): boolean {
    if (!this.known.has(id)) return false;
    this.cancelled.add(id);
    this.known.delete(id);
    return true;
  }

  get pending(): string[] {
    return [...this.known].sort();
  }

  /** Run every job due at the current time; returns how many ran. */
  async tick(): Promise<number> {
    const now = this.clock.now();
    let ran = 0;
    const later: Entry[] = [];
    while (this.queue.size > 0 && this.queue.peek()!.due <= now) {
      const e = this.queue.pop()!;
      if (this.cancelled.has(e.job.id)) {
        this.cancelled.delete(e.job.id);
        continue;
      }
      try {
        await e.job.run();
        this.emit('ran', { id: e.job.id, at: now });
      } catch (error) {
        this.emit('failed', { id: e.job.id, error });
      }
      ran++;
      e.runs++;
      const again = e.job.everyMs !== undefined && (e.job.maxRuns === undefined || e.runs < e.job.maxRuns);
      if (again) later.push({ ...e, due: e.due + e.job.everyMs! });
      else {
        this.known.delete(e.job.id);
        this.emit('done', e.job.id);
      }
    }
    for (const e of later) this.queue.push(e);
    return ran;
  }

  /** The next due time, if any job is pending. */
  nextDue(): number | undefined {
    return this.queue.peek()?.due;
  }
}
