/**
 * A repository with no commits yet has no base branch: `run` and `worktree create` say the real cause (nothing
 * is committed, the plan included) with the hint that commits it, not "pass --base"; a dry run previews the
 * main checkout's copy with that warning (docs/run.md §1.10). Nothing is changed.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { git, tempDir, writeFiles } from '../helpers/repo.js';
import { initProject } from '../../src/project/init.js';
import { resolveRepo } from '../../src/git/repo.js';
import { fixedClock } from '../../src/clock.js';
import { gitSnapshot, planText, runJsonl, step, tugJson } from './helpers.js';

/** A repository with `tugcode init` done and a plan written, nothing committed. */
function emptyRepo(): string {
  const root = tempDir('tugcode-empty-');
  git(root, 'init', '-q', '-b', 'main');
  initProject(resolveRepo(root), fixedClock(Date.parse('2026-03-01T10:00:00.000Z')));
  writeFiles(root, { '.tugtool/tugplan-hello.md': planText([step(1, 'One')]) });
  return root;
}

const MESSAGE =
  'the repository has no commits yet: commit the plan first (.tugtool/tugplan-hello.md is not committed on main)';
const HINT = 'git add .tugtool/tugplan-hello.md && git commit';

describe('a repository with no commits yet', () => {
  it('run and worktree create say so, with the hint that commits the plan; nothing changes', () => {
    const root = emptyRepo();
    expect(git(root, 'rev-list', '--all')).toBe('');
    const before = gitSnapshot(root);

    const text = runCli(['run', 'hello', '--implementer', 'true'], { cwd: root });
    expect(text.code).toBe(4);
    expect(text.stderr).toBe(`tugcode: PlanNotCommitted: ${MESSAGE}\nhint: ${HINT}\n`);
    expect(text.stderr).not.toContain('--base');
    const json = runJsonl(root, ['hello', '--implementer', 'true']);
    expect(json.code).toBe(4);
    expect(json.events.at(-1)).toMatchObject({
      type: 'summary',
      error: { code: 'PlanNotCommitted', message: MESSAGE, hint: HINT, details: { no_commits: true } },
    });

    const wt = runCli(['worktree', 'create', 'hello'], { cwd: root });
    expect(wt.code).toBe(4);
    expect(wt.stderr).toBe(`tugcode: PlanNotCommitted: ${MESSAGE}\nhint: ${HINT}\n`);
    const wtJson = tugJson(root, ['worktree', 'create', 'hello']);
    expect(wtJson.json).toMatchObject({ status: 'error', error: { code: 'PlanNotCommitted', hint: HINT } });
    expect(gitSnapshot(root)).toEqual(before);
  });

  it('a dry run previews the main checkout copy and warns that the plan needs committing', () => {
    const root = emptyRepo();
    const dry = tugJson(root, ['run', 'hello', '--dry-run', '--implementer', 'true']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json).toMatchObject({
      plan_committed: false,
      waves: [['step-1']],
      warnings: [{ code: 'PlanNotCommitted', details: { no_commits: true } }],
    });
    expect(dry.json.warnings[0].message).toContain(MESSAGE);
  });

  it('a base branch that is merely missing still says --base', () => {
    const root = emptyRepo();
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'plan');
    const r = runCli(['run', 'hello', '--base', 'nope', '--implementer', 'true'], { cwd: root });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toContain('base branch nope does not exist');
    expect(r.stderr).toContain('hint: pass --base <branch>');
  });
});
