/** `tugcode merge`'s text line (docs/git.md §5): a dry run says what the merge itself would say. */
import { describe, expect, it } from 'vitest';
import { merge } from '../../src/cli/commands/git-text.js';

const data = (o: { dry_run: boolean; already_merged: boolean; merge_commit?: string | null }) => ({
  merged: false,
  merge_commit: null,
  branch: 'tugplan/demo',
  into: 'main',
  steps_included: ['step-1', 'step-2'],
  step_commits: {},
  worktrees_removed: [],
  branches_deleted: [],
  kept: [],
  ...o,
});

describe('merge text', () => {
  it('a dry run of a branch already merged says so, as the merge does', () => {
    expect(merge(data({ dry_run: true, already_merged: true }))).toBe(
      'already merged tugplan/demo into main: 2 step(s)',
    );
    expect(merge(data({ dry_run: false, already_merged: true }))).toBe(
      'already merged tugplan/demo into main: 2 step(s)',
    );
    expect(merge(data({ dry_run: true, already_merged: false }))).toBe('would merge tugplan/demo into main: 2 step(s)');
    expect(merge(data({ dry_run: false, already_merged: false, merge_commit: 'abcdef0123456789' }))).toBe(
      'merged tugplan/demo into main (abcdef012345): 2 step(s)',
    );
  });
});
