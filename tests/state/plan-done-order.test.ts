/**
 * `state log` reads in the order things happened (docs/state.md §3): the last step's `complete` event comes
 * before the `plan done` it caused, on both backends, whether the step was completed by its owner or by
 * `state reconcile`.
 */
import { describe, expect, it } from 'vitest';
import { BACKENDS, backend } from '../pg/backend.js';
import { addWorktree, stText } from './cli-helpers.js';
import { planRepo, planText } from './helpers.js';
import { git } from '../helpers/repo.js';

const ONE = planText([{ id: '1', deps: [], tasks: ['a'] }]);

describe.each(BACKENDS)('plan done after the step that finished it [%s]', (kind) => {
  it('logs complete, then plan done', async () => {
    const b = await backend(kind);
    const root = planRepo({ '.tugtool/tugplan-demo.md': ONE });
    const w = addWorktree(root, 'one');
    const t = b.session(root, { w });
    t.ok(['init', 'demo']);
    t.ok(['claim', 'demo', '--worktree', w]);
    t.ok(['update', 'demo', 'step-1', '--worktree', w, '--complete-remaining']);
    expect(t.ok(['complete', 'demo', 'step-1', '--worktree', w]).plan_completed).toBe(true);
    const log = t.ok(['log', 'demo']);
    const commands = (log.events as { command: string; id: number }[])
      .sort((x, y) => x.id - y.id)
      .map((e) => e.command)
      .slice(-2);
    expect(commands).toEqual(['state complete', 'plan_done']);
    // The text reads the same way.
    const text = stText(root, ['log', 'demo'], { env: b.env }).stdout.trim().split('\n');
    expect(text.slice(-2).map((l) => l.match(/\b(complete|plan done)\b/)?.[1])).toEqual(['complete', 'plan done']);
  });

  it('logs reconcile, then plan done, when reconcile completes the last step', async () => {
    const b = await backend(kind);
    const root = planRepo({ '.tugtool/tugplan-demo.md': ONE });
    const t = b.session(root);
    t.ok(['init', 'demo']);
    git(
      root,
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'feat: one\n\nTug-Step: step-1\nTug-Plan: .tugtool/tugplan-demo.md',
    );
    expect(t.ok(['reconcile', 'demo']).reconciled).toHaveLength(1);
    const events = (t.ok(['log', 'demo']).events as { command: string; id: number }[]).sort((x, y) => x.id - y.id);
    expect(events.map((e) => e.command).slice(-2)).toEqual(['state reconcile', 'plan_done']);
  });
});
