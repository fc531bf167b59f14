/**
 * Labels are read without markdown-it's inline parse when they are plain `**Name:**` (src/plan/labels.ts):
 * that parse, once per label, was most of a long plan's parse, which `tugcode status` does for every plan on
 * each call. No timing assertions: the test counts the inline parses and checks both paths agree.
 */
import { describe, expect, it } from 'vitest';
import { commitLabel, labelInlineParses, parsedLabel, readLabel } from '../../src/plan/labels.js';
import { tokenize, type Token } from '../../src/plan/markdown.js';
import { parsePlan } from '../../src/plan/parse.js';

/** The inline token of a one-paragraph document. */
function inlineOf(src: string): Token {
  const t = tokenize(src).tokens.find((x) => x.type === 'inline');
  if (!t) throw new Error(`no inline token in ${JSON.stringify(src)}`);
  return t;
}

const view = (l: ReturnType<typeof readLabel>) =>
  l && {
    name: l.name,
    rest: l.rest,
    after: l.after.map((c) => [c.type, c.content]),
    commit: commitLabel(l),
  };

const SHAPES = [
  '**Tasks:**',
  '**Tasks:** ',
  '**Depends on:** #step-1, #step-2',
  '**Depends on :** step-3',
  '**Commit:** `feat: step 1`',
  '**Commit:**  ` spaced `  ',
  '**Commit:** `a` and `b`',
  '**Commit:** N/A (docs only)',
  '**Commit:** plain text message',
  '**Commit:**\n`on the next line`',
  '**Commit:** ``double `tick` span``',
  '**Commit:**`glued`',
  '**Commit:**glued',
  '**Tasks: **',
  '** Tasks:**',
  '***Tasks:***',
  '**Tasks:** **bold** after',
  '**Tasks:** *em*',
  '**a: b:** rest',
  '**Final Step 4 Checkpoint:**',
  '**Touches:** src/db/**, `docs/*.md`',
  '**Ta\\*sks:**',
  '**Ta`s`ks:**',
  '**Ta&amp;sks:**',
  '**[Tasks](x):**',
  '**Tasks**:',
  '__Tasks:__',
  '**Tasks:**\n**References:** [D01]',
  '**Tasks:',
  '**Purpose:** Ship the greeting.',
  '**Tâsks — ünïcode:** ok',
  'Tasks:',
];

describe('plain labels skip the inline parse', () => {
  it('reads every shape as markdown-it does', () => {
    for (const src of SHAPES) {
      const inline = inlineOf(src);
      const fast = view(readLabel(inline));
      const slow = view(parsedLabel(inlineOf(src)));
      expect({ src, label: fast }).toEqual({ src, label: slow });
    }
  });

  it('parses a 1,000-step plan without one inline parse for its labels', () => {
    let s = '## Phase 1.0: Big {#phase-big}\n\n**Purpose:** many steps.\n\n### Execution Steps {#execution-steps}\n\n';
    for (let i = 1; i <= 1000; i++) {
      s += `#### Step ${i}: Title ${i} {#step-${i}}\n\n`;
      if (i > 4) s += `**Depends on:** #step-${i - 4}\n\n`;
      s += `**Commit:** \`feat: step ${i}\`\n\n**References:** [D01]\n\n**Tasks:**\n- [ ] write step ${i}\n\n`;
      s += `**Tests:**\n- [ ] test ${i}\n\n`;
    }
    const before = labelInlineParses();
    const plan = parsePlan(s);
    expect(labelInlineParses() - before).toBe(0);
    expect(plan.purpose).toBe('many steps.');
    expect(plan.steps).toHaveLength(1000);
    expect(plan.steps[999]!.commit_message).toBe('feat: step 1000');
    expect(plan.steps[999]!.depends_on).toEqual(['step-996']);
    expect(plan.steps[999]!.items.map((it) => it.kind)).toEqual(['task', 'test']);
  });
});
