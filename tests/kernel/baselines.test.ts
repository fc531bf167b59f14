/**
 * Baselines (docs/kernel.md §11.3) are cached in <session>/baselines/ by (snapshot_id, check, tool version,
 * argv): a second run on the same snapshot reuses them instead of running the checker again.
 */
import { describe, it, expect } from 'vitest';
import { readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openKernel } from '../../src/kernel/index.js';
import { tempWs, TSCONFIG } from './helpers.js';

describe('baseline cache', () => {
  it('reuses the tsc and ts-syntax baselines of a snapshot', async () => {
    const ws = realpathSync(
      tempWs({
        'tsconfig.json': TSCONFIG,
        'src/a.ts':
          'export function alpha(): number {\n  return 1;\n}\nexport function beta(): number {\n  return 2;\n}\n',
        'src/b.ts': "import { alpha } from './a';\nexport const v = alpha();\n",
      }),
    );
    const k = await openKernel({ workspace: ws, env: {}, testCommand: ['node', '-e', ''] });
    try {
      const op = { op: 'rename-symbol' as const, symbol: 'src/a.ts::alpha', to: 'beta' };
      const e1 = await k.run(op, { apply: false, verify: 'typecheck' }).catch((e) => e);
      expect(e1.code).toBe('TypecheckFailed');
      const dir = join(ws, '.tug', 'baselines');
      const entries = readdirSync(dir).map((n) => ({ n, v: JSON.parse(readFileSync(join(dir, n), 'utf8')) }));
      expect(entries.map((x) => x.v.key.check).sort()).toEqual(['ts-syntax', 'tsc']);
      expect(entries.every((x) => x.v.key.snapshot_id === e1.snapshotId)).toBe(true);
      // Put the new errors into the cached tsc baseline: the next run on this snapshot must use it.
      const tsc = entries.find((x) => x.v.key.check === 'tsc')!;
      writeFileSync(
        join(dir, tsc.n),
        JSON.stringify({ ...tsc.v, diagnostics: [...tsc.v.diagnostics, ...e1.details.errors] }),
      );
      const r2 = await k.run(op, { apply: false, verify: 'typecheck' });
      expect(r2.verification.checks.map((c) => [c.name, c.status])).toEqual([
        ['ts-syntax', 'passed'],
        ['tests', 'passed'],
        ['tsc', 'passed'],
      ]);
      expect(r2.verification.checks[2]!.baseline).toEqual({ diagnostics: e1.details.errors.length });
    } finally {
      await k.close();
    }
  });
});
