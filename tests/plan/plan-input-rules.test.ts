/**
 * What a plan may be, said where it is refused, and refused where the state would refuse it later: the slug
 * rule in every message refusing a plan's name, a step anchor longer than any state command takes (E007),
 * and a second "Execution Steps" heading whose steps would silently not count (P010). Built CLI, real repos.
 */
import { describe, expect, it } from 'vitest';
import { runCli, runJson } from '../helpers/cli.js';
import { tempRepo } from '../helpers/repo.js';
import { MAX_ANCHOR } from '../../src/contract/inputs/limits.js';
import { SLUG_RULE } from '../../src/plan/anchors.js';

const META =
  '## Plan\n\n| Field | Value |\n|---|---|\n| Owner | a |\n| Status | active |\n| Last updated | 2026-01-01 |\n\n';
const stepText = (n: number, anchor = `step-${n}`) =>
  `#### Step ${n}: S${n} {#${anchor}}\n\n**References:** x\n\n**Tasks:**\n- [ ] a\n\n**Tests:**\n- [ ] b\n\n**Checkpoint:**\n- [ ] c\n\n`;
const PLAN = META + '### Execution Steps\n\n' + stepText(1);

/** A repository with `files` committed. */
const repo = (files: Record<string, string>) => tempRepo(files);

describe('the slug rule in every refusal of a plan name', () => {
  it('says the rule for tugplan-v1.2.md in validate, run and worktree create', () => {
    const root = repo({ '.tugtool/tugplan-v1.2.md': PLAN });
    const p = '.tugtool/tugplan-v1.2.md';
    for (const argv of [
      ['validate', p],
      ['run', p, '--implementer', 'true'],
      ['worktree', 'create', p],
    ]) {
      const r = runCli([...argv, '--json'], { cwd: root });
      const doc = r.json ?? JSON.parse(r.stdout.trim().split('\n').at(-1)!);
      expect(doc.error.message, argv.join(' ')).toContain(SLUG_RULE);
    }
  });

  it('says the rule for a slug argument that is no slug', () => {
    const root = repo({ '.tugtool/tugplan-ok.md': PLAN });
    const r = runJson('state init', ['state', 'init', 'Not-A-Slug'], { cwd: root });
    expect(r.json.error.message).toContain(SLUG_RULE);
  });
});

describe('a step anchor longer than state commands take', () => {
  const long = 'a'.repeat(300);

  it('is refused by validate (E007) and state init, as state start would refuse the step', () => {
    const root = repo({ '.tugtool/tugplan-long.md': META + '### Execution Steps\n\n' + stepText(1, long) });
    const v = runJson('validate', ['validate', 'long'], { cwd: root });
    expect(v.code).toBe(4);
    const d = v.json.error.details.diagnostics.find((x: { code: string }) => x.code === 'E007');
    expect(d.message).toContain(`is 300 characters long; a step anchor has at most ${MAX_ANCHOR}`);
    expect(runJson('state init', ['state', 'init', 'long'], { cwd: root }).json.error.code).toBe('PlanInvalid');
    // The bound is the state's own: a step argument this long is refused.
    const start = runJson('state start', ['state', 'start', 'long', long, '--worktree', '.'], { cwd: root });
    expect([start.code, start.json.error.code]).toEqual([2, 'InvalidArgument']);
  });

  it('accepts an anchor of exactly the bound', () => {
    const root = repo({
      '.tugtool/tugplan-edge.md': META + '### Execution Steps\n\n' + stepText(1, 'a'.repeat(MAX_ANCHOR)),
    });
    expect(runJson('validate', ['validate', 'edge'], { cwd: root }).code).toBe(0);
  });
});

describe('two "Execution Steps" headings', () => {
  it('draws warning P010 on the second, naming the line of the first', () => {
    const plan =
      META + '### Execution Steps\n\n' + stepText(1) + '## Later\n\n### More Execution Steps\n\n' + stepText(2);
    const root = repo({ '.tugtool/tugplan-twice.md': plan });
    const r = runCli(['validate', 'twice', '--json'], { cwd: root });
    const diags = r.json.plans[0].diagnostics;
    const p010 = diags.filter((x: { code: string }) => x.code === 'P010');
    expect(p010).toHaveLength(1);
    const firstLine = plan.split('\n').indexOf('### Execution Steps') + 1;
    const secondLine = plan.split('\n').indexOf('### More Execution Steps') + 1;
    expect(p010[0]).toMatchObject({ severity: 'warning', line: secondLine });
    expect(p010[0].message).toContain(`the first is on line ${firstLine}`);
    // One heading: no P010.
    const one = repo({ '.tugtool/tugplan-once.md': PLAN });
    const once = runCli(['validate', 'once', '--json'], { cwd: one });
    expect(JSON.stringify(once.json)).not.toContain('P010');
  });
});
