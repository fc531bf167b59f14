/**
 * `tugcode validate` and `tugcode state init` as processes of the built CLI, for the plan problems that used
 * to be silent or misreported: lists nested too deeply (E002), a duplicate step anchor reported as a cycle,
 * and plans symlinked out of the repository (E003).
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectError, runJson } from '../helpers/cli.js';
import { git, tempDir, tempRepo } from '../helpers/repo.js';
import { runJsonl } from '../run/helpers.js';

const deepPlan = (depth: number): string => {
  let s = '## Plan\n\n### Execution Steps\n\n#### Step 1: One {#step-1}\n\n**Tasks:**\n';
  for (let i = 0; i < depth; i++) s += '  '.repeat(i) + `- [ ] item ${i}\n`;
  return s + '\n#### Step 2: Two {#step-2}\n\n**Tasks:**\n- [ ] x\n';
};
const dupPlan =
  '## Plan\n\n### Execution Steps\n\n#### Step 1: A {#step-1}\n\n**Tasks:**\n- [ ] a\n\n#### Step 2: B {#step-1}\n\n**Tasks:**\n- [ ] b\n';

describe('tugcode validate and state init on plan problems', () => {
  it('refuses a plan that is not UTF-8 (E005 with its line) in validate, state init and run', () => {
    const root = tempRepo({ '.tugtool/tugplan-latin.md': dupPlan });
    // "Café" in Latin-1 on line 5, the step heading (the probe's plan saved in another encoding).
    const bytes = Buffer.from(
      dupPlan
        .replace('Step 1: A', 'Step 1: Caf\u00e9')
        .replace('{#step-1}\n\n**Tasks:**\n- [ ] b', '{#step-2}\n\n**Tasks:**\n- [ ] b'),
      'latin1',
    );
    writeFileSync(join(root, '.tugtool', 'tugplan-latin.md'), bytes);
    git(root, 'commit', '-qam', 'latin-1');
    const v = runJson('validate', ['validate', 'latin'], { cwd: root });
    expectError(v, 'PlanInvalid', 4);
    expect(v.json.error.details.diagnostics).toEqual([
      expect.objectContaining({
        code: 'E005',
        severity: 'error',
        line: 5,
        message: expect.stringContaining('not valid UTF-8'),
      }),
    ]);
    // The hint of `validate <plan>` is where to start, not `tugcode validate <plan>` again.
    expect(v.json.error.hint).toBe('fix line 5 of .tugtool/tugplan-latin.md first (E005)');
    const init = runJson('state init', ['state', 'init', 'latin'], { cwd: root });
    expectError(init, 'PlanInvalid', 4);
    expect(init.json.error.message).toContain('first: E005 line 5');
    const run = runJsonl(root, ['latin', '--implementer', 'true']);
    expect(run.code, run.stdout + run.stderr).toBe(4);
    expect(JSON.stringify(run.events.at(-1))).toContain('E005');
  });

  it('names the encoding first when a file that is not UTF-8 also has no steps (E005 before E001)', () => {
    const root = tempRepo({ '.tugtool/tugplan-bin.md': '' });
    // Bytes that are no plan at all and not UTF-8 from line 2 on (a binary file saved under a plan's name).
    const bytes = Buffer.concat([Buffer.from('# notes\n'), Buffer.from([0xff, 0xfe, 0x00, 0x81, 0x0a, 0xc3, 0x28])]);
    writeFileSync(join(root, '.tugtool', 'tugplan-bin.md'), bytes);
    const v = runJson('validate', ['validate', 'bin'], { cwd: root });
    expectError(v, 'PlanInvalid', 4);
    expect(v.json.error.details.diagnostics.map((d: { code: string }) => d.code)).toEqual(['E005', 'E001']);
    expect(v.json.error.message).toContain('first: E005 line 2');
    expect(v.json.error.hint).toBe('fix line 2 of .tugtool/tugplan-bin.md first (E005)');
  });

  it('refuses a plan file over 16 MiB unread (E008 alone), in validate and state init; nothing is stored', () => {
    const root = tempRepo({ '.tugtool/tugplan-huge.md': dupPlan });
    const big = dupPlan.replace(
      '- [ ] b',
      '- [ ] b\n' + '- [ ] padding item of a plan far too large\n'.repeat(400_000),
    );
    expect(Buffer.byteLength(big)).toBeGreaterThan(16 * 1024 * 1024);
    writeFileSync(join(root, '.tugtool', 'tugplan-huge.md'), big);
    const v = runJson('validate', ['validate', 'huge'], { cwd: root });
    expectError(v, 'PlanInvalid', 4);
    expect(v.json.error.details.diagnostics).toEqual([
      {
        code: 'E008',
        severity: 'error',
        message: expect.stringMatching(/^the file is 16\.\d MiB; a plan is at most 16\.0 MiB/),
      },
    ]);
    expectError(runJson('state init', ['state', 'init', 'huge'], { cwd: root }), 'PlanInvalid', 4);
    expect(existsSync(join(root, '.tugtool', 'state.db'))).toBe(false);
  });

  it('refuses lists nested too deeply with E002 and its line, never a silently shorter plan', () => {
    const root = tempRepo({ '.tugtool/tugplan-deep.md': deepPlan(60) });
    const v = runJson('validate', ['validate', 'deep', '--level', 'lenient'], { cwd: root });
    expectError(v, 'PlanInvalid', 4);
    expect(v.json.error.details.diagnostics).toEqual([expect.objectContaining({ code: 'E002', line: 57 })]);
    expect(v.json.error.message).toContain('first: E002 line 57');
    expectError(runJson('state init', ['state', 'init', 'deep'], { cwd: root }), 'PlanInvalid', 4);
  });

  it('reports a duplicate step anchor as E006, not as a dependency cycle', () => {
    const root = tempRepo({ '.tugtool/tugplan-dup.md': dupPlan });
    const v = runJson('validate', ['validate', 'dup', '--level', 'lenient'], { cwd: root });
    expectError(v, 'PlanInvalid', 4);
    expect(v.json.error.details.diagnostics.map((d: { code: string }) => d.code)).toEqual(['E006']);
    expect(v.json.error.hint).toBe('fix line 10 of .tugtool/tugplan-dup.md first (E006)');
    const init = runJson('state init', ['state', 'init', 'dup'], { cwd: root });
    expectError(init, 'PlanInvalid', 4);
    expect(init.json.error.message).toContain('first: E006 line 10');
  });

  it('reports a plan symlinked out of the repository (E003 naming the file) and validates one symlinked inside', () => {
    const root = tempRepo({ 'docs/plan.md': deepPlan(1) });
    const outside = join(tempDir(), 'plan.md');
    writeFileSync(outside, deepPlan(1));
    mkdirSync(join(root, '.tugtool'));
    symlinkSync(outside, join(root, '.tugtool', 'tugplan-out.md'));
    symlinkSync('../docs/plan.md', join(root, '.tugtool', 'tugplan-in.md'));
    const v = runJson('validate', ['validate', '--level', 'lenient'], { cwd: root });
    expectError(v, 'PlanInvalid', 4);
    const plans = v.json.error.details.plans as { plan_path: string; valid: boolean; diagnostics: unknown[] }[];
    expect(plans.map((p) => [p.plan_path, p.valid])).toEqual([
      ['.tugtool/tugplan-in.md', true],
      ['.tugtool/tugplan-out.md', false],
    ]);
    expect(plans[1]!.diagnostics).toEqual([
      expect.objectContaining({
        code: 'E003',
        message: expect.stringMatching(/tugplan-out\.md.*outside the repository/),
      }),
    ]);
    // Named explicitly, the same plan is refused as before.
    expectError(runJson('validate', ['validate', '.tugtool/tugplan-out.md'], { cwd: root }), 'InvalidArgument', 2);
  });
});
