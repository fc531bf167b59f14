/**
 * The lock directory's takeover (docs/run.md §1.8) under chosen interleavings: the real file calls of
 * src/util/dir-lock.ts on a real temp directory, with a one-shot hook that runs another contender (or the
 * holder's refresh, a release, an older tugcode) just before a given call on a given path. The contenders
 * run in this process one inside another's gap, so each interleaving here puts one contender's whole
 * attempt between two calls of the other; in every one at most one contender holds, and `holder.json` names
 * it. A lock's holder is told by its `started_at` (the contender's name).
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HeldDirLock } from '../../src/util/dir-lock.js';
import { tempDir } from '../helpers/repo.js';

type FsCall =
  'existsSync' | 'mkdirSync' | 'readFileSync' | 'renameSync' | 'rmSync' | 'statSync' | 'utimesSync' | 'writeFileSync';

interface Hook {
  call: FsCall;
  match: (path: string) => boolean;
  run: () => void;
}

const hooks = vi.hoisted(() => [] as Hook[]);

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const wrapped: Record<string, unknown> = { ...real };
  const calls: FsCall[] = [
    'existsSync',
    'mkdirSync',
    'readFileSync',
    'renameSync',
    'rmSync',
    'statSync',
    'utimesSync',
    'writeFileSync',
  ];
  for (const call of calls) {
    const fn = real[call] as (...args: unknown[]) => unknown;
    wrapped[call] = (...args: unknown[]) => {
      const i = hooks.findIndex((h) => h.call === call && h.match(String(args[0])));
      if (i >= 0) hooks.splice(i, 1)[0]!.run(); // one-shot: removed before it runs
      return fn(...args);
    };
  }
  return { ...wrapped, default: wrapped };
});

// The test's own file calls bypass the hooks.
const fs = await vi.importActual<typeof import('node:fs')>('node:fs');
// A worker runs file after file (isolate: false, vitest.config.ts): the lock module may be loaded already, on
// the real fs. Loaded again here, it gets the wrapped one.
vi.resetModules();
const { readHolder, tryDirLock } = await import('../../src/util/dir-lock.js');

/** Runs `run` just before the next `call` whose path `match`es (the `nth` such call, counting from now). */
function before(call: FsCall, match: (path: string) => boolean, run: () => void, nth = 1): void {
  let seen = 0;
  hooks.push({ call, match: (p) => match(p) && ++seen === nth, run });
}

const STALE_MS = 15_000;
const REFRESH_MS = 60_000;
const old = () => new Date(Date.now() - 60_000);
const ageClaim = () => new Date(Date.now() - 11_000); // older than the claim's 10 s staleness

/** The contenders of one scenario; each attempt checks that no other one holds the lock meanwhile. */
function contenders(lockDir: string) {
  const holding = new Map<string, HeldDirLock>();
  const outcome: Record<string, string> = {};
  return {
    outcome,
    attempt(who: string) {
      const r = tryDirLock({ lockDir, staleMs: STALE_MS, refreshMs: REFRESH_MS, started_at: who });
      if ('held' in r) {
        expect([...holding.keys()], `${who} holds while others do`).toEqual([]);
        holding.set(who, r.held);
        outcome[who] = 'HOLDS';
        return r.held;
      }
      outcome[who] = r.busy.why;
      return null;
    },
    release(who: string) {
      holding.get(who)?.release();
      holding.delete(who);
    },
    releaseAll() {
      for (const h of holding.values()) h.release();
      holding.clear();
    },
  };
}

/** Who `holder.json` names (its `started_at`), or null/undefined as readHolder says. */
function named(lockDir: string): string | null | undefined {
  const h = readHolder(lockDir);
  return h ? h.started_at : h;
}

/** A holder H of `lockDir` whose lock has gone stale: it still runs, it has not refreshed for 60 s. */
function staleHolder(lockDir: string, otherHost: boolean): HeldDirLock {
  const r = tryDirLock({ lockDir, staleMs: STALE_MS, refreshMs: REFRESH_MS, started_at: 'H' });
  if (!('held' in r)) throw new Error('H did not get the lock');
  if (otherHost) {
    const path = join(lockDir, 'holder.json');
    fs.writeFileSync(path, JSON.stringify({ ...r.held.holder, host: 'elsewhere.invalid' }) + '\n');
  }
  fs.utimesSync(lockDir, old(), old());
  return r.held;
}

