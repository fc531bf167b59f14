/**
 * A reader gone from stdout (`tugcode … | head`): a short command ends quietly with exit 0 (docs/output.md
 * §3); `run` stops instead, exit 141 (tests/run/kill.test.ts).
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';

describe('a closed stdout', () => {
  it('ends a short command quietly with exit 0', async () => {
    const child = spawn(process.execPath, [CLI, 'schema', 'state show'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // Closed before the child has started, so its first write meets a pipe nobody reads.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
