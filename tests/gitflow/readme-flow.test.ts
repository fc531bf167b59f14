/**
 * The README's "work on a plan by hand" flow, end to end with the built CLI on a small Python project that
 * has its own .gitignore: init → commit → worktree create → claim/start/update → commit → merge --dry-run →
 * merge. What init leaves behind never makes the merge fail, and `--dry-run` refuses exactly what the real
 * merge refuses (issue 22 item 20, docs/git.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectError, runCli, runJson } from '../helpers/cli.js';
import { git, tempRepo, writeFiles } from '../helpers/repo.js';
import { snapshot } from './helpers.js';

const PLAN = `## Phase 1.0: Hello {#phase-hello}

### Execution Steps {#execution-steps}

#### Step 1: Say hi {#step-1}

**Commit:** \`feat: say hi\`

**Tasks:**
- [ ] write hi.py
`;

const env = { TUGCODE_NOW: '2026-03-01T10:00:00.000Z' };

function tug(cwd: string, ...args: string[]): string {
  const r = runCli(args, { cwd, env });
  expect(r.code, `${args.join(' ')}\n${r.stdout}${r.stderr}`).toBe(0);
  return r.stdout;
}

/** A Python project, `tugcode init`, the plan written; `commitAll`: commit what the README says. */
function project(commitAll: boolean): { root: string; initText: string } {
  const root = tempRepo({ 'app.py': "print('app')\n", '.gitignore': '__pycache__/\n' });
  const initText = tug(root, 'init');
  writeFiles(root, { '.tugtool/tugplan-hello.md': PLAN });
  if (commitAll) git(root, 'add', '.gitignore', '.tugtool');
  else git(root, 'add', '.tugtool/tugplan-hello.md');
  git(root, 'commit', '-q', '-m', 'plan: hello');
  return { root, initText };
}

/** worktree create → claim → start → update → commit, as the README shows; returns the worktree. */
function implement(root: string): string {
  const wt = runJson('worktree create', ['worktree', 'create', 'hello'], { cwd: root, env }).json.worktree_path;
  tug(wt, 'state', 'claim', 'hello', '--worktree', '.');
  tug(wt, 'state', 'start', 'hello', 'step-1', '--worktree', '.');
  writeFiles(wt, { 'hi.py': "print('hi')\n" });
  tug(wt, 'state', 'update', 'hello', 'step-1', '--worktree', '.', '--task', '0', 'completed');
  tug(wt, 'commit', '--plan', 'hello', '--step', 'step-1', '--message', 'feat: say hi');
  return wt;
}

describe("the README's flow by hand", () => {
  it('init says what to commit; committed so, merge --dry-run and merge both succeed and leave main clean', () => {
    const { root, initText } = project(true);
    expect(initText).toContain('next: commit them with your plan: git add .gitignore .tugtool && git commit');
    implement(root);
    expect(runJson('merge', ['merge', 'hello', '--dry-run'], { cwd: root, env }).json).toMatchObject({
      merged: false,
      dry_run: true,
    });
    expect(runJson('merge', ['merge', 'hello'], { cwd: root, env }).json).toMatchObject({ merged: true });
    expect(readFileSync(join(root, 'hi.py'), 'utf8')).toBe("print('hi')\n");
    expect(git(root, 'status', '--porcelain')).toBe('');
  });

  it("committing the plan and .gitignore only: init's untracked log index does not stop the merge", () => {
    const { root } = project(false);
    git(root, 'commit', '-q', '-m', 'ignore lines', '.gitignore');
    implement(root);
    expect(git(root, 'status', '--porcelain')).toContain('?? .tugtool/tugplan-implementation-log.md');
    expect(runJson('merge', ['merge', 'hello', '--dry-run'], { cwd: root, env }).json.dry_run).toBe(true);
    expect(runJson('merge', ['merge', 'hello'], { cwd: root, env }).json).toMatchObject({ merged: true });
    // The merge's own index replaced init's header.
    expect(readFileSync(join(root, '.tugtool/tugplan-implementation-log.md'), 'utf8')).toContain('step-1');
    expect(git(root, 'ls-files', '.tugtool/tugplan-implementation-log.md')).not.toBe('');
  });

  it("committing only the plan: --dry-run and merge both refuse init's changed .gitignore by name", () => {
    const { root } = project(false);
    implement(root);
    const before = snapshot(root);
    for (const args of [
      ['merge', 'hello', '--dry-run'],
      ['merge', 'hello'],
    ]) {
      const r = runJson('merge', args, { cwd: root, env });
      expectError(r, 'WorktreeDirty', 4);
      expect(r.json.error.message).toBe(`cannot merge into main: ${root} has uncommitted changes to .gitignore`);
    }
    expect(snapshot(root)).toBe(before);
  });

  it('--dry-run refuses what the merge refuses (an untracked file in the way), and neither changes anything', () => {
    const { root } = project(true);
    implement(root);
    writeFiles(root, { 'hi.py': 'my own hi\n' });
    const before = snapshot(root);
    const dry = runJson('merge', ['merge', 'hello', '--dry-run'], { cwd: root, env });
    expectError(dry, 'WorktreeDirty', 4);
    expect(dry.json.error.details.untracked_files).toEqual(['hi.py']);
    const real = runJson('merge', ['merge', 'hello'], { cwd: root, env });
    expectError(real, 'WorktreeDirty', 4);
    expect(real.json.error.message).toBe(dry.json.error.message);
    expect(snapshot(root)).toBe(before);
  });
});