/**
 * The points of C's takeover after its claim is in (`takeover/`, made whole aside and renamed in: nothing of
 * the claim is written after it is visible), each a call on a path.
 */
const afterClaim = (L: string): [string, FsCall, (p: string) => boolean, number][] => [
  ['before re-reading the holder', 'readFileSync', (p) => p === join(L, 'holder.json'), 2],
  ['before setting the lock’s time', 'utimesSync', (p) => p === L, 1],
  ['before renaming its holder into place', 'renameSync', (p) => p.startsWith(join(L, 'takeover') + '/'), 1],
];

/** Runs `fn` once at C's takeover point `name`; the returned function says whether it ran. */
function atPoint(L: string, name: string, fn: () => void): () => boolean {
  const [, call, match, nth] = point(L, name);
  let ran = false;
  before(
    call,
    match,
    () => {
      ran = true;
      fn();
    },
    nth,
  );
  return () => ran;
}

/** C making its claim aside (`takeover.<token>.new`), before it renames it in as `takeover/`. */
const MAKING_CLAIM = /\/takeover\.[^/]+\.new$/;

const points = afterClaim('/L').map(([name]) => name);
const point = (L: string, name: string) => afterClaim(L).find(([n]) => n === name)!;

afterEach(() => {
  hooks.splice(0);
  vi.useRealTimers();
});

