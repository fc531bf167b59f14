/**
 * `tugcode validate` (and `state init`) as processes of the built CLI, for what the PlanInvalid report said
 * wrongly: plan files whose name is not a valid slug passed (E004), `--level strict` counted info as errors
 * and printed `line ?`, and without a plan argument `plan_path` and the hint joined every invalid plan.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI, expectError, runCli, runJson } from '../helpers/cli.js';
import { tempRepo } from '../helpers/repo.js';

const good =
  '## Plan\n\n| Field | Value |\n|---|---|\n| Owner | a |\n| Status | active |\n| Last updated | 2026-01-01 |\n\n' +
  '### Execution Steps\n\n#### Step 1: One {#step-1}\n\n**References:** x\n\n**Tasks:**\n- [ ] a\n\n**Tests:**\n- [ ] b\n\n' +
  '**Checkpoint:**\n- [ ] c\n';
/** No Depends-on lines (I001 under strict) and no Checkpoint section (W003 on line 11). */
const noCheckpoint =
  '## T\n\n| Field | Value |\n|---|---|\n| Owner | a |\n| Status | active |\n| Last updated | 2026-01-01 |\n\n' +
  '### Execution Steps\n\n#### Step 1: One\n\n**References:** x\n\n**Tasks:**\n- [ ] a\n\n**Tests:**\n- [ ] b\n';
const cycle =
  '## Plan\n\n### Execution Steps\n\n#### Step 1: A {#step-1}\n\n**Depends on:** #step-2\n\n**Tasks:**\n- [ ] a\n\n' +
  '#### Step 2: B {#step-2}\n\n**Depends on:** #step-1\n\n**Tasks:**\n- [ ] b\n';

const BAD_NAMES = ['tugplan-a--b.md', 'tugplan-Up.md', 'tugplan-sp ace.md', 'tugplan--x.md'];

describe('tugcode validate: plan file names (E004)', () => {
  it('reports a file name that is not a valid slug as error E004, and state init refuses it with PlanInvalid', () => {
    const root = tempRepo({
      '.tugtool/tugplan-fine.md': good,
      ...Object.fromEntries(BAD_NAMES.map((n) => [`.tugtool/${n}`, good])),
    });
    const all = runJson('validate', ['validate'], { cwd: root });
    expectError(all, 'PlanInvalid', 4);
    const plans = all.json.error.details.plans as { plan_path: string; valid: boolean; diagnostics: any[] }[];
    const byPath = new Map(plans.map((p) => [p.plan_path, p]));
    expect(byPath.get('.tugtool/tugplan-fine.md')).toMatchObject({ valid: true, diagnostics: [] });
    for (const name of BAD_NAMES) {
      const p = `.tugtool/${name}`;
      expect(byPath.get(p), p).toMatchObject({ valid: false, error_count: 1 });
      expect(byPath.get(p)!.diagnostics).toEqual([
        { code: 'E004', severity: 'error', message: expect.stringContaining('is not a valid slug') },
      ]);
      const one = runJson('validate', ['validate', p], { cwd: root });
      expectError(one, 'PlanInvalid', 4);
      expect(one.json.error.details.plan_path).toBe(p);
      expect(one.json.error.message).toContain('first: E004: ');
      const init = runJson('state init', ['state', 'init', p], { cwd: root });
      expectError(init, 'PlanInvalid', 4);
      expect(init.json.error.details.diagnostics.map((d: { code: string }) => d.code)).toEqual(['E004']);
    }
    // Nothing was stored for the refused plans; the well-named one initializes.
    expect(runJson('state init', ['state', 'init', 'fine'], { cwd: root }).json.steps_created).toBe(1);
    const text = runCli(['validate', '.tugtool/tugplan-a--b.md'], { cwd: root });
    expect(text.code).toBe(4);
    expect(text.stdout).toContain('.tugtool/tugplan-a--b.md:-: error E004: ');
  });

  it('offers only plans a slug can name as known plans when an argument matches nothing', () => {
    const root = tempRepo({ '.tugtool/tugplan-fine.md': good, '.tugtool/tugplan-a--b.md': good });
    const r = runJson('validate', ['validate', 'nope'], { cwd: root });
    expectError(r, 'PlanNotFound', 3);
    expect(r.json.error.details.candidates).toEqual(['.tugtool/tugplan-fine.md']);
  });
});

