/**
 * bin/tugcode.cjs runs the CLI bundle through a V8 code cache in `<tmpdir>/tug-v8-cache`: the first run
 * writes it, later runs use it, and a corrupt cache or an unsafe cache directory never changes what a
 * command does.
 */
import { chmodSync, mkdirSync, readdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
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

  it('survives a corrupt cache, makes a group-writable cache directory private, and never follows a symlink', () => {
    const root = tempRepo(PLAN);
    const expected = runCli(['validate', 'a', '--json'], { cwd: root, env: { TUG_NO_CODE_CACHE: '1' } });
    // A corrupt file: V8 rejects it, the run compiles and rewrites it.
    const tmp = tempDir();
    const cacheDir = join(tmp, 'tug-v8-cache');
    runCli(['validate', 'a', '--json'], { cwd: root, env: { TMPDIR: tmp } });
    for (const f of readdirSync(cacheDir)) writeFileSync(join(cacheDir, f), 'not a code cache');
    const corrupt = runCli(['validate', 'a', '--json'], { cwd: root, env: { TMPDIR: tmp } });
    expect([corrupt.code, corrupt.stdout]).toEqual([expected.code, expected.stdout]);
    // This user's directory that others could write becomes private before it is used.
    const open = tempDir();
    mkdirSync(join(open, 'tug-v8-cache'));
    chmodSync(join(open, 'tug-v8-cache'), 0o777);
    const r = runCli(['validate', 'a', '--json'], { cwd: root, env: { TMPDIR: open } });
    expect([r.code, r.stdout]).toEqual([expected.code, expected.stdout]);
    expect(statSync(join(open, 'tug-v8-cache')).mode & 0o077).toBe(0);
    // A cache directory that is a symlink is not used, and nothing is written through it.
    const linked = tempDir();
    const elsewhere = tempDir();
    symlinkSync(elsewhere, join(linked, 'tug-v8-cache'));
    const l = runCli(['validate', 'a', '--json'], { cwd: root, env: { TMPDIR: linked } });
    expect([l.code, l.stdout]).toEqual([expected.code, expected.stdout]);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('keeps one cache per command: a second command writes its own, and each is reused', () => {
    const tmp = tempDir();
    const root = tempRepo(PLAN);
    const env = { TMPDIR: tmp };
    const cacheDir = join(tmp, 'tug-v8-cache');
    const caches = () =>
      readdirSync(cacheDir)
        .filter((f) => /^tugcode-[0-9a-f]{8}\.bin$/.test(f))
        .sort();
    expect(runCli(['validate', 'a', '--json'], { cwd: root, env }).code).toBe(0);
    const one = caches();
    expect(one).toHaveLength(1);
    expect(runCli(['status', '--json'], { cwd: root, env }).code).toBe(0);
    expect(caches()).toHaveLength(2);
    // The same commands again (other arguments): no new file, none rewritten.
    const stamps = () => caches().map((f) => statSync(join(cacheDir, f)).mtimeMs);
    const before = stamps();
    expect(runCli(['validate', '--json'], { cwd: root, env }).code).toBe(0);
    expect(runCli(['status', 'a', '--json'], { cwd: root, env }).code).toBe(0);
    expect(stamps()).toEqual(before);
  });

  it('keeps the 48 newest cache files', () => {
    const root = tempRepo(PLAN);
    const tmp = tempDir();
    const cacheDir = join(tmp, 'tug-v8-cache');
    mkdirSync(cacheDir, { mode: 0o700 });
    for (let i = 1; i <= 52; i++) {
      const f = join(cacheDir, `tugcode-${i.toString(16).padStart(8, '0')}.bin`);
      writeFileSync(f, 'old');
      utimesSync(f, new Date(Date.now() - i * 3600_000), new Date(Date.now() - i * 3600_000));
    }
    expect(runCli(['validate', 'a', '--json'], { cwd: root, env: { TMPDIR: tmp } }).code).toBe(0);
    const files = readdirSync(cacheDir);
    const left = files.filter((n) => /^tugcode-[0-9a-f]{8}\.bin$/.test(n));
    expect(left).toHaveLength(48);
    expect(left).not.toContain('tugcode-00000034.bin'); // the oldest went first
    // The parser's vendor file (scripts/bundle.mjs) has caches of its own, pruned on their own.
    expect(files.filter((n) => n.startsWith('tugcode-vendor-'))).toHaveLength(1);
  });
});
