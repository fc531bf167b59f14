/**
 * The prompt an agent implementer preset gives its agent (docs/run.md §2.1): the step brief as text — the
 * title, the items as a task list, the references, the substeps, the earlier failures — and the rules of
 * the implementer protocol (§2): edit only inside the worktree, never commit or push, and how to report
 * through `tugcode state`. Pure: a brief in, text out.
 */
import { CONFIG_FILE } from '../contract/layout.js';
import { agentSpace, ownerArgs, sq } from './confine.js';
import type { BriefItem, StepBrief } from './types.js';

/** Where the agent works: the worktree it is confined to. */
export interface PromptContext {
  /** The worker's worktree (absolute): TUG_WORKTREE. */
  worktree: string;
  /** The brief's JSON file: TUG_STEP_JSON. */
  briefPath: string;
}

const MARK: Record<BriefItem['status'], string> = { open: ' ', in_progress: ' ', completed: 'x', deferred: '-' };

/** `- [ ] task 0 (open): text` — one line per item, continuation lines indented. */
export function taskList(items: BriefItem[]): string[] {
  return items.map(
    (i) => `- [${MARK[i.status]}] ${i.kind} ${i.ordinal} (${i.status}): ${i.text.trim().replace(/\n/g, '\n  ')}`,
  );
}

function substepLines(subs: StepBrief[], depth = 0): string[] {
  return subs.flatMap((s) => [
    `${'  '.repeat(depth)}- ${s.step_anchor}: ${s.title}`,
    ...substepLines(s.substeps, depth + 1),
  ]);
}

/**
 * The head every agent prompt starts with — the implementer's, the resolver's (resolve-prompt.ts) and the
 * reviewer's (review-prompt.ts): who the agent is (its two intro lines), the step's title, the plan line
 * (`note` adds to it, e.g. the review round) and the worktree it is confined to.
 */
export function promptHead(
  brief: Pick<StepBrief, 'plan_path' | 'step_anchor' | 'title' | 'attempt'>,
  worktree: string,
  intro: readonly [string, string],
  note = '',
): string[] {
  return [
    ...intro,
    '',
    `# ${brief.step_anchor}: ${brief.title}`,
    '',
    `Plan: ${brief.plan_path} (step ${brief.step_anchor}, attempt ${brief.attempt}${note})`,
    `Worktree: ${worktree}`,
  ];
}

/**
 * The owner arguments of the step's state commands, as a prompt writes them out: literal values, because
 * agent permission systems refuse commands with shell expansions (docs/agents.md §1.1).
 */
export function promptOwner(brief: Pick<StepBrief, 'plan_path' | 'step_anchor' | 'attempt'>, worktree: string): string {
  return ownerArgs({ plan: brief.plan_path, step: brief.step_anchor, worktree, attempt: brief.attempt });
}

/** The whole prompt for one step (a substep gets its own prompt when its turn comes). */
export function agentPrompt(brief: StepBrief, ctx: PromptContext): string {
  const owner = promptOwner(brief, ctx.worktree);
  const out = promptHead(brief, ctx.worktree, [
    'You are the implementer of one step of a tugcode plan, running non-interactively: nobody will answer',
    'questions. Do the work of the step below, then end with a short report.',
  ]);
  if (brief.depends_on.length)
    out.push(`Depends on: ${brief.depends_on.join(', ')} (already done; their changes are in your worktree)`);
  if (brief.commit_message) out.push(`Commit message (the driver commits for you): ${brief.commit_message}`);
  out.push('', '## Task list', '');
  out.push(...(brief.items.length ? taskList(brief.items) : ['(the step lists no items)']));
  out.push(
    '',
    'Items marked [x] are already done and [-] are deferred. A checkpoint item that is a single command in',
    'backticks is run by the driver after you finish; make it pass (you may run it yourself to check).',
  );
  if (brief.references?.trim()) out.push('', '## References', '', brief.references.trim());
  if (brief.substeps.length)
    out.push(
      '',
      '## Substeps (implemented in their own runs; do not do their work here)',
      '',
      ...substepLines(brief.substeps),
    );
  if (brief.human_notes?.trim())
    out.push('', '## Notes from a human (they sent the step back: follow them)', '', brief.human_notes.trim());
  if (brief.review_issues) {
    // docs/run.md §6.2: a REVISE round, in the same worktree as the work under review.
    out.push(
      '',
      '## The reviewer asked for changes',
      '',
      'Your earlier work on this step is in the worktree, committed. The reviewer found these issues; fix them',
      '(edit the files; the driver commits again):',
      '',
      ...brief.review_issues.map((i) => {
        const where = [i.file, i.line].filter((x) => x !== undefined && x !== null && x !== '').join(':');
        return `- ${i.severity}${where ? ` ${where}` : ''}: ${i.message.trim().replace(/\n/g, '\n  ')}`;
      }),
    );
  }
  if (brief.previous_failures.length) {
    out.push('', '## Previous failed attempts', '');
    for (const f of brief.previous_failures) out.push(`- attempt ${f.attempt}: ${f.reason}`);
    out.push('', 'Find out why they failed and do not repeat it.');
  }
  out.push(
    '',
    '## Rules',
    '',
    `- Edit only files inside the worktree ${ctx.worktree} (your current directory): create, change and`,
    '  delete files there only, and touch nothing outside it (no /tmp: scratch files go in $TMPDIR, which is',
    `  ${sq(agentSpace(ctx.worktree).tmp)}). The driver checks that nothing outside the worktree changed.`,
    '- Do not commit, do not create or switch branches, do not rebase or reset, and never call `git push`:',
    '  the driver commits your changes when you finish.',
    `- Do not change the plan ${brief.plan_path} or ${CONFIG_FILE}: they are the run's contract, and an`,
    '  attempt that changes them fails. A new plan for later work may be written.',
    '- You may record progress in the plan state (optional: when you finish successfully, every item you did',
    '  not mark counts as completed; an item you defer stays deferred):',
    '',
    `      tugcode state update ${owner} --task ORD completed`,
    `      tugcode state update ${owner} --test ORD deferred --reason "why"`,
    `      tugcode state artifact ${owner} --kind note --summary "what you found"`,
    `      tugcode state heartbeat ${owner}`,
    '',
    `  ORD is the item ordinal shown in the task list. The full brief is JSON in the file ${sq(ctx.briefPath)}.`,
    '  Run these exactly as written (with your ORD and text): other state commands, and the same commands',
    '  for another step, worktree or attempt, are refused.',
    '- If you cannot do the step, say why in your report and stop.',
    '',
    '## Report',
    '',
    'End with your report as your final message: its first line a one-line summary of what you did, then',
    'the files you changed and anything left undone.',
  );
  return out.join('\n') + '\n';
}
