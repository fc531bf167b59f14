/**
 * Python through the `tug` command table (docs/kernel.md §3.3, §13.2): invalid new names are refused before
 * any backend starts (exit 2), a library symbol is NotRenameable (exit 3), organize-imports is refused with
 * the ruff fallback, and nothing is written.
 */
import { describe, it, expect } from 'vitest';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { runKernelCli } from '../../../src/kernel/cli/tug.js';
import { readTree, tempWs } from '../helpers.js';

const tug = async (ws: string, argv: string[]) => {
  const r = await runKernelCli(argv, { prog: 'tug', env: {}, cwd: ws });
  return { ...r, env: JSON.parse(r.stdout) };
};

describe('python through the CLI', () => {
  it('refuses invalid new names with InvalidArgument before starting pyright', async () => {
    const ws = realpathSync(tempWs({ 'a.py': 'def process(x):\n    return x\n' }));
    for (const [to, reason] of [
      ['1abc', 'not_an_identifier'],
      ['class', 'reserved_word'],
      ['a-b', 'not_an_identifier'],
    ] as const) {
      const r = await tug(ws, ['run', 'rename-symbol', '--at', 'a.py:1:5', '--to', to]);
      expect([r.exitCode, r.env.error.code, r.env.error.details]).toEqual([
        2,
        'InvalidArgument',
        { argument: '--to', value: to, reason },
      ]);
    }
    expect(existsSync(join(ws, '.tug', 'logs', 'pyright.log'))).toBe(false);
  });

  it('reports a builtin as NotRenameable and organize-imports as unsupported, writing nothing', async () => {
    const ws = realpathSync(tempWs({ 'a.py': 'import os\n\nprint(os.sep)\n' }));
    const before = readTree(ws);
    const r = await tug(ws, ['run', '--apply', 'rename-symbol', '--at', 'a.py:3:1', '--to', 'show']);
    expect([r.exitCode, r.env.error.code, r.env.error.details.reason]).toEqual([3, 'NotRenameable', 'library_symbol']);
    expect(r.env.error.location).toEqual({ file: 'a.py', line: 3, col: 1 });
    const o = await tug(ws, ['run', 'organize-imports', '--file', 'a.py']);
    expect([o.exitCode, o.env.error.code, o.env.error.details.fallback]).toEqual([
      2,
      'UnsupportedOperation',
      'ruff check --select I --fix a.py',
    ]);
    expect(readTree(ws)).toEqual(before);
  });
});
