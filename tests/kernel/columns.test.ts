/**
 * Diagnostic positions (docs/kernel.md §4.1): tsc's (line, UTF-16 character) become (line counted by `\n`,
 * col in UTF-8 bytes after the BOM), through a real tsc run and for TypeScript's other line breaks.
 */
import { describe, it, expect } from 'vitest';
import { realpathSync } from 'node:fs';
import { openKernel } from '../../src/kernel/index.js';
import { toByteColumns } from '../../src/kernel/verify/columns.js';
import { tempWs, TSCONFIG } from './helpers.js';

describe('tsc diagnostic columns', () => {
  it('counts UTF-8 bytes after a BOM on CRLF lines with 2- and 4-byte characters', async () => {
    const ws = realpathSync(
      tempWs({
        'tsconfig.json': TSCONFIG,
        'src/a.ts': '\uFEFF// naïve\r\nconst s = "é😀"; const n: number = s;\r\nexport { n };\r\n',
      }),
    );
    const k = await openKernel({ workspace: ws, env: {}, testCommand: ['node', '-e', ''] });
    try {
      const e = await k.verify('typecheck').catch((x) => x);
      expect(e.code).toBe('TypecheckFailed');
      // `n` is UTF-16 character 24 of line 2; "é" adds 1 byte and "😀" 2 more (4 bytes for 2 units).
      expect(e.details.errors).toEqual([
        {
          file: 'src/a.ts',
          line: 2,
          col: 27,
          code: 'TS2322',
          message: "Type 'string' is not assignable to type 'number'.",
        },
      ]);
    } finally {
      await k.close();
    }
  });

  it('maps lines split by a lone CR or U+2028 back to \\n-terminated lines', () => {
    const ws = tempWs({ 'a.ts': 'ab\rcd\u2028éf = 1;\nx' });
    const out = toByteColumns(ws, [
      { file: 'a.ts', line: 2, col: 2, code: 'TS1', message: 'd' },
      { file: 'a.ts', line: 3, col: 2, code: 'TS1', message: 'f' },
      { file: 'a.ts', line: 4, col: 1, code: 'TS1', message: 'x' },
      { file: 'missing.ts', line: 1, col: 5, code: 'TS1', message: 'kept' },
    ]);
    expect(out.map((d) => [d.line, d.col])).toEqual([
      [1, 5],
      [1, 11],
      [2, 1],
      [1, 5],
    ]);
  });
});