describe('PlanNotFound in a repository with many plans', () => {
  it('hints the first 10 known plans and how many more, one short line; the details keep them all', () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[`.tugtool/tugplan-p${String(i).padStart(3, '0')}.md`] = good;
    const root = tempRepo(files);
    const r = runJson('state show', ['state', 'show', 'nope'], { cwd: root });
    expectError(r, 'PlanNotFound', 3);
    expect(r.json.error.details.candidates).toHaveLength(300);
    const shown = Array.from({ length: 10 }, (_, i) => `.tugtool/tugplan-p00${i}.md`).join(', ');
    expect(r.json.error.hint).toBe(`known plans: ${shown} and 290 more (ls .tugtool/tugplan-*.md)`);
    const text = runCli(['state', 'show', 'nope'], { cwd: root });
    expect(
      text.stderr.split('\n').every((line) => line.length < 400),
      text.stderr,
    ).toBe(true);
  });
});

describe('tugcode validate: the PlanInvalid report', () => {
  it('--level strict counts and names only what made the plan invalid (warnings), never info, and no "line ?"', () => {
    const root = tempRepo({ '.tugtool/tugplan-s.md': noCheckpoint });
    const r = runJson('validate', ['validate', 's', '--level', 'strict'], { cwd: root });
    expectError(r, 'PlanInvalid', 4);
    expect(r.json.error.message).toBe(
      '.tugtool/tugplan-s.md has 1 validation error(s); first: W003 line 11: step-1 has no checkpoints',
    );
    expect(r.json.error.details.diagnostics.map((d: { code: string }) => d.code)).toEqual(['W003']);
    // The report still shows the info.
    expect(r.json.error.details.plans[0].diagnostics.map((d: { code: string }) => d.code)).toEqual(['I001', 'W003']);
    // An error without a line: no "line ?" either.
    const empty = tempRepo({ '.tugtool/tugplan-e.md': '# nothing\n' });
    const e = runJson('validate', ['validate', 'e'], { cwd: empty });
    expectError(e, 'PlanInvalid', 4);
    expect(e.json.error.message).toMatch(/first: E001: no steps found/);
    expect(e.json.error.message).not.toContain('line ?');
  });

  it('without a plan argument names the first invalid plan in plan_path and a hint that runs', () => {
    const root = tempRepo({
      '.tugtool/tugplan-anc.md': cycle,
      '.tugtool/tugplan-b-empty.md': '',
      '.tugtool/tugplan-ok.md': good,
    });
    const r = runJson('validate', ['validate'], { cwd: root });
    expectError(r, 'PlanInvalid', 4);
    const err = r.json.error;
    expect(err.details.plan_path).toBe('.tugtool/tugplan-anc.md');
    expect(err.details.invalid_plans).toEqual(['.tugtool/tugplan-anc.md', '.tugtool/tugplan-b-empty.md']);
    // The diagnostics are the named plan's (each plan's own are in details.plans).
    expect(err.details.diagnostics.map((d: { code: string }) => d.code)).toEqual(['E011']);
    expect(err.message).toMatch(
      /^\.tugtool\/tugplan-anc\.md has 1 validation error\(s\); first: E011 line \d+: dependency cycle/,
    );
    expect(err.message).toContain('1 other plan(s) invalid too: .tugtool/tugplan-b-empty.md');
    expect(err.hint).toBe('tugcode validate .tugtool/tugplan-anc.md');
    // The hint runs as written, through a shell, and reports that plan.
    const hinted = runHint(err.hint, root);
    expect(hinted.json.error.details.plan_path).toBe('.tugtool/tugplan-anc.md');
    expect(hinted.json.error.details.plans).toHaveLength(1);
    // Text mode: singular counts.
    const text = runCli(['validate'], { cwd: root });
    expect(text.stdout).toContain('INVALID  .tugtool/tugplan-anc.md  (2 steps; 1 error, 9 warnings)');
    expect(text.stdout).toContain('ok  .tugtool/tugplan-ok.md  (1 step; 0 errors, 0 warnings;');
    expect(text.stderr).toContain('hint: tugcode validate .tugtool/tugplan-anc.md\n');
  });

  it('quotes a plan path the shell would split in the hint', () => {
    const root = tempRepo({ ".tugtool/tugplan-it's bad.md": good });
    const r = runJson('validate', ['validate'], { cwd: root });
    expectError(r, 'PlanInvalid', 4);
    expect(r.json.error.hint).toBe("tugcode validate '.tugtool/tugplan-it'\\''s bad.md'");
    expect(runHint(r.json.error.hint, root).json.error.details.plan_path).toBe(".tugtool/tugplan-it's bad.md");
  });
});

/** Runs a hint `tugcode …` through sh, with `tugcode` standing for the built CLI, plus `--json`. */
function runHint(hint: string, cwd: string): { json: any } {
  expect(hint.startsWith('tugcode ')).toBe(true);
  let out = '';
  try {
    out = execFileSync('sh', ['-c', `tugcode() { "${process.execPath}" "${CLI}" "$@"; }; ${hint} --json`], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    out = String((e as { stdout?: string }).stdout ?? '');
  }
  return { json: JSON.parse(out) };
}
