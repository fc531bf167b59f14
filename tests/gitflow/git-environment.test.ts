/**
 * tugcode started from a git hook inherits GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE pointing at the main
 * checkout. No git child (nor the implementer) may act on that repository or index: the user's staged file
 * stays staged and `main` does not move (docs/git.md, issue 22 item 13).
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createWorktree } from '../../src/gitflow/worktree.js';
import { runJson } from '../helpers/cli.js';
import { git, tempDir, writeFiles } from '../helpers/repo.js';
import { planText, runJsonl, runRepo, step, stepCommits } from '../run/helpers.js';
import { flowCtx, planRepo, step1CommitArgs, T0, workOn } from './helpers.js';

/** The environment git gives a pre-commit hook of the main checkout. */
function hookEnv(root: string): Record<string, string> {
  return {
    GIT_DIR: join(root, '.git'),
    GIT_WORK_TREE: root,
    GIT_INDEX_FILE: join(root, '.git', 'index'),
    GIT_PREFIX: '',
  };
}

/** The user's own work in progress: a staged new file and a staged change. */
function stageUserWork(root: string): void {
  writeFiles(root, { 'mine.txt': 'staged by the user\n', 'README.md': '# changed by the user\n' });
  git(root, 'add', 'mine.txt', 'README.md');
}

const STAGED = 'M  README.md\nA  mine.txt\n';

describe('the environment of a git hook', () => {
  it('run: the user stays staged, main stays put, every step lands on the integration branch', () => {
    const root = runRepo(planText([step(1, 'Alpha'), step(2, 'Beta', { deps: [1] })]));
    stageUserWork(root);
    const main = git(root, 'rev-parse', 'main');
    // The implementer stages and inspects with plain git in its cwd, as agents do.
    const impl = join(tempDir(), 'impl.sh');
    writeFileSync(
      impl,
      '#!/bin/sh\nset -e\necho "$TUG_STEP" > "$TUG_STEP.txt"\ngit add -A\ngit status --short > /dev/null\n',
    );
    chmodSync(impl, 0o755);
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl], hookEnv(root));
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.code).toBe(0);
    expect(git(root, 'status', '--porcelain', '--untracked-files=no')).toBe(STAGED);
    expect(git(root, 'rev-parse', 'main')).toBe(main);
    expect([...stepCommits(root, 'tugplan/demo')].sort()).toEqual(['step-1', 'step-2']);
    expect(git(root, 'ls-tree', '--name-only', 'tugplan/demo')).toContain('step-2.txt');
    expect(git(root, 'ls-tree', '--name-only', 'tugplan/demo')).not.toContain('mine.txt');
  });

  it('commit: commits the named worktree only; the user stays staged, main stays put', async () => {
    const root = planRepo();
    const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    const attempt = await workOn(flowCtx(root), wt, 'step-1');
    writeFiles(wt, { 'alpha.txt': 'a\n' });
    stageUserWork(root);
    const main = git(root, 'rev-parse', 'main');
    const r = runJson('commit', step1CommitArgs(wt, '--attempt', String(attempt)), {
      cwd: root,
      env: { TUGCODE_NOW: T0, ...hookEnv(root) },
    });
    expect(r.json).toMatchObject({ committed: true, state_updated: true });
    expect(r.json.files_staged).toEqual(['.tugtool/implementation-log/demo/step-1.md', 'alpha.txt']);
    expect(git(root, 'status', '--porcelain', '--untracked-files=no')).toBe(STAGED);
    expect(git(root, 'rev-parse', 'main')).toBe(main);
    expect(git(wt, 'status', '--porcelain')).toBe('');
    expect(git(wt, 'log', '-1', '--format=%s')).toBe('feat: alpha\n');
  });
});
