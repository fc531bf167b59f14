/**
 * The integration lock names its holder (docs/run.md §1 item 4.7): a lock left by a process SIGKILLed on
 * this host is taken over at once, not after the 15 s of staleness; a live holder makes a waiter wait until
 * it lets go, or until the waiter's timeout (Busy); of two takers racing for one dead lock exactly one gets
 * it; a holder this host cannot judge (another host, none named: an older tugcode's lock) keeps the
 * staleness rule. The holders are real processes running the built lock (`npm run build` first).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { INTEGRATION_LOCK, TUGTOOL_DIR } from '../../src/contract/layout.js';
import { withIntegrationLock } from '../../src/gitflow/integrate.js';
import { lockIntegrationFile } from '../../src/util/integration-lock.js';
import { tempDir } from '../helpers/repo.js';

const LOCK_MODULE = resolve(__dirname, '../../dist/util/integration-lock.js');

/**
 * A child that waits for a line on stdin, takes the lock (waiting up to `timeoutMs`), prints what it got
 * as one JSON line and holds it until killed, or until the next line, when it releases it and says so.
 */
const HOLDER = `
const { lockIntegrationFile } = await import(process.argv[1]);
process.stdout.write('ready\\n');
process.stdin.once('data', async () => {
  try {
    const release = await lockIntegrationFile(process.argv[2], Number(process.argv[3]));
    process.stdout.write(JSON.stringify({ held: true, tookOver: release.tookOver }) + '\\n');
    const keep = setInterval(() => {}, 1000);
    process.stdin.once('data', async () => {
      await release();
      clearInterval(keep);
      process.stdout.write('released\\n');
    });
  } catch (e) {
    process.stdout.write(JSON.stringify({ held: false, code: e.code }) + '\\n');
    process.exit(0);
  }
});
`;

interface Holder {
  child: ChildProcessWithoutNullStreams;
  line: () => Promise<string>;
}

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

async function holder(root: string, timeoutMs = 10_000): Promise<Holder> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', HOLDER, LOCK_MODULE, root, String(timeoutMs)]);
  children.push(child);
  const lines: string[] = [];
  const waiting: ((l: string) => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => {
    const w = waiting.shift();
    if (w) w(l);
    else lines.push(l);
  });
  const line = () => (lines.length ? Promise.resolve(lines.shift()!) : new Promise<string>((res) => waiting.push(res)));
  expect(await line()).toBe('ready');
  return { child, line };
}

async function take(h: Holder): Promise<{ held: boolean; code?: string; tookOver?: unknown }> {
  h.child.stdin.write('go\n');
  return JSON.parse(await h.line());
}

async function kill(h: Holder): Promise<void> {
  const gone = new Promise((res) => h.child.once('exit', res));
  h.child.kill('SIGKILL');
  await gone;
}

const holderOf = (root: string) => JSON.parse(readFileSync(join(root, INTEGRATION_LOCK, 'holder.json'), 'utf8'));
/** What the lock leaves beside itself in `.tugtool/`: its private copies, the moved-aside locks. */
const strays = (root: string) =>
  readdirSync(join(root, TUGTOOL_DIR)).filter((n) => n.startsWith('integration.') && n !== 'integration.lock');

