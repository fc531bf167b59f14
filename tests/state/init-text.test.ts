/**
 * The text of a `state init` that added nothing (the same plan again, or `--force` on an unchanged one)
 * says the steps are still there, not "0 steps … created" (docs/state.md §4).
 */
import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { planText } from '../helpers/plan.js';
import { cliRepo, st, stText } from './cli-helpers.js';
import { planRepo } from './helpers.js';

describe('state init text when nothing is added', () => {
  it('--force on an unchanged plan: nothing added, its steps kept; a first init still counts what it created', () => {
    const { root } = cliRepo();
    const n = st(root, ['show', 'demo']).json.plans[0].steps.length as number;
    expect(n).toBeGreaterThan(1);
    const force = stText(root, ['init', 'demo', '--force']);
    expect(force.code, force.stderr).toBe(0);
    expect(force.stdout).toContain(
      `Re-initialized .tugtool/tugplan-demo.md: no step, checklist item or refactor added; its ${n} steps kept`,
    );
    expect(force.stdout).not.toContain('0 steps');
    const again = stText(root, ['init', 'demo']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`Already initialized .tugtool/tugplan-demo.md: structure unchanged, ${n} steps`);
    expect(again.stdout).not.toContain('0 steps');
    const first = stText(planRepo(), ['init', 'demo']);
    expect(first.stdout).toContain(`Initialized .tugtool/tugplan-demo.md: ${n} steps, `);
  });

  it('--force that only removed steps says how many it removed', () => {
    const path = '.tugtool/tugplan-demo.md';
    const three = ['1', '2', '3'].map((id) => ({ id, tasks: [`task ${id}`] }));
    const root = planRepo({ [path]: planText(three) });
    expect(stText(root, ['init', 'demo']).code).toBe(0);
    writeFileSync(join(root, path), planText(three.slice(0, 1)));
    const force = stText(root, ['init', 'demo', '--force']);
    expect(force.code, force.stderr).toBe(0);
    expect(force.stdout).toContain(
      `Re-initialized ${path}: no step, checklist item or refactor added; its 1 step kept; 2 steps removed`,
    );
    expect(st(root, ['init', 'demo', '--force']).json).toMatchObject({ reinitialized: true, steps_removed: 0 });
  });
});
