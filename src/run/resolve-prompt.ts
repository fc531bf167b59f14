/**
 * The prompt an agent preset gets as the resolver of a conflict (docs/run.md §1.9): which files conflict,
 * which integrated steps changed them (by their `Tug-Step` trailers), what this step is for, and the rules
 * (edit only the conflicted files' contents in the worktree, remove every marker, leave git to the driver).
 * Pure: a brief with its `conflict` in, text out.
 */
import { CONFIG_FILE } from '../contract/layout.js';
import { promptHead, promptOwner, taskList, type PromptContext } from './agent-prompt.js';
import { agentSpace, sq } from './confine.js';
import type { StepBrief } from './types.js';

export function conflictPrompt(brief: StepBrief, ctx: PromptContext): string {
  const c = brief.conflict!;
  const owner = promptOwner(brief, ctx.worktree);
  const out = promptHead(brief, ctx.worktree, [
    'You are resolving a merge conflict for one step of a tugcode plan, running non-interactively: nobody will',
    'answer questions. Merge the conflicted files below, then end with a short report.',
  ]);
  out.push(
    '',
    '## The conflict',
    '',
    `The driver is rebasing this step's commit onto the integration branch (now at ${c.onto.slice(0, 12)}),`,
    'and git stopped on a conflict in these files (paths relative to the worktree):',
    '',
    ...c.files.map((f) => `- ${f}`),
    '',
    'Each holds conflict markers: between `<<<<<<<` and `=======` is the integration branch (the steps below),',
    "between `=======` and `>>>>>>>` is this step's change.",
  );
  if (c.integrated.length) {
    out.push('', 'The integrated steps that changed these files since this step started:', '');
    for (const i of c.integrated)
      out.push(`- ${i.step_anchor ?? '(no step)'}: ${i.subject} (${i.commit.slice(0, 12)})`);
  }
  out.push('', "## This step's task list", '');
  out.push(...(brief.items.length ? taskList(brief.items) : ['(the step lists no items)']));
  out.push(
    '',
    '## Rules',
    '',
    '- Edit each conflicted file so that it keeps both intents: what the integrated steps did and what this',
    '  step does. Remove every conflict marker line. Change other files only when the merge needs it.',
    `- Edit only files inside the worktree ${ctx.worktree} (your current directory); scratch files go in`,
    `  $TMPDIR, which is ${sq(agentSpace(ctx.worktree).tmp)}. The driver checks that nothing outside changed.`,
    '- Do not run git commands that change anything (no add, commit, rebase, checkout, reset, push): the driver',
    '  checks your merge, stages it and continues the rebase when you finish.',
    `- Do not change the plan ${brief.plan_path} or ${CONFIG_FILE}: an attempt that changes them fails.`,
    '- You may record progress or findings:',
    '',
    `      tugcode state update ${owner} --task ORD completed`,
    `      tugcode state artifact ${owner} --kind note --summary "what you found"`,
    `      tugcode state heartbeat ${owner}`,
    '',
    `  The full brief, with the conflict, is JSON in the file ${sq(ctx.briefPath)}.`,
    '- If you cannot merge it, say why in your report and stop.',
    '',
    '## Report',
    '',
    'End with your report as your final message: its first line a one-line summary of how you merged, then',
    'the files you changed.',
  );
  return out.join('\n') + '\n';
}
