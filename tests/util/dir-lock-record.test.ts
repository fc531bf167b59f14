/**
 * A held lock directory's holder record gains fields once the holder knows them (docs/run.md §1.8: the run
 * lock's `workers`), only while the lock is still its own.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readHolder, tryDirLock } from '../../src/util/dir-lock.js';
import { tempDir } from '../helpers/repo.js';

const take = (lockDir: string) => {
  const got = tryDirLock({
    lockDir,
    staleMs: 30_000,
    refreshMs: 5_000,
    started_at: '2026-03-01T10:00:00.000Z',
    extra: { run_flags: ['--workers', '4'] },
  });
  if (!('held' in got)) throw new Error('not taken');
  return got.held;
};

describe('HeldDirLock.record', () => {
  it('adds fields to its own holder.json, keeping its own fields and token, and leaves no file aside', () => {
    const L = join(tempDir(), 'run-x.lock');
    const lock = take(L);
    const before = readHolder(L)!;
    expect(lock.record({ workers: 2, token: 'not-mine', pid: 1 })).toBe(true);
    expect(readHolder(L)).toEqual({ ...before, workers: 2 });
    expect(lock.holder).toEqual({ ...before, workers: 2 });
    expect(readdirSync(L)).toEqual(['holder.json']);
    // A second record keeps the first's fields.
    expect(lock.record({ other: 'x' })).toBe(true);
    expect(readHolder(L)).toEqual({ ...before, workers: 2, other: 'x' });
    lock.release();
  });

  it('leaves a lock that is no longer its own be: another holder, or released', () => {
    const L = join(tempDir(), 'run-x.lock');
    const lock = take(L);
    const theirs = { host: 'elsewhere', pid: 4242, started_at: 'T', token: 'theirs' };
    writeFileSync(join(L, 'holder.json'), JSON.stringify(theirs) + '\n');
    expect(lock.record({ workers: 2 })).toBe(false);
    expect(readHolder(L)).toEqual(theirs);
    lock.release(); // not its own: left be
    expect(readHolder(L)).toEqual(theirs);

    const M = join(tempDir(), 'run-y.lock');
    const mine = take(M);
    mine.release();
    expect(mine.record({ workers: 2 })).toBe(false);
    expect(readHolder(M)).toBeUndefined();
  });

  it('records nothing while another contender is taking the lock over (its fresh claim is in place)', () => {
    const L = join(tempDir(), 'run-x.lock');
    const lock = take(L);
    const before = readHolder(L);
    mkdirSync(join(L, 'takeover'));
    writeFileSync(join(L, 'takeover', 'pid'), `${hostname()} ${process.pid}\n`);
    expect(lock.record({ workers: 2 })).toBe(false);
    expect(readHolder(L)).toEqual(before);
    expect(readdirSync(join(L, 'takeover'))).toEqual(['pid']); // the contender's claim, untouched
  });
});
