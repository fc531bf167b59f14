/**
 * `tug run --text` (docs/kernel.md §3.4, README "dry run: the diff"): a dry run prints its summary line and
 * then the unified diff it would write, the same diff as the JSON's `patch.unified_diff`; an applied run
 * prints the summary line alone; warnings come after the summary line, one per line. `tugcode refactor run
 * --text` prints the same bytes. A flag where the command belongs is an unknown option. Built CLIs.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, realpathSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CLI, ROOT } from '../helpers/cli.js';
import { kernelEnv, tempWs, TSCONFIG } from './helpers.js';

const TUG = join(ROOT, 'bin', 'tug.js');
const FILES = {
  'tsconfig.json': TSCONFIG,
  'src/a.ts': 'export function alpha(): number {\n  return 1;\n}\n',
  'src/b.ts': "import { alpha } from './a';\nexport const v = alpha();\n",
};
const OP = ['rename-symbol', '--symbol', 'src/a.ts::alpha', '--to', 'first'];

function run(bin: string, args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    env: kernelEnv() as NodeJS.ProcessEnv,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('tug run --text', () => {
  it('calls a misplaced flag an unknown option, not an unknown command', () => {
    const ws = realpathSync(tempWs(FILES));
    for (const [argv, message] of [
      [['--bogus-flag', 'doctor'], 'unknown option "--bogus-flag"'],
      [['doctor', '--bogus-flag'], 'unknown option "--bogus-flag" for doctor'],
      // A short flag after the operation (tugcode's own -v/-q belong before `refactor`) is one too.
      [['run', ...OP, '-v'], 'unknown option "-v" for run'],
    ] as const) {
      const r = run(TUG, [...argv], ws);
      expect(r.code).toBe(2);
      const flag = (argv as readonly string[]).includes('-v') ? '-v' : '--bogus-flag';
      expect(JSON.parse(r.stdout).error).toMatchObject({
        code: 'InvalidArgument',
        message,
        details: { argument: flag, value: flag, reason: 'unknown_option' },
      });
      expect(r.stderr).toBe(`tug: InvalidArgument: ${message}\n`);
    }
  });

  it('prints the summary line, then the diff of a dry run', () => {
    const ws = realpathSync(tempWs(FILES));
    const json = run(TUG, ['run', ...OP], ws);
    expect(json.code, json.stderr).toBe(0);
    const diff = JSON.parse(json.stdout).patch.unified_diff as string;
    expect(diff).toContain('+export function first(): number {');

    const text = run(TUG, ['run', '--text', ...OP], ws);
    expect(text.code).toBe(0);
    const [first, ...rest] = text.stdout.split('\n');
    expect(first).toBe('rename-symbol alpha -> first: 2 files, 3 edits, verify syntax passed (dry run)');
    expect(rest.join('\n')).toBe(diff.endsWith('\n') ? diff : diff + '\n');
    // Nothing was written.
    expect(readFileSync(join(ws, 'src/a.ts'), 'utf8')).toBe(FILES['src/a.ts']);

    // tugcode refactor shares the front door: the same bytes.
    expect(run(CLI, ['refactor', 'run', '--text', ...OP], ws).stdout).toBe(text.stdout);
  });

  it('lists the warnings after the summary line, before the diff', () => {
    const ws = realpathSync(tempWs({ ...FILES, 'src/c.ts': "export const name = 'alpha';\n" }));
    const json = JSON.parse(run(TUG, ['run', ...OP], ws).stdout);
    expect(json.warnings.map((w: any) => w.code)).toEqual(['SkippedStringLiteral']);
    const text = run(TUG, ['run', '--text', ...OP], ws);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines[1]).toBe('warning SkippedStringLiteral at src/c.ts:1:22: string literal "alpha" was not renamed');
    expect(lines.slice(2).join('\n')).toBe(json.patch.unified_diff);
    const an = run(TUG, ['analyze-impact', '--text', ...OP], ws);
    expect(an.stdout.split('\n')[1]).toBe(lines[1]);
  });

  it('names the new name, not the text of the first edit, when that edit keeps a property (`old: NEW`)', () => {
    // main.js sorts first, and its destructuring edit is `parseConfig: loadConfig`.
    const ws = realpathSync(
      tempWs({
        'lib/util.js': 'function parseConfig(t) {\n  return t;\n}\nmodule.exports = { parseConfig };\n',
        'lib/main.js': "const { parseConfig } = require('./util');\nparseConfig('x');\n",
      }),
    );
    const r = run(TUG, ['run', '--text', 'rename-symbol', '--at', 'lib/util.js:1:10', '--to', 'loadConfig'], ws);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('+const { parseConfig: loadConfig } = require');
    expect(r.stdout.split('\n')[0]).toMatch(/^rename-symbol parseConfig -> loadConfig: 2 files, /);
  });

  it('verify --text does not count a skipped stage among the checks that passed, and says why', () => {
    const ws = realpathSync(tempWs(FILES));
    const r = run(TUG, ['verify', 'typecheck', '--text'], ws);
    expect(r.code, r.stderr).toBe(0);
    const [first, second] = r.stdout.split('\n');
    expect(first).toBe('verify typecheck passed (ts-syntax, tsc; skipped: tests)');
    expect(second).toMatch(/^warning VerificationStageSkipped: /);
  });

  it('prints the summary line alone when it applies', () => {
    const ws = realpathSync(tempWs(FILES));
    const r = run(TUG, ['run', '--apply', '--text', ...OP], ws);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('rename-symbol alpha -> first: 2 files, 3 edits, verify syntax passed (applied)\n');
  });
});