describe('lock directory takeover interleavings (docs/run.md §1.8)', () => {
  describe('A: a stale holder (another host, alive) releases and E takes a new lock during C’s takeover', () => {
    it.each(points)('%s: E holds, C does not', (name) => {
      const L = join(tempDir(), 'run-x.lock');
      const c = contenders(L);
      const H = staleHolder(L, true);
      const ran = atPoint(L, name, () => {
        H.release();
        expect(c.attempt('E')).not.toBeNull();
      });
      c.attempt('C');
      expect(ran()).toBe(true);
      expect(c.outcome.E).toBe('HOLDS');
      expect(c.outcome.C).toBe('held');
      expect(named(L)).toBe('E');
      c.releaseAll();
    });
  });

  describe('B1: the stale holder refreshes during C’s takeover', () => {
    it.each(points)('%s: C’s fresh claim survives, D gets none, C holds and H learns it', (name) => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const L = join(tempDir(), 'run-x.lock');
      const c = contenders(L);
      const H = staleHolder(L, false);
      const ran = atPoint(L, name, () => {
        // D while the lock looks stale still (C's claim set its time: set it back), so it
        // meets C's claim.
        fs.utimesSync(L, old(), old());
        expect(c.attempt('D1')).toBeNull();
        expect(c.outcome.D1).toBe('taking-over');
        vi.advanceTimersByTime(REFRESH_MS); // H's refresh: the lock is still its own
        expect(H.compromised).toBe(false);
        expect(fs.existsSync(join(L, 'takeover'))).toBe(true);
        expect(fs.readdirSync(join(L, 'takeover')).filter((f) => f.startsWith('holder.'))).toHaveLength(1);
        // D after the refresh: the lock is fresh again.
        expect(c.attempt('D2')).toBeNull();
        expect(c.outcome.D2).toBe('held');
      });
      c.attempt('C');
      expect(ran()).toBe(true);
      expect(c.outcome.C).toBe('HOLDS');
      expect(named(L)).toBe('C');
      expect(fs.existsSync(join(L, 'takeover'))).toBe(false);
      vi.advanceTimersByTime(REFRESH_MS);
      expect(H.compromised).toBe(true);
      H.release(); // not its own any more: left be
      expect(named(L)).toBe('C');
      c.releaseAll();
    });
  });

  describe('B2: C pauses past its claim’s staleness, D moves the claim aside and takes over', () => {
    it.each(points)('%s: D holds, C does not', (name) => {
      const L = join(tempDir(), 'run-x.lock');
      const c = contenders(L);
      const H = staleHolder(L, true);
      const ran = atPoint(L, name, () => {
        fs.utimesSync(join(L, 'takeover'), ageClaim(), ageClaim());
        fs.utimesSync(L, old(), old());
        expect(c.attempt('D')).not.toBeNull();
        expect(named(L)).toBe('D');
      });
      c.attempt('C');
      expect(ran()).toBe(true);
      expect(c.outcome.D).toBe('HOLDS');
      expect(c.outcome.C).toBe('held');
      expect(named(L)).toBe('D');
      expect(fs.existsSync(join(L, 'takeover'))).toBe(false);
      H.release(); // not H's any more: left be
      expect(named(L)).toBe('D');
      c.releaseAll();
    });
  });

  describe('C: an older tugcode replaces a stale holder-less lock just before C claims it', () => {
    /** An empty lock directory 60 s old, as an older tugcode (proper-lockfile) leaves it. */
    const oldLock = () => {
      const L = join(tempDir(), 'integration.lock');
      fs.mkdirSync(L);
      fs.utimesSync(L, old(), old());
      return L;
    };

    it('the new directory has another inode: C does not hold it', () => {
      const L = oldLock();
      const c = contenders(L);
      const ino = fs.statSync(L).ino;
      before(
        'mkdirSync',
        (p) => MAKING_CLAIM.test(p),
        () => {
          // The old tugcode's rmdir + mkdir; a directory made meanwhile takes the freed inode.
          fs.rmdirSync(L);
          fs.mkdirSync(`${L}.other`);
          fs.mkdirSync(L);
          fs.rmdirSync(`${L}.other`);
        },
      );
      c.attempt('C');
      expect(fs.statSync(L).ino).not.toBe(ino);
      expect(c.outcome.C).toBe('held'); // busy: the new lock is fresh
      expect(fs.readdirSync(L)).toEqual([]);
    });

    // The file system may give the new directory the inode the old one freed, as ext4 does at once: the
    // inode alone cannot tell them apart (the mtime changed with C's own claim), their birth times can.
    it('the new directory takes the freed inode: C does not hold it', () => {
      const L = oldLock();
      const c = contenders(L);
      const ino = fs.statSync(L).ino;
      let reused = false;
      before(
        'mkdirSync',
        (p) => MAKING_CLAIM.test(p),
        () => {
          // ext4 hands the freed inode to the next directory made, unless another process on the machine
          // takes it first: a few tries.
          for (let i = 0; i < 50 && !reused; i++) {
            fs.rmdirSync(L);
            fs.mkdirSync(L);
            reused = fs.statSync(L).ino === ino;
          }
        },
      );
      c.attempt('C');
      expect(reused, 'the file system gave the new directory another inode each time').toBe(true);
      expect(c.outcome.C).not.toBe('HOLDS');
      expect(named(L)).toBeNull();
      c.releaseAll();
    });
  });

  describe('D: two contenders judge one dead lock', () => {
    /** A lock whose holder is a process of this host that ended (spawned and reaped). */
    const deadLock = () => {
      const L = join(tempDir(), 'integration.lock');
      const child = spawnSync(process.execPath, ['-e', '']);
      expect(child.status).toBe(0);
      fs.mkdirSync(L);
      const dead = { host: hostname(), pid: child.pid!, started_at: 'dead', token: 'dead-token' };
      fs.writeFileSync(join(L, 'holder.json'), JSON.stringify(dead) + '\n');
      return { L, dead };
    };
    const cases: [string, FsCall, (L: string) => (p: string) => boolean, number][] = [
      ['D takes it over before C’s claim', 'mkdirSync', () => (p) => MAKING_CLAIM.test(p), 1],
      ...afterClaim('/L').map(([n, call, , nth]): [string, FsCall, (L: string) => (p: string) => boolean, number] => [
        `D comes ${n.replace('before', 'before C’s')}`,
        call,
        (L) => point(L, n)[2],
        nth,
      ]),
    ];

    it.each(cases)('%s: exactly one holds and names the dead holder', (_name, call, match, nth) => {
      const { L, dead } = deadLock();
      const c = contenders(L);
      let D: HeldDirLock | null = null;
      before(call, match(L), () => void (D = c.attempt('D')), nth);
      const C = c.attempt('C');
      expect(c.outcome).toHaveProperty('D');
      const winners = [C, D].filter((x): x is HeldDirLock => x !== null);
      expect(winners).toHaveLength(1);
      const winner = winners[0]!;
      expect(named(L)).toBe(winner.holder.started_at);
      expect(winner.tookOver).toEqual({ host: dead.host, pid: dead.pid, started_at: 'dead', dead: true });
      expect(fs.existsSync(join(L, 'takeover'))).toBe(false);
      c.releaseAll();
    });
  });

  describe('B2 across processes: C pauses past its claim’s staleness and then alternates with D', () => {
    /**
     * A contender in a child process running the built lock (`npm run build` first), its fs calls the real
     * ones, paused (it says so, then waits for a byte on stdin) before each given call on a matching path:
     * an interleaving that alternates between two contenders more than once, which one running inside
     * another's gap cannot.
     */
    const STEPPER = `
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
const [mod, lockDir, who, pausesJson] = process.argv.slice(2);
const pauses = JSON.parse(pausesJson).map((p) => ({ ...p, re: new RegExp(p.re), seen: 0 }));
const say = (o) => fs.writeSync(1, JSON.stringify(o) + '\\n');
const wait = () => {
  const b = Buffer.alloc(1);
  for (;;) {
    try { if (fs.readSync(0, b, 0, 1, null) === 1) return; } catch (e) { if (e.code !== 'EAGAIN') throw e; }
  }
};
for (const call of ${JSON.stringify(['mkdirSync', 'readFileSync', 'renameSync', 'rmSync', 'utimesSync', 'writeFileSync'])}) {
  const real = fs[call];
  fs[call] = (...args) => {
    const p = pauses[0];
    if (p && p.call === call && p.re.test(String(args[0])) && ++p.seen === p.nth) {
      pauses.shift();
      say({ paused: p.name });
      wait();
    }
    return real(...args);
  };
}
syncBuiltinESMExports();
const { tryDirLock } = await import(mod);
const r = tryDirLock({ lockDir, staleMs: ${STALE_MS}, refreshMs: 1e9, started_at: who });
say('held' in r ? { held: true } : { held: false, why: r.busy.why });
`;
    const MODULE = resolve(__dirname, '../../dist/util/dir-lock.js');
    const children: ChildProcessWithoutNullStreams[] = [];
    afterEach(() => {
      for (const ch of children.splice(0)) ch.kill('SIGKILL');
    });

    interface Pause {
      name: string;
      call: FsCall;
      re: string;
      nth: number;
    }
    /** Starts contender `who`; `next()` is its next line (a pause or its outcome), `go()` lets it on. */
    function contender(script: string, L: string, who: string, pauses: Pause[]) {
      const ch = spawn(process.execPath, [script, MODULE, L, who, JSON.stringify(pauses)]);
      children.push(ch);
      const lines: string[] = [];
      const waiting: ((l: string) => void)[] = [];
      createInterface({ input: ch.stdout }).on('line', (l) => {
        const w = waiting.shift();
        if (w) w(l);
        else lines.push(l);
      });
      return {
        next: (): Promise<Record<string, unknown>> =>
          new Promise<string>((res) => {
            const l = lines.shift();
            if (l !== undefined) res(l);
            else waiting.push(res);
          }).then((l) => JSON.parse(l) as Record<string, unknown>),
        go: () => ch.stdin.write('g'),
      };
    }

    // C's claim is in and C stalls past TAKEOVER_STALE_MS; D moves C's claim aside (with C's holder record in
    // it) and puts in its own; then C goes on (the holder is still H's, the directory the same) and D after
    // it. C's rename of its record out of `takeover/` finds D's claim there, not its own: it fails and C
    // steps back; D holds. Before claims were made whole aside, C wrote its record by path into D's claim
    // and both held.
    it('C goes on after D replaced its stale claim: only D holds', async () => {
      const dir = tempDir();
      const script = join(dir, 'stepper.mjs');
      fs.writeFileSync(script, STEPPER);
      const L = join(dir, 'run-x.lock');
      const H = staleHolder(L, true);
      const reRead = (name: string): Pause => ({
        name,
        call: 'readFileSync',
        re: 'run-x\\.lock/holder\\.json$',
        nth: 2,
      });
      const C = contender(script, L, 'C', [reRead('C claimed')]);
      expect(await C.next()).toEqual({ paused: 'C claimed' });
      fs.utimesSync(join(L, 'takeover'), ageClaim(), ageClaim()); // C stalls past its claim's staleness
      fs.utimesSync(L, old(), old());
      const D = contender(script, L, 'D', [reRead('D claimed')]);
      expect(await D.next()).toEqual({ paused: 'D claimed' });
      expect(fs.readdirSync(L).filter((f) => f.startsWith('takeover.'))).toHaveLength(1); // C's, moved aside
      C.go();
      const c = await C.next();
      D.go();
      const d = await D.next();
      expect([c, d], `holder.json: ${named(L)}`).toEqual([{ held: false, why: 'held' }, { held: true }]);
      expect(named(L)).toBe('D');
      H.release();
    });
  });
});
