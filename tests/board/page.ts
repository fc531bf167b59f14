/**
 * The board's page as the browser tests read it: where a card is, what the page counted, the snapshot the
 * server holds. Shared by the browser test files.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { tempDir } from '../helpers/repo.js';
import { http, type Where } from './helpers.js';

/** The lane a step's card is in now (null: no card). */
export function laneOf(page: Page, step: string): Promise<string | null> {
  return page.evaluate(
    (s) =>
      (globalThis as any).document.querySelector(`.card[data-step="${s}"]`)?.closest('.lane')?.dataset.lane ?? null,
    step,
  );
}

/** Waits (polling in the page) until the step's card is in `lane`. */
export async function waitLane(page: Page, step: string, lane: string, ms = 60_000): Promise<void> {
  await page.waitForFunction(
    ([s, l]) =>
      (globalThis as any).document.querySelector(`.card[data-step="${s}"]`)?.closest('.lane')?.dataset.lane === l,
    [step, lane],
    { timeout: ms, polling: 50 },
  );
}

/** The snapshot the board holds now (GET /api/snapshot). */
export async function serverSnapshot(w: Where): Promise<any> {
  const r = await http(w.base, `/api/snapshot?token=${w.token}`, { headers: { Host: `127.0.0.1:${w.port}` } });
  return r.json;
}

/** Polls `fn` (every 50 ms) until it returns a truthy value; throws after `ms`. */
export async function until<T>(what: string, fn: () => Promise<T> | T, ms = 60_000): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * An implementer that waits for the test: it prints `working on <step>`, then waits until `<gate>/<step>`
 * exists (polling), prints that file's text, fails when `<gate>/<step>.fail` exists, else writes
 * `<step>.txt` and prints `done <step>`. It gives up once the gate is gone (the test file's temp directories
 * removed), so a run a failed test left behind cannot keep it polling for ever.
 */
export function gatedImplementer(): { argv: string; gate: string; open: (step: string, text?: string) => void } {
  const dir = tempDir('tugcode-gate-');
  const gate = join(dir, 'gate');
  mkdirSync(gate);
  const script = join(dir, 'impl.sh');
  writeFileSync(
    script,
    `#!/bin/sh
cat > /dev/null
step="$TUG_STEP"
echo "working on $step"
while [ ! -e '${gate}'/"$step" ]; do [ -d '${gate}' ] || exit 3; sleep 0.05; done
cat '${gate}'/"$step"
if [ -e '${gate}'/"$step.fail" ]; then echo 'failing as asked' >&2; exit 1; fi
echo "$step" > "$TUG_WORKTREE/$step.txt"
echo "done $step"
`,
    { mode: 0o755 },
  );
  return {
    argv: JSON.stringify(script),
    gate,
    open: (step, text = '') => writeFileSync(join(gate, step), text),
  };
}
