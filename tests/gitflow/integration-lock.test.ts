/**
 * The integration lock inside one process (src/gitflow/integrate.ts): callers of one process queue up in
 * order before the file lock, never overlap, and a caller that waits past its timeout is Busy without
 * disturbing the line behind it. While callers wait in line, the file lock goes from one to the next as it
 * is, and the last one releases it.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTEGRATION_LOCK } from '../../src/contract/layout.js';
import { withIntegrationLock } from '../../src/gitflow/integrate.js';
import { tempDir } from '../helpers/repo.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the integration lock within one process', () => {
  it('runs the callers one at a time, in the order they came, each holding the lock file', async () => {
    const root = tempDir();
    const log: string[] = [];
    let inside = 0;
    const one = (name: string) =>
      withIntegrationLock(root, async () => {
        inside++;
        expect(inside).toBe(1);
        expect(existsSync(join(root, INTEGRATION_LOCK))).toBe(true);
        log.push(`${name}+`);
        await sleep(10); // a holder that takes a while: the others must wait, not interleave
        log.push(`${name}-`);
        inside--;
        return name;
      });
    expect(await Promise.all(['a', 'b', 'c', 'd'].map(one))).toEqual(['a', 'b', 'c', 'd']);
    expect(log).toEqual(['a+', 'a-', 'b+', 'b-', 'c+', 'c-', 'd+', 'd-']);
    expect(existsSync(join(root, INTEGRATION_LOCK))).toBe(false);
  });

  it('is Busy for a caller that waits past its timeout; the line behind it goes on', async () => {
    const root = tempDir();
    const order: string[] = [];
    let gaveUp!: () => void;
    const impatientGaveUp = new Promise<void>((r) => (gaveUp = r));
    // The first holds the lock until the impatient caller has given up.
    const first = withIntegrationLock(root, async () => {
      await impatientGaveUp;
      order.push('first');
    });
    const impatient = withIntegrationLock(root, () => order.push('impatient'), 50);
    impatient.then(gaveUp, gaveUp);
    const patient = withIntegrationLock(root, () => order.push('patient'));
    await expect(impatient).rejects.toMatchObject({ code: 'Busy' });
    await first;
    await patient;
    expect(order).toEqual(['first', 'patient']);
  });

  it('lets the next caller in after a failing one', async () => {
    const root = tempDir();
    const bad = withIntegrationLock(root, () => {
      throw new Error('boom');
    });
    const good = withIntegrationLock(root, () => 'ok');
    await expect(bad).rejects.toThrow('boom');
    expect(await good).toBe('ok');
  });

  it('hands the lock file on along the line and releases it after the last, also a caller that gave up', async () => {
    const root = tempDir();
    const lock = join(root, INTEGRATION_LOCK);
    const seen: string[] = [];
    const identity = () => {
      const st = statSync(lock);
      return `${st.ino}:${st.birthtimeMs}`;
    };
    const one = (ms: number) =>
      withIntegrationLock(root, async () => {
        seen.push(identity());
        await sleep(ms);
      });
    await Promise.all([one(10), one(10), one(10)]);
    expect(new Set(seen).size).toBe(1); // made once, not released and made again in between
    expect(existsSync(lock)).toBe(false);
    // The last in line gives up while the first still holds the lock: the lock handed to it is released.
    let gaveUp!: () => void;
    const impatientGaveUp = new Promise<void>((r) => (gaveUp = r));
    const first = withIntegrationLock(root, async () => {
      await impatientGaveUp;
    });
    const impatient = withIntegrationLock(root, () => 'never', 50);
    impatient.then(gaveUp, gaveUp);
    await expect(impatient).rejects.toMatchObject({ code: 'Busy' });
    await first;
    for (let i = 0; i < 50 && existsSync(lock); i++) await sleep(10);
    expect(existsSync(lock)).toBe(false);
    expect(await withIntegrationLock(root, () => 'again')).toBe('again');
  });
});
