/**
 * The conflict prompt of the agent presets (docs/run.md §1.9), and the head it shares with the implementer's
 * and the reviewer's prompts (agent-prompt.ts `promptHead`): one owner for who the agent is, the step, the
 * plan line and the worktree.
 */
import { describe, expect, it } from 'vitest';
import { agentPrompt } from '../../src/run/agent-prompt.js';
import { conflictPrompt } from '../../src/run/resolve-prompt.js';
import { reviewerPrompt } from '../../src/run/review-prompt.js';
import type { StepBrief } from '../../src/run/types.js';

const brief: StepBrief = {
  plan_path: '.tugtool/tugplan-demo.md',
  step_anchor: 'step-3',
  title: 'Right',
  attempt: 2,
  commit_message: 'feat: right',
  references: null,
  depends_on: ['step-1'],
  items: [{ kind: 'task', ordinal: 0, text: 'rewrite the middle line', status: 'open' }],
  substeps: [],
  previous_failures: [],
};
const ctx = { worktree: '/r/.tugtree/w2', briefPath: '/r/.tugtool/logs/demo/step-3-resolve1-brief2.json' };

describe('the conflict prompt', () => {
  it('names the files, the integrated steps by their trailers, the task list and the rules', () => {
    const p = conflictPrompt(
      {
        ...brief,
        conflict: {
          onto: 'c'.repeat(40),
          files: ['shared.txt'],
          integrated: [
            { step_anchor: 'step-2', commit: 'a'.repeat(40), subject: 'feat: left' },
            { step_anchor: null, commit: 'b'.repeat(40), subject: 'other host' },
          ],
        },
      },
      ctx,
    );
    expect(p.split('\n').slice(0, 7)).toEqual([
      'You are resolving a merge conflict for one step of a tugcode plan, running non-interactively: nobody will',
      'answer questions. Merge the conflicted files below, then end with a short report.',
      '',
      '# step-3: Right',
      '',
      'Plan: .tugtool/tugplan-demo.md (step step-3, attempt 2)',
      'Worktree: /r/.tugtree/w2',
    ]);
    expect(p).toContain(`onto the integration branch (now at ${'c'.repeat(12)}),`);
    expect(p).toContain('\n- shared.txt\n');
    expect(p).toContain(`- step-2: feat: left (${'a'.repeat(12)})\n- (no step): other host (${'b'.repeat(12)})\n`);
    expect(p).toContain('- [ ] task 0 (open): rewrite the middle line');
    // The owner arguments written out literally, as in the implementer's prompt.
    const owner = '.tugtool/tugplan-demo.md step-3 --worktree /r/.tugtree/w2 --attempt 2';
    expect(p).toContain(owner);
    expect(agentPrompt(brief, ctx)).toContain(owner);
    expect(p).toContain(`is JSON in the file ${ctx.briefPath}.`);
    // The plan and config are the run's contract (docs/run.md §2): both prompts say so.
    const contract = 'Do not change the plan .tugtool/tugplan-demo.md or .tugtool/config.toml';
    expect(p).toContain(contract);
    expect(agentPrompt(brief, ctx)).toContain(contract);
  });

  it('the three prompts share one head: intro, title, plan line, worktree', () => {
    const conflict = conflictPrompt(
      { ...brief, conflict: { onto: 'c'.repeat(40), files: ['a'], integrated: [] } },
      ctx,
    );
    const review = reviewerPrompt(
      {
        ...brief,
        review: {
          round: 1,
          base: 'a'.repeat(40),
          head: 'b'.repeat(40),
          diff: '',
          diff_truncated: false,
          previous_verdicts: [],
        },
      },
      { ...ctx, rounds: 3, notes: true },
    );
    for (const p of [agentPrompt(brief, ctx), conflict, review]) {
      const lines = p.split('\n');
      expect(lines.slice(2, 5)).toEqual(['', '# step-3: Right', '']);
      expect(lines[5]).toMatch(/^Plan: \.tugtool\/tugplan-demo\.md \(step step-3, attempt 2[,)]/);
      expect(lines[6]).toBe('Worktree: /r/.tugtree/w2');
    }
    expect(review.split('\n')[5]).toBe(
      'Plan: .tugtool/tugplan-demo.md (step step-3, attempt 2, review round 1 of at most 3)',
    );
  });
  it("the reviewer's prompt after a resolved conflict says the merge is what is new", () => {
    const review = (verdicts: ('APPROVE' | 'REVISE')[]) =>
      reviewerPrompt(
        {
          ...brief,
          review: {
            round: verdicts.length + 1,
            base: 'a'.repeat(40),
            head: 'b'.repeat(40),
            diff: '',
            diff_truncated: false,
            previous_verdicts: verdicts.map((verdict, i) => ({ round: i + 1, verdict, summary: 's', issues: [] })),
          },
        },
        { ...ctx, rounds: 3, notes: true },
      );
    expect(review(['APPROVE'])).toContain('Since your APPROVE the step was rebased onto a newer integration tip');
    expect(review(['APPROVE'])).not.toContain('The implementer has revised the step since');
    expect(review(['APPROVE', 'REVISE'])).toContain('The implementer has revised the step since');
  });
});
