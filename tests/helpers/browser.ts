/**
 * A real headless Chromium for the board's tests (docs/board.md §8): Debian's `chromium`, driven by
 * playwright-core through its executablePath — no browser is downloaded from anywhere else.
 *
 * When it is missing, the first test file that asks installs it with apt (`apt-get install -y chromium`, as
 * root; CI runs as root with apt reachable and no stdin). A lock directory keeps the two test workers from
 * running apt at once. Not root and not CI: the caller skips with the reason (a developer installs it once
 * with `sudo apt-get install chromium`); not root under CI is a failure.
 *
 * A test file shares one browser (useBrowser), started before its tests and closed after them:
 *
 *   const chrome = useBrowser();
 *   it('…', async (ctx) => {
 *     const { page, watch } = await watchedPage(chrome.get(ctx));
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, type TestContext } from 'vitest';
import { alive } from './proc.js';

/** Where Debian puts the browser (the real binary first: /usr/bin/chromium is a shell wrapper around it). */
const CANDIDATES = ['/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser'];
const LOCK = join(tmpdir(), 'tugcode-chromium-install.lock');

export function findChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  const own = env.TUGCODE_CHROMIUM;
  if (own) return existsSync(own) ? own : null;
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Holds the install lock (a directory made atomically, its owner's pid inside) while `fn` runs. */
async function withInstallLock<T>(fn: () => T): Promise<T> {
  const until = Date.now() + 20 * 60_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      break;
    } catch {
      // Held: by a live installer (wait for it), or left by a dead one (take it over).
      let owner = 0;
      try {
        owner = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
      } catch {
        owner = 0;
      }
      if (owner > 0 && !alive(owner)) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > until) throw new Error(`timed out waiting for another chromium install (${LOCK})`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return fn();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

function apt(args: string[]): void {
  const r = spawnSync('apt-get', args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    timeout: 15 * 60_000,
  });
  if (r.status !== 0)
    throw new Error(
      `apt-get ${args.join(' ')} failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout).slice(-2000)}`,
    );
}

/** Chromium's path, installing it first when it is missing and this process may; else why not. */
export async function ensureChromium(): Promise<{ path: string } | { skip: string }> {
  const found = findChromium();
  if (found) return { path: found };
  if (!isRoot()) {
    const why = 'chromium is not installed and this is not root: sudo apt-get install chromium (docs/board.md §8)';
    if (process.env.CI) throw new Error(why);
    return { skip: why };
  }
  return withInstallLock(() => {
    const again = findChromium();
    if (again) return { path: again };
    apt(['update', '-qq']);
    apt(['install', '-y', '-qq', '--no-install-recommends', 'chromium']);
    const path = findChromium();
    if (!path) throw new Error('apt-get installed chromium, yet no chromium binary was found');
    return { path };
  });
}

/** A headless browser (closed after the file's tests by the caller), or the reason to skip. */
export async function browserOrSkip(): Promise<{ browser: Browser } | { skip: string }> {
  const c = await ensureChromium();
  if ('skip' in c) return c;
  const browser = await chromium.launch({
    executablePath: c.path,
    headless: true,
    // As root Chromium refuses its sandbox; /dev/shm may be small in containers.
    args: [...(isRoot() ? ['--no-sandbox'] : []), '--disable-dev-shm-usage', '--disable-gpu'],
  });
  return { browser };
}

/**
 * The file's one browser: launched (installing chromium when missing) before the file's tests, closed after
 * them. `get(ctx)` returns it, or skips the test with the reason there is none.
 */
export function useBrowser(): { get(ctx: Pick<TestContext, 'skip'>): Browser } {
  let browser: Browser | undefined;
  let skip = 'no browser';
  beforeAll(async () => {
    const b = await browserOrSkip();
    if ('skip' in b) skip = b.skip;
    else browser = b.browser;
  }, 20 * 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  return { get: (ctx) => browser ?? ctx.skip(skip) };
}

/** A new page (1400×900 unless told) with its watch: EventSources, their messages, console errors. */
export async function watchedPage(
  browser: Browser,
  viewport: { width: number; height: number } = { width: 1400, height: 900 },
): Promise<{ page: Page; watch: PageWatch }> {
  const page = await browser.newPage({ viewport });
  return { page, watch: await watchPage(page) };
}

/** What a page of the board did: EventSources created, messages they received, console errors. */
export interface PageWatch {
  errors: string[];
  eventSources(): Promise<number>;
  messages(): Promise<number>;
}

/**
 * Counts, from inside the page, every EventSource it creates and every message they deliver (an init script
 * wraps the constructor before the page's own script runs), and collects console errors and page errors.
 */
export async function watchPage(page: Page): Promise<PageWatch> {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.addInitScript(() => {
    const w = globalThis as unknown as {
      EventSource: typeof EventSource;
      __tug: { sources: number; messages: number };
    };
    const Native = w.EventSource;
    w.__tug = { sources: 0, messages: 0 };
    w.EventSource = class extends Native {
      constructor(url: string | URL, init?: EventSourceInit) {
        super(url, init);
        w.__tug.sources++;
        for (const t of ['hello', 'snapshot', 'plans', 'status', 'log', 'message'])
          this.addEventListener(t, () => w.__tug.messages++);
      }
    };
  });
  const read = (k: 'sources' | 'messages') =>
    page.evaluate((key) => (globalThis as unknown as { __tug: Record<string, number> }).__tug[key]!, k);
  return { errors, eventSources: () => read('sources'), messages: () => read('messages') };
}
