/**
 * The count of runs beside an outside-write span (src/run/child.ts besideSince, docs/agents.md §1.6): the
 * span's own child is not beside it; every other child running at the mark or started since is.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { besideSince, childMark, runChild } from '../../src/run/child.js';
import { tempDir } from '../helpers/repo.js';

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nowhere' };

describe('besideSince', () => {
  it("the span's own child is not beside it; a second one started since is", async () => {
    const dir = tempDir();
    const run = () => runChild({ argv: ['true'], cwd: dir, env: ENV, timeoutMs: 30_000, logPath: join(dir, 'c.log') });
    const mark = childMark();
    expect((await run()).ok).toBe(true);
    expect(besideSince(mark)).toBe(0);
    expect((await run()).ok).toBe(true);
    expect(besideSince(mark)).toBe(1);
  });
});
