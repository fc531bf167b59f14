/**
 * `.tugtool/config.toml` is read only when it is a regular file of at most MAX_CONFIG_BYTES (docs/quality.md:
 * every input has a bound): a FIFO with no writer, a symlink to /dev/zero, a directory or a huge file is
 * ConfigInvalid (exit 2) at once, from tugcode and from the kernel's `tug` alike, never a hang.
 */
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, ROOT } from '../helpers/cli.js';
import { tempRepo } from '../helpers/repo.js';
import { MAX_CONFIG_BYTES } from '../../src/kernel/config-file.js';

const TUG = join(ROOT, 'bin', 'tug.js');

/** A repository whose config.toml is made by `make(path)`. */
function repoWith(make: (path: string) => void): string {
  const root = tempRepo({ 'a.py': 'x = 1\n' });
  mkdirSync(join(root, '.tugtool'), { recursive: true });
  make(join(root, '.tugtool', 'config.toml'));
  return root;
}

/** Run a CLI with a deadline far below a hang's: a hang is a timeout here, not a passing test. */
function run(bin: string, args: string[], cwd: string) {
  const started = Date.now();
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: r.status, json: JSON.parse(r.stdout || 'null'), ms: Date.now() - started, signal: r.signal };
}

/** What it is, how it is made, the message, and the hint (a file too large is a regular file already). */
const KINDS: [string, (p: string) => void, RegExp, RegExp][] = [
  ['a FIFO with no writer', (p) => execFileSync('mkfifo', [p]), /not a regular file but a FIFO/, /regular file/],
  [
    'a symlink to /dev/zero',
    (p) => symlinkSync('/dev/zero', p),
    /not a regular file but a character device/,
    /regular file/,
  ],
  ['a directory', (p) => mkdirSync(p), /not a regular file but a directory/, /regular file/],
  [
    'a regular file over the bound',
    (p) => writeFileSync(p, '# ' + 'x'.repeat(MAX_CONFIG_BYTES) + '\n'),
    new RegExp(`larger than ${MAX_CONFIG_BYTES} bytes`),
    /^shorten \.tugtool\/config\.toml/,
  ],
];

describe('config.toml that is no regular file', () => {
  it.each(KINDS)('tugcode refuses %s with ConfigInvalid at once', (_what, make, reason, hint) => {
    const root = repoWith(make);
    const r = run(CLI, ['status', '--json'], root);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    expect(r.json.error.code).toBe('ConfigInvalid');
    expect(r.json.error.message).toMatch(reason);
    expect(r.json.error.hint).toMatch(hint);
    rmSync(root, { recursive: true, force: true });
  });

  it.each(KINDS)('tug (the kernel) refuses %s with ConfigInvalid at once', (_what, make, reason) => {
    const root = repoWith(make);
    const r = run(TUG, ['doctor', '--json'], root);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    expect(r.json.error.code).toBe('ConfigInvalid');
    expect(r.json.error.message).toMatch(reason);
    rmSync(root, { recursive: true, force: true });
  });

  it('reads a regular file through a symlink as before', () => {
    const root = repoWith((p) => {
      writeFileSync(p + '.real', '[state]\nlease_seconds = 0\n');
      symlinkSync(p + '.real', p);
    });
    // lease_seconds 0 is invalid: the error proves the file behind the link was read.
    const r = run(CLI, ['status', '--json'], root);
    expect(r.code).toBe(2);
    expect(r.json.error.message).toMatch(/lease_seconds/);
  });
});
