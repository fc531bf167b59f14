/**
 * What `run` refuses before its first claim, so that no step is claimed, worked on and lost: a base with
 * submodules (worker worktrees have them empty, edits under one would be in no commit) and a git without a
 * committer identity (issue 22 items 11 and 18).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { git, tempDir, tempRepo, writeFiles } from '../helpers/repo.js';
import { implementerScript, parseLines, planText, runJsonl, runRepo, step } from '../run/helpers.js';

const PLAN = planText([step(1, 'Alpha')]);

describe('run refuses before it claims anything', () => {
  it('a base branch with submodules: SubmodulesUnsupported (exit 4), no worker tree, no branch', () => {
    const root = runRepo(PLAN);
    const sub = tempRepo({ 'lib.txt': 'lib\n' });
    git(root, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'vendor/lib');
    git(root, 'commit', '-q', '-m', 'add a submodule');
    const r = runJsonl(root, ['demo', '--implementer', implementerScript().argv]);
    expect(r.code).toBe(4);
    expect(r.events.at(-1).error).toMatchObject({ code: 'SubmodulesUnsupported' });
    expect(r.events.at(-1).error.hint).toContain('tugcode worktree create');
    expect(r.events.some((e) => e.type === 'claimed')).toBe(false);
    expect(git(root, 'branch', '--list', 'tugplan/*')).toBe('');
    expect(git(root, 'worktree', 'list')).not.toContain('.tugtree');
  });

  it('an integration branch with unrelated history: IntegrationUnrelated (exit 4), the branch untouched', () => {
    const root = runRepo(PLAN);
    git(root, 'switch', '-q', '--orphan', 'tugplan/demo');
    writeFiles(root, { 'other.txt': 'another project\n' });
    git(root, 'add', 'other.txt');
    git(root, 'commit', '-q', '-m', 'unrelated');
    const tip = git(root, 'rev-parse', 'HEAD');
    git(root, 'switch', '-q', 'main');
    const r = runJsonl(root, ['demo', '--implementer', implementerScript().argv]);
    expect(r.code).toBe(4);
    expect(r.events.at(-1).error).toMatchObject({ code: 'IntegrationUnrelated' });
    expect(r.events.at(-1).error.message).toContain('shares no history with main');
    expect(git(root, 'rev-parse', 'tugplan/demo')).toBe(tip);
    expect(r.events.some((e) => e.type === 'claimed')).toBe(false);
  });

  it('a branch named tugplan leaves git no room for tugplan/<slug>: WorktreeExists (exit 4), also a dry run', () => {
    const root = runRepo(PLAN);
    git(root, 'branch', 'tugplan');
    const r = runJsonl(root, ['demo', '--implementer', implementerScript().argv]);
    const dry = spawnSync(process.execPath, [CLI, 'run', 'demo', '--dry-run', '--json'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect([r.code, dry.status]).toEqual([4, 4]);
    for (const error of [r.events.at(-1).error, JSON.parse(dry.stdout).error]) {
      expect(error).toMatchObject({ code: 'WorktreeExists', details: { branch: 'tugplan' } });
      expect(error.message).toContain('a branch named tugplan exists, so git cannot create tugplan/demo');
      expect(error.hint).toContain('git branch -m tugplan <new-name>');
    }
    expect(r.events.some((e) => e.type === 'claimed')).toBe(false);
    expect(git(root, 'branch', '--list').trim()).toBe('* main\n  tugplan');
    expect(git(root, 'worktree', 'list')).not.toContain('.tugtree');
  });

  it('no user.email: CommitFailed (cause identity, exit 4) before the first claim', () => {
    const root = runRepo(PLAN);
    git(root, 'config', '--unset', 'user.email');
    git(root, 'config', 'user.useConfigOnly', 'true');
    const env: Record<string, string | undefined> = {
      ...process.env,
      NODE_ENV: 'test',
      HOME: tempDir(),
      XDG_CONFIG_HOME: tempDir(),
      GIT_CONFIG_NOSYSTEM: '1',
    };
    for (const k of ['GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_EMAIL', 'EMAIL', 'GIT_CONFIG_GLOBAL']) delete env[k];
    const r = spawnSync(process.execPath, [CLI, 'run', 'demo', '--implementer', implementerScript().argv, '--json'], {
      cwd: root,
      env: env as NodeJS.ProcessEnv,
      encoding: 'utf8',
    });
    const events = parseLines(r.stdout);
    expect(r.status, r.stderr).toBe(4);
    expect(events.at(-1).error).toMatchObject({ code: 'CommitFailed', details: { cause: 'identity' } });
    expect(events.at(-1).error.hint).toContain('git config user.email');
    expect(events.some((e) => e.type === 'claimed')).toBe(false);
  });
});
