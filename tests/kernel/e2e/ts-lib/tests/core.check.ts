import { some, none, find, compact, Option, ManualClock, retry, RetryError, Limiter, mapLimit, Lazy, Random, IdGenerator, fnv1a, collect, ok, err, mapResult } from '../src';
import { equal } from './assert';

/** Let pending promise callbacks run (the retry loop needs a few microtask turns per attempt). */
async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

export const tests = {
  'chains options'() {
    equal(some(2).map((x) => x * 3).getOrElse(0), 6);
    equal(none<number>().map((x) => x * 3).getOrElse(7), 7);
    equal(Option.from<number>(null).orElse(() => some(1)).toArray(), [1]);
    equal(some(1).zip(some('a')).toArray(), [[1, 'a']]);
    equal(some(5).filter((x) => x > 9).isSome(), false);
    equal(find([1, 2, 3], (x) => x > 1).getOrElse(0), 2);
    equal(compact([some(1), none<number>(), some(3)]), [1, 3]);
  },
  'collects results'() {
    equal(collect([ok(1), ok(2)]), ok([1, 2]));
    equal(collect([ok(1), err('x')]).ok, false);
    equal(mapResult(ok(2), (x) => x + 1), ok(3));
  },
  async 'retries with backoff on a manual clock'() {
    const clock = new ManualClock();
    let calls = 0;
    const p = retry(
      async (n) => {
        calls++;
        if (n < 3) throw new Error(`fail ${n}`);
        return n;
      },
      { attempts: 4, baseDelayMs: 100, clock },
    );
    await flush();
    equal(clock.pending, 1);
    await clock.advance(100);
    await flush();
    await clock.advance(200);
    const r = await p;
    equal([r.ok, calls, clock.now()], [true, 3, 300]);
  },
  async 'gives up after the last attempt'() {
    const clock = new ManualClock();
    const p = retry(async () => Promise.reject(new Error('no')), { attempts: 2, baseDelayMs: 10, clock });
    await flush();
    await clock.advance(10);
    const r = await p;
    equal(!r.ok && r.error instanceof RetryError && r.error.attempts, 2);
  },
  async 'limits concurrency and keeps order'() {
    const limiter = new Limiter(2);
    let peak = 0;
    const out = await mapLimit([5, 1, 4, 2], 2, async (x) => {
      peak = Math.max(peak, limiter.running + 1);
      await Promise.resolve();
      return x * 10;
    });
    equal(out, [50, 10, 40, 20]);
  },
  'computes lazily once'() {
    let n = 0;
    const l = new Lazy(() => ++n);
    equal([l.value, l.value, n], [1, 1, 1]);
  },
  'generates deterministic ids and hashes'() {
    const a = new IdGenerator('u_', 42);
    const b = new IdGenerator('u_', 42);
    equal([a.next(), a.next()], [b.next(), b.next()]);
    equal(new Random(7).shuffle([1, 2, 3, 4]).sort(), [1, 2, 3, 4]);
    equal(fnv1a(''), '811c9dc5');
    equal(fnv1a('a'), 'e40c292c');
  },
};
