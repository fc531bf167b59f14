/**
 * Touches declared on substeps count for their top-level step (docs/plan-format.md §2.5, docs/state.md
 * §3.12), through the CLI on both backends: the claim passes over a step whose substep overlaps a running
 * step's substep, `--step` names the running step, `state export` shows the lifted Touches, `run --dry-run`
 * names the pair, and an edited substep Touches line is refreshed like prose.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BACKENDS, backend } from '../pg/backend.js';
import { tugJson } from '../run/helpers.js';
import { addWorktree, st } from './cli-helpers.js';
import { DEMO_PATH, planRepo, planText, type StepSpec } from './helpers.js';

const touches = (globs: string) => `**Touches:** ${globs}`;
const STEPS: StepSpec[] = [
  // step-1 declares nothing itself; its substep touches src/db.
  { id: '1', deps: [], tasks: ['a'] },
  { id: '1.1', level: 5, tasks: ['a1'], body: touches('`src/db/**`') },
  // step-2 touches lib itself, and src/db/schema.ts through a nested substep.
  { id: '2', deps: [], tasks: ['b'], body: touches('`lib/**`') },
  { id: '2.1', level: 5, tasks: ['b1'] },
  { id: '2.1.1', level: 6, tasks: ['b2'], body: touches('`src/db/schema.ts`') },
  // step-3 declares nothing anywhere.
  { id: '3', deps: [], tasks: ['c'] },
];

describe.each(BACKENDS)("a substep's Touches hold its top-level step back [%s]", (kind) => {
  it('claim, claim --step, export, dry run and a prose edit all see them', async () => {
    const b = await backend(kind);
    const plan = planText(STEPS);
    const root = planRepo({ [DEMO_PATH]: plan });
    const [w1, w2, w3] = ['one', 'two', 'three'].map((n) => addWorktree(root, n)) as [string, string, string];
    const env = b.env;
    const claim = (w: string, ...more: string[]) => st(root, ['claim', 'demo', '--worktree', w, ...more], { env }).json;
    expect(st(root, ['init', 'demo'], { env }).json.status).toBe('ok');

    const doc = st(root, ['export', 'demo'], { env }).json.document;
    const stored = (a: string) => doc.steps.find((s: { anchor: string }) => s.anchor === a).touches;
    expect(stored('step-1')).toBe('["src/db/**"]');
    expect(stored('step-2')).toBe('["lib/**","src/db/schema.ts"]');
    expect(stored('step-2-1-1')).toBe('["src/db/schema.ts"]');
    expect(stored('step-3')).toBeNull();

    const dry = tugJson(root, ['run', 'demo', '--dry-run', '--implementer', 'true'], env);
    expect(dry.json?.apart, dry.stderr).toEqual([['step-1', 'step-2']]);

    expect(claim(w1)).toMatchObject({ claimed: true, step_anchor: 'step-1' });
    // step-2's substep overlaps step-1's: step-3 is next.
    expect(claim(w2)).toMatchObject({ claimed: true, step_anchor: 'step-3' });
    expect(claim(w3, '--step', 'step-2')).toMatchObject({
      claimed: false,
      reason: 'not_ready',
      touches_overlap: 'step-1',
    });
    expect(claim(w3)).toMatchObject({ claimed: false, reason: 'no_ready_steps' });

    // In w3's copy of the plan the nested substep no longer touches src/db: refreshed like prose, and claimed.
    const f = join(w3, DEMO_PATH);
    writeFileSync(f, readFileSync(f, 'utf8').replace('`src/db/schema.ts`', '`lib/schema.ts`'));
    const c = st(root, ['claim', 'demo', '--worktree', w3], { env, cwd: w3 }).json;
    expect(c, JSON.stringify(c)).toMatchObject({ claimed: true, step_anchor: 'step-2' });
    expect(c.warnings.map((w: { code: string }) => w.code)).toContain('PlanProseChanged');
  });
});
