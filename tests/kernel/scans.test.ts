/**
 * Scans (docs/kernel.md §6.6) for TypeScript: UnresolvedMemberReference for `.old` accesses outside the edit
 * set whose receiver the checker cannot resolve; SkippedStringLiteral stays as before.
 */
import { describe, it, expect } from 'vitest';
import { realpathSync } from 'node:fs';
import { openKernel } from '../../src/kernel/index.js';
import { tempWs, TSCONFIG } from './helpers.js';

describe('member reference scan', () => {
  it('warns for an untyped .old access the rename cannot reach, not for typed or unrelated ones', async () => {
    const ws = realpathSync(
      tempWs({
        'tsconfig.json': TSCONFIG,
        'src/base.ts':
          'export class Base {\n  process(): number {\n    return 1;\n  }\n}\nexport class Other {\n  process(): string {\n    return "";\n  }\n}\n',
        'src/use.ts':
          "import { Base, Other } from './base';\n" +
          'export function typed(b: Base): number {\n  return b.process();\n}\n' +
          'export function other(o: Other): string {\n  return o.process();\n}\n' +
          'export function loose(x: any): unknown {\n  return x.process?.() ?? x?.process;\n}\n' +
          "export const label = 'process';\n",
        'src/none.ts': 'export const unrelated = 1;\n',
        'src/js.js': 'export function call(o) {\n  return o.process();\n}\n',
      }),
    );
    const k = await openKernel({ workspace: ws, env: {} });
    try {
      const r = await k.analyzeImpact({ op: 'rename-symbol', symbol: 'src/base.ts::Base.process', to: 'handle' });
      expect(r.references!.map((x) => `${x.location.file}:${x.location.line}:${x.kind}`)).toEqual([
        'src/base.ts:2:definition',
        'src/use.ts:3:call',
      ]);
      const ws2 = r.warnings.map((w) => `${w.code} ${w.location?.file}:${w.location?.line}:${w.location?.col}`);
      expect(ws2).toEqual([
        'UnresolvedMemberReference src/js.js:2:12',
        'UnresolvedMemberReference src/use.ts:9:12',
        'UnresolvedMemberReference src/use.ts:9:30',
        'SkippedStringLiteral src/use.ts:11:23',
      ]);
      // A JavaScript file outside the tsconfig project is scanned too: its receiver is unknown.
      expect(r.warnings.every((w) => w.location?.file !== 'src/none.ts')).toBe(true);
      // Functions are not members: no member scan.
      const f = await k.analyzeImpact({ op: 'rename-symbol', symbol: 'src/use.ts::typed', to: 'typedFn' });
      expect(f.warnings.filter((w) => w.code === 'UnresolvedMemberReference')).toEqual([]);
    } finally {
      await k.close();
    }
  });
});
