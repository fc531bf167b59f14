/** Real plans: the corpus and the seed plan initialize, and `state show` renders them. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { init } from '../../src/state/init.js';
import { show } from '../../src/state/show.js';
import { renderShow } from '../../src/state/show-text.js';
import { planRepo, withCtx, T0 } from './helpers.js';
import { addWorktree, st, stText } from './cli-helpers.js';

const CORPUS = join(ROOT, 'tests', 'fixtures', 'corpus');
const SEED = '000_cf08918644712317.txt';
const NOT_PLANS = new Set(['tugplan-skeleton.md', 'tugplan-implementation-log.md']);

describe('real plans', () => {
  it('initializes every corpus plan and the seed plan, and renders them', async () => {
    const files: Record<string, string> = {};
    for (const f of readdirSync(CORPUS)) {
      if (!/^tugplan-.*\.md$/.test(f) || NOT_PLANS.has(f)) continue;
      files[`.tugtool/${f}`] = readFileSync(join(CORPUS, f), 'utf8');
    }
    files['.tugtool/tugplan-seed.md'] = readFileSync(join(CORPUS, SEED), 'utf8');
    const root = planRepo(files);
    const counts: Record<string, number> = {};
    await withCtx(root, {}, async (ctx) => {
      for (const p of Object.keys(files)) counts[p] = (await init(ctx, { plan: p })).steps_created;
    });
    expect(Object.keys(counts).length).toBeGreaterThanOrEqual(50);
    expect(counts['.tugtool/tugplan-seed.md']).toBe(79);
    const text = await withCtx(root, { mode: 'read' }, async (ctx) =>
      renderShow(await show(ctx, {}), { now: T0, color: false }),
    );
    expect(text.match(/^Overall: 0\/\d+ steps complete \(0%\)$/gm)).toHaveLength(Object.keys(files).length);
  });

  it('shows the seed plan like the seed mock after a few claims and updates', () => {
    const root = planRepo({ '.tugtool/tugplan-seed.md': readFileSync(join(CORPUS, SEED), 'utf8') });
    const w = addWorktree(root, 'worktree-A');
    expect(st(root, ['init', 'seed']).json.implicit_sequential).toBe(true);
    const c = st(root, ['claim', 'seed', '--worktree', w]).json;
    expect(c.claimed).toBe(true);
    st(root, ['start', 'seed', c.step_anchor, '--worktree', w]);
    const s = st(root, ['show', 'seed', '--step', c.step_anchor, '--items', 'all']).json.plans[0].steps[0];
    const kind = s.counts.tasks.open > 0 ? '--task' : s.counts.tests.open > 0 ? '--test' : '--checkpoint';
    st(root, ['update', 'seed', c.step_anchor, '--worktree', w, kind, '0', 'completed']);
    const text = stText(root, ['show', 'seed'], { now: '2026-03-01T10:15:00.000Z' }).stdout;
    expect(text).toMatch(/^Plan: \.tugtool\/tugplan-seed\.md \[active\]$/m);
    expect(text).toMatch(new RegExp(`^Step ${s.id}: .* \\[in_progress\\] \\(claimed by worktree-A\\)$`, 'm'));
    expect(text).toContain('Lease: expires in 1h 45m');
    expect(text).toMatch(/^ {2}(Tasks|Tests|Checkpoints): +1\/\d+ {2}[█░]{12} +\d+%$/m);
    expect(text).toMatch(/^ {4}(task|test|checkpoint) \d+ \[x\] /m); // with its ordinal (issue 22 item 24)
    expect(text).toMatch(/^ {2}Step [\w.]+: .* \[pending\]$/m);
    expect(text).toMatch(/^Overall: 0\/\d+ steps complete \(0%\)$/m);
  });
});
