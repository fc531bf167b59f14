/**
 * The main checkout on another branch than the base (docs/git.md §3): a plan committed there is not on
 * the base, and `git add && git commit` (the PlanNotCommitted hint) would change nothing. The hint says
 * where the checkout is and names `--base` for it, for `run` and `worktree create` alike.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { git, tempRepo, writeFiles } from '../helpers/repo.js';
import { planText, step } from '../run/helpers.js';

const PLAN = planText([step(1, 'Alpha')]);

function repoOnFeature(): string {
  const root = tempRepo({ 'README.md': 'hi\n' });
  git(root, 'switch', '-q', '-c', 'feature');
  writeFiles(root, { '.tugtool/tugplan-demo.md': PLAN });
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'plan on feature');
  return root;
}

function refusal(root: string, args: string[]): { code: number | null; error: any } {
  const r = runCli([...args, '--json'], { cwd: root });
  return { code: r.code, error: JSON.parse(r.stdout).error };
}

describe('PlanNotCommitted with the main checkout on another branch', () => {
  it('the plan committed on that branch: the hint names --base <branch>', () => {
    const root = repoOnFeature();
    for (const args of [
      ['run', 'demo'],
      ['worktree', 'create', 'demo'],
    ]) {
      const { code, error } = refusal(root, args);
      expect(code).toBe(4);
      expect(error.code).toBe('PlanNotCommitted');
      expect(error.details).toMatchObject({ base_branch: 'main', checkout_branch: 'feature' });
      expect(error.hint).toBe(
        'the main checkout is on feature, where the plan is committed: pass --base feature, ' +
          'or commit the plan on main (git switch main)',
      );
    }
    expect(git(root, 'branch', '--list', 'tugplan/*')).toBe('');
  });

  it('edited on that branch and not committed: commit it there, then --base <branch>', () => {
    const root = repoOnFeature();
    writeFiles(root, { '.tugtool/tugplan-demo.md': PLAN + '\nmore prose\n' });
    const { code, error } = refusal(root, ['run', 'demo']);
    expect(code).toBe(4);
    expect(error.hint).toBe(
      "git add .tugtool/tugplan-demo.md && git commit (on feature, the main checkout's branch), then pass " +
        '--base feature; or commit the plan on main (git switch main)',
    );
  });

  it('on the base branch the hint stays git add && git commit', () => {
    const root = repoOnFeature();
    git(root, 'switch', '-q', 'main');
    writeFiles(root, { '.tugtool/tugplan-demo.md': PLAN });
    const { error } = refusal(root, ['run', 'demo']);
    expect(error.hint).toBe('git add .tugtool/tugplan-demo.md && git commit');
    expect(error.details.checkout_branch).toBeUndefined();
  });
});
