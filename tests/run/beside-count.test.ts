/**
 * The count of runs beside an outside-write span (src/run/child.ts besideSince, docs/agents.md §1.6): the
 * span's own child is not beside it, and a span with no child of its own (the refactors' verification,
 * the kernel's, in the driver's process) counts every child started since.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { besideSince, childMark, runChild } from '../../src/run/child.js';
import { tempDir } from '../helpers/repo.js';

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nowhere' };

describe('besideSince', () => {
  it("one child started since the mark: the span's own (own 1), or one beside a span with none (own 0)", async () => {
    const dir = tempDir();
    const mark = childMark();
    const r = await runChild({ argv: ['true'], cwd: dir, env: ENV, timeoutMs: 30_000, logPath: join(dir, 'c.log') });
    expect(r.ok).toBe(true);
    expect(besideSince(mark)).toBe(0);
    expect(besideSince(mark, 1)).toBe(0);
    expect(besideSince(mark, 0)).toBe(1);
  });
});
