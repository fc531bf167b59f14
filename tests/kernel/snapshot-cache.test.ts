/**
 * A warm kernel's snapshots (docs/kernel.md §10.1): files whose stat is unchanged and not racy are reused
 * from the previous snapshot; any change (content, size, touch) is seen.
 */
import { describe, it, expect } from 'vitest';
import { realpathSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { takeSnapshot } from '../../src/kernel/snapshot.js';
import { openKernel } from '../../src/kernel/index.js';
import { tempWs } from './helpers.js';

describe('snapshot reuse', () => {
  it('reuses stat-equal old files and re-reads changed or recently written ones', async () => {
    const ws = realpathSync(tempWs({ 'a.ts': 'export const a = 1;\n', 'b.ts': 'export const b = 2;\n' }));
    const old = new Date(Date.now() - 60_000);
    for (const f of ['a.ts', 'b.ts']) utimesSync(join(ws, f), old, old);
    // utimes sets ctime to now: a racy window of 0 lets these files count as old.
    const s1 = await takeSnapshot(ws);
    const s2 = await takeSnapshot(ws, {}, s1, -1000);
    expect(s2.id).toBe(s1.id);
    expect(s2.bytes.get('a.ts')).toBe(s1.bytes.get('a.ts')); // same buffer: not read again
    // Same size, new content, and the mtime forced back to the old value: ctime still differs.
    writeFileSync(join(ws, 'a.ts'), 'export const a = 9;\n');
    utimesSync(join(ws, 'a.ts'), old, old);
    const s3 = await takeSnapshot(ws, {}, s2, -1000);
    expect(s3.id).not.toBe(s2.id);
    expect(Buffer.from(s3.bytes.get('a.ts')!).toString()).toBe('export const a = 9;\n');
    expect(s3.bytes.get('b.ts')).toBe(s1.bytes.get('b.ts'));
    // A file written just now is racy: always read, even when nothing else changed.
    writeFileSync(join(ws, 'b.ts'), 'export const b = 2;\n');
    const s4 = await takeSnapshot(ws, {}, s3);
    expect(s4.bytes.get('b.ts')).not.toBe(s3.bytes.get('b.ts'));
    expect((await takeSnapshot(ws)).id).toBe(s4.id);
  });

  it('sees a file edited between two operations of one kernel', async () => {
    const ws = realpathSync(
      tempWs({
        'tsconfig.json': '{}',
        'a.ts': 'export function alpha() {\n  return 1;\n}\n',
        'b.ts': "import { alpha } from './a';\nalpha();\n",
      }),
    );
    const k = await openKernel({ workspace: ws, env: {} });
    try {
      const p1 = await k.prepare({ op: 'rename-symbol', symbol: 'a.ts::alpha', to: 'first' });
      writeFileSync(join(ws, 'b.ts'), "import { alpha } from './a';\nalpha();\nalpha();\n");
      const p2 = await k.prepare({ op: 'rename-symbol', symbol: 'a.ts::alpha', to: 'first' });
      expect(p2.snapshot_id).not.toBe(p1.snapshot_id);
      expect(p2.summary.edits_count).toBe(p1.summary.edits_count + 1);
    } finally {
      await k.close();
    }
  });
});
