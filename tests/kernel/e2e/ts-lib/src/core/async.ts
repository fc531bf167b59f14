import { AppError } from './errors';
import { err, ok, type Result } from './result';

/** A clock that tests can drive: `sleep` resolves when `advance` passes its deadline. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export class ManualClock implements Clock {
  private time = 0;
  private waiting: { at: number; resolve: () => void }[] = [];

  now(): number {
    return this.time;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push({ at: this.time + ms, resolve });
      this.waiting.sort((a, b) => a.at - b.at);
    });
  }

  /** Move time forward, resolving sleeps in deadline order. */
  async advance(ms: number): Promise<void> {
    const target = this.time + ms;
    while (this.waiting.length > 0 && this.waiting[0]!.at <= target) {
      const w = this.waiting.shift()!;
      this.time = w.at;
      w.resolve();
      await Promise.resolve();
    }
    this.time = target;
  }

  get pending(): number {
    return this.waiting.length;
  }
}

export class RetryError extends AppError {
  constructor(readonly attempts: number, readonly last: unknown) {
    super(`gave up after ${attempts} attempts`, 'retry');
  }
}

export interface RetryOptions {
  attempts: number;
  baseDelayMs: number;
  factor?: number;
  clock: Clock;
  shouldRetry?: (error: unknown) => boolean;
}

/** Run `task` until it succeeds, with exponential backoff on the given clock. */
export async function retry<T>(task: (attempt: number) => Promise<T>, o: RetryOptions): Promise<Result<T, RetryError>> {
  let delay = o.baseDelayMs;
  let last: unknown = null;
  for (let attempt = 1; attempt <= o.attempts; attempt++) {
    try {
      return ok(await task(attempt));
    } catch (e) {
      last = e;
      if (o.shouldRetry && !o.shouldRetry(e)) break;
      if (attempt < o.attempts) {
        await o.clock.sleep(delay);
        delay *= o.factor ?? 2;
      }
    }
  }
  return err(new RetryError(o.attempts, last));
}

/** Limit how many tasks run at once; tasks start in submission order. */
export class Limiter {
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(readonly concurrency: number) {
    if (concurrency < 1) throw new AppError('concurrency must be at least 1', 'limiter');
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) await new Promise<void>((r) => this.queue.push(r));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.queue.shift()?.();
    }
  }

  get running(): number {
    return this.active;
  }
}

/** Map over items with at most `concurrency` tasks in flight, keeping the input order. */
export async function mapLimit<T, U>(items: T[], concurrency: number, f: (item: T, index: number) => Promise<U>): Promise<U[]> {
  const limiter = new Limiter(concurrency);
  return Promise.all(items.map((item, i) => limiter.run(() => f(item, i))));
}

/** A value computed once, on first use. */
export class Lazy<T> {
  private state: { done: false; f: () => T } | { done: true; value: T };

  constructor(f: () => T) {
    this.state = { done: false, f };
  }

  get value(): T {
    if (!this.state.done) this.state = { done: true, value: this.state.f() };
    return this.state.value;
  }
}
