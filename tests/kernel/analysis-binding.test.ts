/**
 * A run is bound to an analysis only through `--snapshot-id` (docs/kernel.md §10.2): the user probe's
 * sequence — analyse, add an unrelated file, run — applies, and a run bound to the stale analysis is refused
 * with a message that names the recovery, which then works. Runs the built `tug` as a user would.
 */
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/cli.js';
import { kernelEnv, tempWs } from './helpers.js';

const TUG = join(ROOT, 'bin', 'tug.js');

function tug(argv: string[], cwd: string) {
  const r = spawnSync(process.execPath, [TUG, ...argv], { cwd, encoding: 'utf8', env: kernelEnv() });
  return { code: r.status, json: JSON.parse(r.stdout), stderr: r.stderr };
}

const RENAME = ['rename-symbol', '--symbol', 'pkg/core.py::compute', '--to', 'calc'];

describe('an earlier analyze-impact and tug run', () => {
  it('does not block a run without --snapshot-id after an unrelated file was added', () => {
    const ws = tempWs({
      'pkg/__init__.py': '',
      'pkg/core.py': 'def compute(x):\n    return x * 2\n',
      'pkg/main.py': 'from pkg.core import compute\n\nprint(compute(3))\n',
    });
    const an = tug(['analyze-impact', ...RENAME], ws);
    expect(an.code, an.stderr).toBe(0);
    writeFileSync(join(ws, 'pkg/extra.py'), 'VALUE = 1\n');

    // Bound to the analysis: refused, with the recovery in the message.
    const bound = tug(['run', '--snapshot-id', an.json.snapshot_id, ...RENAME], ws);
    expect([bound.code, bound.json.error.code]).toEqual([4, 'SnapshotMismatch']);
    expect(bound.json.error.details.changed_files).toEqual(['pkg/extra.py']);
    expect(bound.json.error.message).toMatch(/analyse again and pass its snapshot_id, or run without --snapshot-id/);
    expect(bound.stderr).toMatch(/run without --snapshot-id/);

    // The recovery it names works both ways: analyse again and bind to it, or run unbound.
    const again = tug(['analyze-impact', ...RENAME], ws);
    const rebound = tug(['run', '--verify', 'none', '--snapshot-id', again.json.snapshot_id, ...RENAME], ws);
    expect(rebound.code, rebound.stderr).toBe(0);
    const run = tug(['run', '--apply', ...RENAME], ws);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json.applied).toBe(true);
    expect(readFileSync(join(ws, 'pkg/main.py'), 'utf8')).toBe('from pkg.core import calc\n\nprint(calc(3))\n');
  });
});
