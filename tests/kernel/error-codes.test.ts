/**
 * The kernel's error table (src/kernel/errors.ts) and docs/kernel.md §5.2 agree: every code is documented in
 * the row of its exit code, and the table documents no code the kernel lacks.
 */
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXIT_BY_CODE } from '../../src/kernel/errors.js';

const DOC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'kernel.md');

describe('kernel error codes (docs/kernel.md §5.2)', () => {
  it('documents every code in the row of its exit code', () => {
    const text = readFileSync(DOC, 'utf8');
    const section = text.slice(text.indexOf('### 5.2 Error codes'), text.indexOf('### 5.3'));
    const rows = new Map<number, string[]>();
    for (const m of section.matchAll(/^\| (\d+) \| (.*) \|$/gm)) {
      // A code is the first backticked word of each comma-separated entry, outside parentheses.
      const top = m[2]!.replace(/\([^()]*(\([^()]*\)[^()]*)*\)/g, '');
      rows.set(
        Number(m[1]),
        [...top.matchAll(/`([A-Z][A-Za-z]+)`/g)].map((x) => x[1]!),
      );
    }
    const documented = new Map<string, number>();
    for (const [exit, codes] of rows) for (const c of codes) documented.set(c, exit);
    expect(Object.fromEntries(documented)).toEqual(EXIT_BY_CODE);
  });
});
