import { Bus, DeliveryError, StateContainer, combineReducers, Scheduler, ManualClock, type Message } from '../src';
import { equal } from './assert';

type Act = { type: 'inc' } | { type: 'push'; item: string } | { type: 'noop' };

export const tests = {
  async 'routes messages by wildcard through middleware'() {
    const bus = new Bus();
    const log: string[] = [];
    bus.use(async (m, next) => {
      log.push(`>${m.topic}`);
      await next();
      log.push(`<${m.topic}`);
    });
    bus.subscribe('order.*', (m: Message<number>) => void log.push(`star ${m.payload}`));
    bus.subscribe('order.#', () => void log.push('hash'));
    equal(await bus.publish('order.created', 7), 2);
    equal(await bus.publish('user.created', 1), 0);
    equal(log, ['>order.created', 'star 7', 'hash', '<order.created']);
    equal(bus.deadLetters.map((m) => m.topic), ['user.created']);
  },
  async 'collects handler failures'() {
    const bus = new Bus();
    bus.subscribe('x', () => {
      throw new Error('boom');
    });
    let failures = 0;
    try {
      await bus.publish('x', null);
    } catch (e) {
      if (e instanceof DeliveryError) failures = e.failures.length;
    }
    equal(failures, 1);
  },
  'reduces state with undo and redo'() {
    const reducer = combineReducers<{ n: number; items: string[] }, Act>({
      n: (n, a) => (a.type === 'inc' ? n + 1 : n),
      items: (xs, a) => (a.type === 'push' ? [...xs, a.item] : xs),
    });
    const c = new StateContainer(reducer, { n: 0, items: [] });
    const changes: number[] = [];
    c.on('change', (e) => changes.push(e.state.n));
    c.dispatch({ type: 'inc' });
    c.dispatch({ type: 'push', item: 'a' });
    c.dispatch({ type: 'noop' });
    equal(c.state, { n: 1, items: ['a'] });
    equal([c.undo(), c.state.items.length, c.redo(), c.state.items.length], [true, 0, true, 1]);
    equal(changes, [1, 1]);
  },
  async 'runs scheduled jobs on a manual clock'() {
    const clock = new ManualClock();
    const sched = new Scheduler(clock);
    const log: string[] = [];
    sched.on('failed', (f) => log.push(`failed ${f.id}`));
    sched.on('done', (id) => log.push(`done ${id}`));
    sched.schedule({ id: 'beat', run: () => void log.push(`beat ${clock.now()}`), everyMs: 10, maxRuns: 3 });
    sched.schedule({ id: 'once', run: () => void log.push('once') }, 15);
    sched.schedule({ id: 'bad', run: () => Promise.reject(new Error('x')) }, 5);
    for (let t = 0; t <= 30; t += 5) {
      await clock.advance(t === 0 ? 0 : 5);
      await sched.tick();
    }
    equal(log, ['beat 0', 'failed bad', 'done bad', 'beat 10', 'once', 'done once', 'beat 20', 'done beat']);
    equal([sched.pending, sched.nextDue()], [[], undefined]);
  },
};
