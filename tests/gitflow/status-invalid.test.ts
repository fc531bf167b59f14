/**
 * `tugcode status` on invalid plan files (docs/git.md §6): an empty or binary `.tugtool/tugplan-*.md` is not
 * just `active 0/0`; the line says it is invalid, with the first error as `tugcode validate` gives it, and
 * names that command. A plan with state whose file broke later says so too; a valid plan says nothing.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runJson } from '../helpers/cli.js';
import { planRepo, PLAN_PATH, T0 } from './helpers.js';

const env = { TUGCODE_NOW: T0 };
type Line = { plan_path: string; plan_error: { code: string; command: string; line: number | null } | null };

describe('status: invalid plans', () => {
  it('names the first error and tugcode validate, in JSON and text', () => {
    const root = planRepo();
    writeFileSync(join(root, '.tugtool/tugplan-empty.md'), '');
    writeFileSync(join(root, '.tugtool/tugplan-binary.md'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0xff, 0xfe, 0, 1]));

    const s = runJson('status', ['status'], { cwd: root, env });
    expect(s.code, s.stderr).toBe(0);
    const by = Object.fromEntries((s.json.plans as Line[]).map((p) => [p.plan_path, p]));
    expect(by['.tugtool/tugplan-empty.md']!.plan_error).toMatchObject({
      code: 'E001',
      command: 'tugcode validate .tugtool/tugplan-empty.md',
    });
    expect(by['.tugtool/tugplan-binary.md']!.plan_error).toMatchObject({
      code: 'E005',
      line: 1,
      command: 'tugcode validate .tugtool/tugplan-binary.md',
    });
    expect(by[PLAN_PATH]!.plan_error).toBeNull();

    // The error is the one validate reports first.
    const v = runJson('validate', ['validate', '.tugtool/tugplan-empty.md'], { cwd: root, env });
    expect(v.json.error.details.diagnostics[0].code).toBe('E001');

    const text = runCli(['status'], { cwd: root, env });
    expect(text.code, text.stderr).toBe(0);
    const row = (p: string) => text.stdout.split('\n').find((l) => l.startsWith(p + ' '))!;
    expect(row('.tugtool/tugplan-empty.md')).toMatch(
      /invalid: E001 no steps found .* — see tugcode validate \.tugtool\/tugplan-empty\.md/,
    );
    expect(row('.tugtool/tugplan-binary.md')).toMatch(
      /invalid: E005 line 1 is not valid UTF-8.* — see tugcode validate \.tugtool\/tugplan-binary\.md/,
    );
    expect(row(PLAN_PATH)).not.toContain('invalid');
    // The line does not claim the invalid plan is active at 0/0: no steps, no progress, status invalid.
    for (const p of ['.tugtool/tugplan-empty.md', '.tugtool/tugplan-binary.md']) {
      expect(row(p).slice(p.length)).toMatch(/^ +- +- +invalid +invalid: /);
      expect(row(p)).not.toMatch(/\bactive\b|0\/0/);
    }
    expect(row(PLAN_PATH).slice(PLAN_PATH.length)).toMatch(/^ +0\/2 +░+ +0% +active /);
  });

  it('says so for a plan with state whose file was emptied afterwards', () => {
    const root = planRepo();
    expect(runCli(['state', 'init', 'demo'], { cwd: root, env }).code).toBe(0);
    writeFileSync(join(root, PLAN_PATH), '');
    const s = runJson('status', ['status', 'demo'], { cwd: root, env });
    expect(s.json.plans[0]).toMatchObject({ source: 'state', steps_total: 2, plan_error: { code: 'E001' } });
    const text = runCli(['status', 'demo'], { cwd: root, env }).stdout;
    expect(text).toContain(`invalid: E001 no steps found`);
    // The progress is the state's; the file still reads invalid, not active.
    const row = text.split('\n').find((l) => l.startsWith(PLAN_PATH + ' '))!;
    expect(row.slice(PLAN_PATH.length)).toMatch(/^ +0\/2 +░+ +0% +invalid +invalid: E001/);
  });
});
