// Event ids follow commit order on PostgreSQL too (src/state/queries/events.ts): transactions that run side by side
// (claims, owner commands) append under a lock held to commit, so a reader tailing `state log --after-id` never
// skips an event that committed late.
import { describe, expect, it } from 'vitest';
import { appendEvent } from '../../src/state/queries/events.js';
import { createTestDatabase, openStatePg, waitForLockWaiters } from '../helpers/pg.js';

const event = (actor: string) => ({
  at: '2026-03-01T10:00:00.000Z',
  plan_path: null,
  step_anchor: null,
  command: 'test',
  actor,
  attempt: null,
  details: {},
});

describe('events on PostgreSQL', () => {
  it('get their ids in commit order when transactions run side by side', async () => {
    const db = await createTestDatabase();
    const pg = (await openStatePg(db.url, 'tug_events'))!;
    try {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let appended!: () => void;
      const firstAppended = new Promise<void>((r) => (appended = r));
      const order: string[] = [];
      // The first appends, then stays open; the second (a shared transaction too) appends and commits.
      // The append is sent without waiting (Conn.later); the statement after it waits for its answer.
      const first = pg.write(
        async (c) => {
          appendEvent(c, event('first'));
          await c.get('SELECT 1');
          appended();
          await held;
          order.push('first');
        },
        { shared: true },
      );
      await firstAppended;
      const second = pg.write(
        async (c) => {
          appendEvent(c, event('second'));
          await c.get('SELECT 1');
          order.push('second');
        },
        { shared: true },
      );
      // The second waits for the lock the first holds to commit: it could not take an id while the first was open.
      await waitForLockWaiters(db.url, 1);
      expect(order).toEqual([]);
      release();
      await Promise.all([first, second]);
      expect(order).toEqual(['first', 'second']);
      const ids = await pg.all<{ actor: string; id: number }>('SELECT actor, id FROM events ORDER BY id');
      expect(ids.map((r) => r.actor)).toEqual(['first', 'second']);
    } finally {
      await pg.close();
    }
  });
});
