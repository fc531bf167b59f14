/**
 * Real plans: the upstream corpus (54 plans, MIT) and the large seed plan. Copies live in
 * tests/fixtures/corpus/ so a clean clone has them; the shared originals (../shared) are checked too when
 * present. tests/fixtures/corpus-snapshot.json pins the parser's counts (regenerate with
 * `npm run build && node scripts/plan-corpus-snapshot.mjs` and review the diff).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../src/plan/parse.js';
import { summarizePlan } from '../../src/plan/summary.js';
import { validatePlan } from '../../src/plan/validate.js';

const ROOT = join(import.meta.dirname, '..', '..');
const COPIES = join(ROOT, 'tests', 'fixtures', 'corpus');
const SHARED = join(ROOT, '..', 'shared');
const SEED = '000_cf08918644712317.txt';

const copies = readdirSync(COPIES)
  .filter((f) => /\.(md|txt)$/.test(f) && !f.startsWith('LICENSE'))
  .sort();

function parseClean(bytes: Uint8Array) {
  const plan = parsePlan(bytes);
  expect(plan.diagnostics.filter((d) => d.code === 'E000')).toEqual([]);
  validatePlan(plan, 'strict');
  return plan;
}

describe('corpus copies', () => {
  it('include the corpus license', () => {
    expect(readFileSync(join(COPIES, 'LICENSE-upstream-tugtool.txt'), 'utf8')).toMatch(/^MIT License/);
  });

  it('parse without an exception and match the committed snapshot', () => {
    const snapshot = JSON.parse(
      readFileSync(join(ROOT, 'tests', 'fixtures', 'corpus-snapshot.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(Object.keys(snapshot).sort()).toEqual(copies);
    const actual: Record<string, unknown> = {};
    for (const f of copies) actual[f] = summarizePlan(parseClean(readFileSync(join(COPIES, f))));
    expect(actual).toEqual(snapshot);
  });
});

const shared = existsSync(join(SHARED, 'corpus', 'plans'));
if (!shared) {
  console.warn(`corpus.test: ${SHARED} is absent; checking only the copies under tests/fixtures/corpus`);
}

describe.skipIf(!shared)('shared corpus (../shared)', () => {
  it('parses every shared corpus plan and the seed plan without an exception, and the copies are current', () => {
    const dir = join(SHARED, 'corpus', 'plans');
    const files = readdirSync(dir).filter((f) => f.endsWith('.md'));
    expect(files.length).toBeGreaterThanOrEqual(54);
    for (const f of files) {
      const bytes = readFileSync(join(dir, f));
      parseClean(bytes);
      expect(readFileSync(join(COPIES, f)).equals(bytes), `${f} copy is current`).toBe(true);
    }
    const seed = readFileSync(join(SHARED, 'seeds', SEED));
    parseClean(seed);
    expect(readFileSync(join(COPIES, SEED)).equals(seed)).toBe(true);
  });
});

describe('the seed plan', () => {
  const plan = parsePlan(readFileSync(join(COPIES, SEED)));
  const byAnchor = new Map(plan.steps.map((s) => [s.anchor, s]));
  const get = (a: string) => {
    const s = byAnchor.get(a);
    if (!s) throw new Error(`no ${a}`);
    return s;
  };

  it('nests Step 2.1 under Step 2 and Step 4.1a under Step 4.1', () => {
    expect(get('step-2-1').parent_anchor).toBe('step-2');
    expect(get('step-4-1a').parent_anchor).toBe('step-4-1');
    expect(get('step-4-1').parent_anchor).toBe('step-4');
  });

  it('does not make Step 2 Summary a step, so Step 2.5 after it is top-level', () => {
    expect(plan.steps.some((s) => /summary/i.test(s.title) || s.anchor.includes('summary'))).toBe(false);
    expect(get('step-2-5').parent_anchor).toBeNull();
  });

  it('gives Step PRE-6 the anchor step-pre-6, as a top-level step', () => {
    expect(get('step-pre-6')).toMatchObject({ id: 'PRE-6', parent_anchor: null });
  });

  it('is implicitly sequential over its top-level steps only', () => {
    expect(plan.implicit_sequential).toBe(true);
    const tops = plan.steps.filter((s) => s.parent_anchor === null).map((s) => s.anchor);
    expect(tops).toEqual([
      'step-0',
      'step-1',
      'step-2',
      'step-2-5',
      'step-3',
      'step-4',
      'step-5',
      'step-pre-6',
      'step-6',
      'step-7',
    ]);
    expect(plan.edges).toEqual(tops.slice(1).map((a, i) => [a, tops[i]]));
  });

  it('ignores the walkthrough "Step 1: Agent locates the symbol" headings outside Execution Steps', () => {
    expect(plan.steps.some((s) => /^Agent (Locates|Calls|Runs|Applies)/.test(s.title))).toBe(false);
    expect(plan.steps[0]!.line).toBe(3965);
  });

  it('keeps nested checkboxes under a task as items of depth 1', () => {
    const nested = get('step-4').items.filter((i) => i.depth === 1);
    expect(nested.map((i) => [i.kind, i.line])).toEqual([
      ['task', 6817],
      ['task', 6818],
      ['task', 6819],
    ]);
    expect(plan.steps.flatMap((s) => s.items).filter((i) => i.depth > 0).length).toBeGreaterThan(3);
  });

  it('gives the checkboxes of the Deliverables section after the last step to no step', () => {
    const deliverables = 8267;
    const last = plan.steps.flatMap((s) => [...s.items.map((i) => i.line), ...s.refactors.map((r) => r.line)]);
    expect(Math.max(...last)).toBeLessThan(deliverables);
    const raw = readFileSync(join(COPIES, SEED), 'utf8')
      .split('\n')
      .slice(deliverables)
      .filter((l) => /^\s*- \[[ xX]\]/.test(l));
    expect(raw.length).toBeGreaterThan(0);
  });

  it('reads the label headings "Step 4.2 Tests" and "Step 4.2 Checkpoint" as sections of Step 4.2', () => {
    const s = get('step-4-2');
    expect(s.items.filter((i) => i.kind === 'test').length).toBe(22);
    expect(s.items.filter((i) => i.kind === 'checkpoint').length).toBe(12);
    expect(s.items.filter((i) => i.kind === 'task').length).toBe(0);
  });
});
