/**
 * The prompt an agent reviewer preset gives its agent (docs/run.md §6.1, docs/agents.md §1.8): the step as
 * the implementer saw it (title, items, references, human notes), the change to review (base, head, the
 * diff), the earlier verdicts of this attempt, the read-only rules, and the one-line verdict contract.
 * Pure: a review brief in, text out.
 */
import { promptHead, promptOwner, taskList } from './agent-prompt.js';
import { sq } from './confine.js';
import type { ReviewBrief } from './types.js';

export interface ReviewPromptContext {
  worktree: string;
  /** The reviewer's input as JSON (TUG_STEP_JSON). */
  briefPath: string;
  /** REVISE verdicts an attempt may get before it fails. */
  rounds: number;
  /**
   * Whether the reviewer may record a note (`tugcode state artifact`): claude may, codex's read-only sandbox
   * reaches no state at all (docs/agents.md §1.8).
   */
  notes: boolean;
}

/** The verdict line a reviewer ends with, as the prompt and agents/reviewer.md show it. */
export const VERDICT_EXAMPLE =
  '{"verdict": "REVISE", "summary": "One task is incomplete.", "issues": [{"severity": "major", ' +
  '"file": "src/hello.ts", "line": 12, "message": "the greeting is not printed on --quiet"}]}';

export function reviewerPrompt(b: ReviewBrief, ctx: ReviewPromptContext): string {
  const r = b.review;
  const out = promptHead(
    b,
    ctx.worktree,
    [
      'You are the reviewer of one step of a tugcode plan, running non-interactively: nobody will answer',
      'questions. Check the change below against the step, then end with your verdict. You change nothing.',
    ],
    `, review round ${r.round} of at most ${ctx.rounds}`,
  );
  out.push('', '## Task list', '', ...(b.items.length ? taskList(b.items) : ['(the step lists no items)']));
  if (b.references?.trim()) out.push('', '## References', '', b.references.trim());
  if (b.substeps.length)
    out.push(
      '',
      `The step has substeps (${b.substeps.map((s) => s.step_anchor).join(', ')}); their commits are part of the change.`,
    );
  if (b.human_notes?.trim()) out.push('', '## Notes from a human', '', b.human_notes.trim());
  out.push(
    '',
    '## The change',
    '',
    `The step's commits on the worker branch: base ${r.base} (the integration tip) .. head ${r.head}.`,
    `You may read it yourself with \`git diff ${r.base}...${r.head}\` in the worktree.`,
    '',
    '```diff',
    r.diff.replace(/\n$/, ''),
    '```',
  );
  if (r.diff_truncated) out.push('', '(The diff above is cut at 256 KiB: read the rest with git.)');
  if (r.previous_verdicts.length) {
    out.push('', '## Your earlier verdicts in this attempt', '');
    for (const v of r.previous_verdicts) {
      out.push(`- round ${v.round}: ${v.verdict}: ${v.summary}`);
      for (const i of v.issues)
        out.push(`  - ${i.severity}: ${[i.file, i.line].filter((x) => x).join(':') || '-'}: ${i.message}`);
    }
    // A round after an APPROVE follows a resolved conflict (docs/run.md §1.9): the merge is what is new.
    out.push(
      '',
      r.previous_verdicts.at(-1)!.verdict === 'APPROVE'
        ? 'Since your APPROVE the step was rebased onto a newer integration tip and a conflict in it was merged:\n' +
            'check the merged change (the diff above is against the new tip).'
        : 'The implementer has revised the step since: check that those issues are fixed.',
    );
  }
  out.push(
    '',
    '## Rules',
    '',
    `- You are read-only: do not create, change or delete any file, inside the worktree ${ctx.worktree} or`,
    '  outside it, and do not commit, switch branches, rebase, reset or push. A reviewer that changes the',
    '  worktree fails the attempt.',
    "- You may read files, run read-only commands (git diff, git log, ls) and the step's checkpoint commands.",
    `- The review's input is JSON in the file ${sq(ctx.briefPath)}.`,
    ...(ctx.notes
      ? [
          '- You may record a note in the plan state (optional; your verdict is recorded for you):',
          '',
          `      tugcode state artifact ${promptOwner(b, ctx.worktree)} --kind note --summary "what you found"`,
          '',
          '  Run it exactly as written (with your text): other state commands, and the same command for another',
          '  step, worktree or attempt, are refused.',
        ]
      : []),
    '',
    '## Verdict',
    '',
    'End your final message with your verdict as its LAST line: one JSON object on one line, nothing after it:',
    '',
    `    ${VERDICT_EXAMPLE}`,
    '',
    '- "verdict": "APPROVE" (integrate the step as it is), "REVISE" (the implementer fixes the issues you list,',
    '  then you review again) or "ESCALATE" (a human must decide: the plan is wrong or the step impossible).',
    '- "summary": one line. "issues": [] when there are none; each with "severity" ("blocker", "major" or',
    '  "minor"), "file", "line" and "message".',
  );
  return out.join('\n') + '\n';
}
