/**
 * skills/implement §A, "Delegate", followed as written: the orchestrator calls the reviewer after the coder
 * and before the committer, so the step's change is not committed yet. The `diff` the skill tells it to
 * give the reviewer must hold that change, new files included; an empty diff would be approved unread.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellArg } from '../../src/util/shell-arg.js';
import { ROOT } from '../helpers/cli.js';
import { git, tempDir, tempRepo, writeFiles } from '../helpers/repo.js';
import { codeOf } from './extract.js';

const SKILL = 'skills/implement/SKILL.md';

describe('skills/implement: the review diff', () => {
  it("holds the coder's uncommitted change, new files included", () => {
    const root = tempRepo({ 'src/a.txt': 'one\n' });
    const W = join(tempDir(), 'wt');
    git(root, 'worktree', 'add', '-q', '-b', 'tugplan/demo--w', W);
    const base = git(W, 'rev-parse', 'HEAD').trim();
    // What the coder leaves: an edit and a new file, nothing committed (agents/coder.md).
    writeFiles(W, { 'src/a.txt': 'one\ntwo\n', 'src/new.txt': 'fresh\n' });

    const lines = codeOf(join(ROOT, SKILL), SKILL)
      .flatMap((c) => c.text.replace(/\\\n\s*/g, '').split('\n'))
      .map((l) => l.trim())
      .filter((l) => l.startsWith('git -C W') && / diff /.test(l));
    expect(lines, `${SKILL}: one \`git -C W … diff …\` command for the reviewer's diff`).toHaveLength(1);
    const values: Record<string, string> = { W, '<base>': base, '<head>': git(W, 'rev-parse', 'HEAD').trim() };
    const command = lines[0]!.replace(/\bW\b|<base>|<head>/g, (m) => shellArg(values[m]!));
    const r = spawnSync('sh', ['-c', command], { cwd: root, encoding: 'utf8' });
    expect(r.status, `${command}\n${r.stderr}`).toBe(0);
    expect(r.stdout, command).toContain('+two');
    expect(r.stdout, command).toContain('src/new.txt');
    expect(r.stdout, command).toContain('+fresh');
    // Nothing committed, nothing staged for real: the committer's `tugcode commit` stages the step.
    expect(git(W, 'rev-parse', 'HEAD').trim()).toBe(base);
    expect(git(W, 'diff', '--cached', '--stat').trim()).toBe('');
  });
});
