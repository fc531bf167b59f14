/**
 * bin/tugcode.cjs runs the CLI bundle through a V8 code cache in `<tmpdir>/tug-v8-cache`: the first run
 * writes it, later runs use it, and a cache that is corrupt, or in a directory other users can write, never
 * changes what a command does.
 */
import { chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir, tempRepo } from '../helpers/repo.js';

const PLAN = { '.tugtool/tugplan-a.md': '# A\n\n#### Step 1: One\n\n**Tasks:**\n- [ ] x\n' };

describe('the CLI code cache', () => {
  it('is written by the first run and used by the next, with the same output', () => {
    const tmp = tempDir();
    const root = tempRepo(PLAN);
    const env = { TMPDIR: tmp };
    const first = runCli(['validate', 'a', '--json'], { cwd: root, env });
    const cacheDir = join(tmp, 'tug-v8-cache');
    expect(readdirSync(cacheDir).filter((f) => /^tugcode-[0-9a-f]{8}\.bin$/.test(f))).toHaveLength(1);
    const second = runCli(['validate', 'a', '--json'], { cwd: root, env });
    expect([second.code, second.stdout, second.stderr]).toEqual([first.code, first.stdout, first.stderr]);
    expect(first.code).toBe(0);
  });

  it('ignores a corrupt cache and a cache directory that others can write', () => {
    const root = tempRepo(PLAN);
    const expected = runCli(['validate', 'a', '--json'], { cwd: root, env: { TUG_NO_CODE_CACHE: '1' } });
    // A corrupt file in a trusted directory: V8 rejects it, the run compiles and rewrites it.
    const tmp = tempDir();
    const cacheDir = join(tmp, 'tug-v8-cache');
    runCli(['validate', 'a', '--json'], { cwd: root, env: { TMPDIR: tmp } });
    for (const f of readdirSync(cacheDir)) writeFileSync(join(cacheDir, f), 'not a code cache');
    const corrupt = runCli(['validate', 'a', '--json'], { cwd: root, env: { TMPDIR: tmp } });
    expect([corrupt.code, corrupt.stdout]).toEqual([expected.code, expected.stdout]);
    // A world-writable directory is not read at all.
    const open = tempDir();
    mkdirSync(join(open, 'tug-v8-cache'));
    chmodSync(join(open, 'tug-v8-cache'), 0o777);
    const r = runCli(['validate', 'a', '--json'], { cwd: root, env: { TMPDIR: open } });
    expect([r.code, r.stdout]).toEqual([expected.code, expected.stdout]);
  });
});
