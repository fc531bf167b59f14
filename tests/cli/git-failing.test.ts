/**
 * git itself failing before it does anything — not on PATH, or a git configuration it cannot parse (a
 * broken global config, GIT_CONFIG_COUNT without its keys) — is GitError (exit 10) with a hint that says
 * what to fix (docs/output.md §3, §4).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectError, runJson } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { planRepo } from '../gitflow/helpers.js';

describe('git failing before it starts', () => {
  const root = planRepo();

  it('not on PATH: the hint says to install git', () => {
    const r = runJson('worktree list', ['worktree', 'list'], { cwd: root, env: { PATH: tempDir() } });
    expectError(r, 'GitError', 10);
    expect(r.json.error.hint).toMatch(/install git/);
  });

  it('a configuration git cannot read: the hint names the config file and the GIT_CONFIG_* variables', () => {
    const bad = join(tempDir(), 'gitconfig');
    writeFileSync(bad, '[core\n');
    for (const env of [
      { GIT_CONFIG_GLOBAL: bad },
      { GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'a.b', GIT_CONFIG_VALUE_0: 'c' },
    ]) {
      const r = runJson('worktree list', ['worktree', 'list'], { cwd: root, env });
      expectError(r, 'GitError', 10);
      expect(r.json.error.hint).toMatch(/GIT_CONFIG_\*/);
    }
  });
});
