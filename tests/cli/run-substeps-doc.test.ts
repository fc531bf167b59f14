/**
 * Issue 22 item 22: the implementer runs once per substep, then once for the step, each with the brief of
 * that (sub)step and its own commit. `run --help` and the README say so; this checks what they say against
 * a real run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.js';
import { implementerScript, planText, runJsonl, runRepo, seenBy, stepCommits } from '../run/helpers.js';

const PLAN = planText([
  '#### Step 1: Top {#step-1}\n\n**Commit:** `feat: top`\n\n**Tasks:**\n- [ ] top task\n',
  '##### Step 1.1: A {#step-1-1}\n\n**Commit:** `feat: a`\n\n**Tasks:**\n- [ ] a task\n',
  '##### Step 1.2: B {#step-1-2}\n\n**Depends on:** #step-1-1\n\n**Commit:** `feat: b`\n\n**Tasks:**\n- [ ] b task\n',
]);

describe('what run tells about substeps', () => {
  it('runs the implementer once per substep in dependency order, then for the step, one commit each', () => {
    const root = runRepo(PLAN);
    const impl = implementerScript(); // exits 3 unless the brief on stdin is the brief of TUG_STEP
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(r.code, r.stderr).toBe(0);
    const seen = seenBy(impl.seen);
    expect(Object.keys(seen).sort()).toEqual(['step-1', 'step-1-1', 'step-1-2']);
    // Each ran once, in one attempt, and saw the files of the runs before it.
    expect(seen['step-1-1']).toEqual([{ attempt: 1, files: [] }]);
    expect(seen['step-1-2']).toEqual([{ attempt: 1, files: ['step-1-1.txt'] }]);
    expect(seen['step-1']).toEqual([{ attempt: 1, files: ['step-1-1.txt', 'step-1-2.txt'] }]);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1-1', 'step-1-2', 'step-1']);
  }, 180_000);

  it('run --help and the README say the implementer runs once per substep, then for the step', () => {
    const help = runCli(['run', '--help'], { cwd: ROOT }).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('runs the implementer once per substep');
    expect(help).toContain('then once for the step');
    expect(help).toContain('command run once per step and once per substep');
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ');
    expect(readme).toContain('the implementer runs once per substep and then once for the step');
    expect(readme).not.toMatch(/run once per step(?! and)/);
  });
});
