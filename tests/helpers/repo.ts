/**
 * Real git repositories in temp dirs.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { inject } from 'vitest';
import { afterEachFile } from './file-hooks.js';

const made: string[] = [];
afterEachFile(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@e',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@e',
    },
  });
}

export function tempDir(prefix = 'tugcode-test-'): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(d);
  return d;
}

let initialized: string | null = null;

/**
 * The `.git` of `git init -b main` with the test identity, made once per test process: a copy of it costs a
 * third of the CPU of the four git calls (a file makes dozens of repositories). It holds no commit, so
 * every repository still gets a root commit of its own (PostgreSQL names a project after it).
 */
function initializedGitDir(): string {
  if (!initialized) {
    // It serves every file this process runs, so it lives in the run's directory (tests/helpers/tmp-global-setup.ts).
    const d = realpathSync(mkdtempSync(join(inject('tugcodeRunTmp'), 'git-init-')));
    git(d, 'init', '-q', '-b', 'main');
    git(d, 'config', 'user.name', 'Test');
    git(d, 'config', 'user.email', 'test@example.com');
    git(d, 'config', 'commit.gpgsign', 'false');
    initialized = join(d, '.git');
  }
  return initialized;
}

/** A new git repository on branch main with one commit. Returns its canonical root. */
export function tempRepo(files: Record<string, string> = {}): string {
  const root = tempDir();
  cpSync(initializedGitDir(), join(root, '.git'), { recursive: true });
  writeFiles(root, { 'README.md': '# test\n', ...files });
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'initial');
  return root;
}

export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    const p = join(root, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
  }
}
