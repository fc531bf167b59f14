/**
 * run-step row sequencing (docs/kernel.md §7.3, §13.4): rows run in ordinal order with one warm backend (the
 * same pyright process serves every Python row), and a lease lost between rows stops the run before the
 * next row writes anything: that row stays open and the answer is the ownership error.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runStep } from '../../src/refactor/run-step.js';
import { release } from '../../src/state/release.js';
import { initAndClaim, PLAN_PATH, setup, withCtx } from './helpers.js';

const PY = {
  'pkg/__init__.py': '',
  'pkg/a.py': 'def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n\n\ndef gamma():\n    return 3\n',
  'pkg/use.py': 'from pkg.a import alpha, beta, gamma\n\nTOTAL = alpha() + beta() + gamma()\n',
};
const op = (from: string, to: string) => `rename-symbol --verify none --symbol pkg/a.py::${from} --to ${to}`;

describe('run-step rows', () => {
  it('runs rows in order on one warm pyright, and stops before the next row when the lease is lost', async () => {
    const { root, wt } = setup([op('alpha', 'first'), op('beta', 'second'), op('gamma', 'third')], PY);
    await initAndClaim(root, wt);
    const seen: { ordinal: number; status: string; pid: string }[] = [];
    const r = await withCtx(root, wt, { command: 'refactor run-step' }, (ctx) =>
      runStep(
        ctx,
        { plan: PLAN_PATH, step: 'step-1', worktree: wt },
        {
          heartbeat_seconds: 60,
          max_concurrent_sessions: 1,
          kernel: { env: { NODE_ENV: 'test' } },
          onRow: async (report) => {
            const pid = readFileSync(join(wt, '.tug', 'backends', 'pyright.pid'), 'utf8').split('\n')[0]!; // pid, start time
            seen.push({ ordinal: report.ordinal, status: report.status, pid });
            // After the second row the claim goes away (released here; a takeover looks the same).
            if (report.ordinal === 1)
              await withCtx(root, wt, { command: 'state release' }, (c) =>
                release(c, { plan: PLAN_PATH, step: 'step-1', worktree: wt }),
              );
          },
        },
      ),
    );
    expect(seen.map((s) => [s.ordinal, s.status])).toEqual([
      [0, 'applied'],
      [1, 'applied'],
    ]);
    expect(seen[0]!.pid).toMatch(/^\d+$/);
    expect(seen[1]!.pid).toBe(seen[0]!.pid); // one warm backend served both rows
    expect([r.status, r.exit_code, r.error?.code]).toEqual(['error', 4, 'LeaseExpired']); // a released claim answers as a lost lease
    expect(r.ops.map((o) => o.status)).toEqual(['applied', 'applied', 'open']);
    const use = readFileSync(join(wt, 'pkg/use.py'), 'utf8');
    expect(use).toContain('first() + second() + gamma()'); // the third rename never ran
  });
});