describe('the integration lock and its holder', () => {
  it('takes over at once the lock of a holder SIGKILLed on this host', async () => {
    const root = tempDir();
    const h = await holder(root);
    expect(await take(h)).toEqual({ held: true, tookOver: null });
    expect(holderOf(root)).toMatchObject({ pid: h.child.pid, host: expect.any(String), token: expect.any(String) });

    await kill(h);
    expect(existsSync(join(root, INTEGRATION_LOCK))).toBe(true); // left behind, fresh for 15 s more
    const release = await lockIntegrationFile(root, 10_000);
    // Taken over as a dead holder's, not waited out as a stale one.
    expect(release.tookOver).toMatchObject({ pid: h.child.pid, dead: true });
    expect(holderOf(root)).toMatchObject({ pid: process.pid });
    await release();
    expect(existsSync(join(root, INTEGRATION_LOCK))).toBe(false);
    // Nothing left beside it (the takeover's claim and the moved-aside lock are removed).
    expect(strays(root)).toEqual([]);
  });

  it('makes a waiter wait behind a live holder until it lets go; past its timeout the waiter is Busy', async () => {
    const root = tempDir();
    const h = await holder(root);
    expect((await take(h)).held).toBe(true);

    // Alive: the lock is not taken; the waiter gives up at its timeout, the lock still the holder's.
    const err = await lockIntegrationFile(root, 300).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'Busy',
      details: { db_path: join(root, INTEGRATION_LOCK), timeout_ms: 300 },
      hint: 'another tugcode commit or run is integrating; retry in a moment',
    });
    expect(holderOf(root)).toMatchObject({ pid: h.child.pid });

    // A patient waiter has tried once already when the call returns (the first try is synchronous).
    let settled = false;
    const waiter = lockIntegrationFile(root, 30_000).finally(() => (settled = true));
    expect(settled).toBe(false);
    expect(holderOf(root)).toMatchObject({ pid: h.child.pid });
    h.child.stdin.write('release\n');
    expect(await h.line()).toBe('released');
    const release = await waiter;
    expect(release.tookOver).toBeNull(); // handed over, not taken over
    expect(holderOf(root)).toMatchObject({ pid: process.pid });
    await release();
    expect(existsSync(join(root, INTEGRATION_LOCK))).toBe(false);
    expect(strays(root)).toEqual([]);
  });

  it('lets the git flows integrate at once after a holder was killed (withIntegrationLock)', async () => {
    const root = tempDir();
    const h = await holder(root);
    expect((await take(h)).held).toBe(true);
    await kill(h);
    // The dead holder's lock was made just now, so it stays fresh for 15 s: waiting it out would be Busy.
    let ran = false;
    await withIntegrationLock(
      root,
      () => {
        ran = true;
        expect(holderOf(root)).toMatchObject({ pid: process.pid });
      },
      10_000,
    );
    expect(ran).toBe(true);
    expect(existsSync(join(root, INTEGRATION_LOCK))).toBe(false);
    expect(strays(root)).toEqual([]);
  });

  it('two takers racing for a dead holder: exactly one gets the lock, the other waits behind it', async () => {
    for (let round = 0; round < 4; round++) {
      const root = tempDir();
      const dead = await holder(root);
      expect((await take(dead)).held).toBe(true);
      await kill(dead);
      const [a, b] = await Promise.all([holder(root, 1_500), holder(root, 1_500)]);
      const got = await Promise.all([take(a), take(b)]);
      expect(got.filter((g) => g.held)).toHaveLength(1);
      expect(got.filter((g) => !g.held)).toEqual([{ held: false, code: 'Busy' }]);
      const winner = got[0]!.held ? a : b;
      expect(got.find((g) => g.held)!.tookOver).toMatchObject({ pid: dead.child.pid, dead: true });
      expect(holderOf(root)).toMatchObject({ pid: winner.child.pid });
      await kill(winner);
    }
  });

  it('keeps the staleness rule for a holder it cannot judge: another host, or none named', async () => {
    const root = tempDir();
    const lock = join(root, INTEGRATION_LOCK);
    mkdirSync(lock, { recursive: true });
    // A pid that cannot run here, on another host: not provably dead.
    writeFileSync(
      join(lock, 'holder.json'),
      JSON.stringify({ host: 'elsewhere', pid: 999_999_999, started_at: '2026-01-01T00:00:00.000Z', token: 't' }),
    );
    await expect(lockIntegrationFile(root, 300)).rejects.toMatchObject({ code: 'Busy' });
    const old = new Date(Date.now() - 20_000);
    utimesSync(lock, old, old);
    const release = await lockIntegrationFile(root, 2_000);
    expect(release.tookOver).toEqual({
      host: 'elsewhere',
      pid: 999_999_999,
      started_at: '2026-01-01T00:00:00.000Z',
      dead: false,
    });
    await release();

    // A lock directory without a holder (an older tugcode's, through proper-lockfile): fresh, it blocks;
    // stale, it is taken.
    mkdirSync(lock);
    await expect(lockIntegrationFile(root, 300)).rejects.toMatchObject({ code: 'Busy' });
    utimesSync(lock, old, old);
    const again = await lockIntegrationFile(root, 2_000);
    expect(again.tookOver).toBeNull();
    expect(holderOf(root)).toMatchObject({ pid: process.pid });
    await again();
    expect(existsSync(lock)).toBe(false);
    expect(strays(root)).toEqual([]);
  });

  it('is never held at once by this tugcode and an older one taking it through proper-lockfile', async () => {
    const root = tempDir();
    mkdirSync(join(root, TUGTOOL_DIR));
    // Each process takes the lock 300 times and, holding it, makes and removes one marker directory: a
    // marker already there means both are inside. The older tugcode's lock is an empty directory, which a
    // lock renamed into place would silently replace.
    const inside = `
const { mkdirSync, rmdirSync } = await import('node:fs');
const [kind, root, mod] = process.argv.slice(2);
const lock = kind === 'old'
  ? (await import(mod)).default.lock.bind(null, root + '/.tugtool/integration', {
      realpath: false, lockfilePath: root + '/.tugtool/integration.lock', stale: 15000, update: 5000,
      retries: { retries: 100000, factor: 1, minTimeout: 1, maxTimeout: 2 }, onCompromised: () => {} })
  : () => import(mod).then((m) => m.lockIntegrationFile(root, 20000));
let both = 0;
for (let i = 0; i < 300; i++) {
  const release = await lock();
  try { mkdirSync(root + '/inside'); rmdirSync(root + '/inside'); } catch { both++; }
  await release();
}
process.stdout.write(String(both));
`;
    const script = join(root, 'inside.mjs');
    writeFileSync(script, inside);
    const oldLock = resolve(__dirname, '../../node_modules/proper-lockfile/index.js');
    const run = (kind: string, mod: string) =>
      new Promise<string>((done, fail) => {
        const p = spawn(process.execPath, [script, kind, root, mod]);
        let out = '';
        p.stdout.on('data', (d: Buffer) => (out += d));
        p.on('error', fail);
        p.on('exit', (code) => (code === 0 ? done(out) : fail(new Error(`${kind} exited ${code}`))));
      });
    expect(await Promise.all([run('old', oldLock), run('new', LOCK_MODULE)])).toEqual(['0', '0']);
  }, 60_000);
});
