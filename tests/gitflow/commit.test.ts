import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { commitStep } from '../../src/gitflow/commit.js';
import { gitRunner } from '../../src/git/exec.js';
import { trailersAfterTitle, withTugTrailers } from '../../src/git/trailer-write.js';
import { createWorktree } from '../../src/gitflow/worktree.js';
import { git, tempRepo } from '../helpers/repo.js';
import { claimOnly, flowCtx, PLAN_PATH, planRepo, snapshot, stepRows, workOn } from './helpers.js';

describe('commit message trailers', () => {
  const cwd = tempRepo();
  const g = gitRunner({ ...process.env });
  const tug = [
    { key: 'Tug-Step', value: 'step-2' },
    { key: 'Tug-Plan', value: '.tugtool/tugplan-demo.md' },
  ];

  it('replaces every existing Tug-* trailer and keeps the other trailers', async () => {
    const msg =
      'feat: x\n\nbody\n\nTug-Step: old\nSigned-off-by: A <a@b>\ntug-step: older\nTug-Refactor: rename\nTug-Plan: other.md\n';
    expect(await withTugTrailers(g, msg, tug, cwd)).toBe(
      'feat: x\n\nbody\n\nSigned-off-by: A <a@b>\nTug-Step: step-2\nTug-Plan: .tugtool/tugplan-demo.md\n',
    );
  });

  it('keeps multi-line bodies, markdown headings and non-ASCII text byte for byte', async () => {
    const msg = 'fix: Grüße 🚀 über alles\n\n# Heading kept\n\nline one\n  indented line two\n\n- item: with colon\n';
    expect(await withTugTrailers(g, msg, tug, cwd)).toBe(
      `${msg}\nTug-Step: step-2\nTug-Plan: .tugtool/tugplan-demo.md\n`,
    );
  });

  it('adds a trailer block to a subject-only message', async () => {
    expect(await withTugTrailers(g, 'chore: one line', tug, cwd)).toBe(
      'chore: one line\n\nTug-Step: step-2\nTug-Plan: .tugtool/tugplan-demo.md\n',
    );
  });

  // The driver's messages (a plan's `**Commit:**` line, or `chore(<slug>): <title>`) get their trailers
  // without git when git has no trailer.* configuration: byte for byte what git interpret-trailers makes.
  it('appends the trailers to a one-line message as git does, without git', async () => {
    const titles = [
      'feat: write file 1',
      'fix(parser)!: breaking change',
      'chore(bench): Write file 12',
      'docs: Grüße 🚀 über `code` and "quotes"',
      '# a heading-like title',
      'Signed-off-by: A <a@b>',
      'a: b: c',
      '(cherry picked from commit 1234567)',
      '---',
      '  indented title',
      'tab\tinside',
      'Co-authored-by: x',
      'x',
      'feat: ' + 'long '.repeat(60),
    ];
    const sets = [
      tug,
      [
        { key: 'Tug-Step', value: 'step-2-1' },
        { key: 'Tug-Plan', value: '.tugtool/tugplan-with space ü.md' },
        { key: 'Tug-Refactor', value: `${'a'.repeat(40)} ${'b'.repeat(12)}..${'c'.repeat(12)}` },
      ],
    ];
    for (const title of titles)
      for (const trailers of sets)
        for (const message of [title, `${title}\n`, `${title}  \r\n\n`]) {
          const viaGit = await withTugTrailers(g, message, trailers, cwd);
          expect(await withTugTrailers(g, message, trailers, cwd, { unconfigured: true }), message).toBe(viaGit);
          expect(trailersAfterTitle(`${title.replace(/\s+$/, '')}\n`, trailers), message).toBe(viaGit);
        }
    // Anything else is git's: a body, a `tug-` anywhere, a value git would trim.
    expect(trailersAfterTitle('feat: x\n\nbody\n', tug)).toBeNull();
    expect(trailersAfterTitle('chore(tug-x): y\n', tug)).toBeNull();
    expect(trailersAfterTitle('feat: x\n', [{ key: 'Tug-Plan', value: 'p.md\t' }])).toBeNull();
  });

  it('refuses an empty message or a NUL byte', async () => {
    await expect(withTugTrailers(g, '  \n', tug, cwd)).rejects.toThrow(
      expect.objectContaining({ code: 'InvalidArgument' }),
    );
    await expect(withTugTrailers(g, 'a\0b', tug, cwd)).rejects.toThrow(
      expect.objectContaining({ code: 'InvalidArgument' }),
    );
  });
});

describe('tugcode commit', () => {
  let root: string;
  let wt: string;

  beforeAll(async () => {
    root = planRepo();
    wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
  });

  it('commits a message with trailers, a multi-line body and non-ASCII text exactly', async () => {
    const attempt = await workOn(flowCtx(root), wt, 'step-1');
    writeFileSync(join(wt, 'alpha.txt'), 'α\n');
    const message = 'feat(α): Grüße\n\nZeile eins\n\n# not a comment\n\nTug-Step: wrong\nCo-authored-by: B <b@c>\n';
    const r = await commitStep(flowCtx(wt), {
      worktree: wt,
      plan: 'demo',
      step: '#step-1',
      message,
      attempt,
      summary: 'Did α.\nSecond line.',
    });
    expect(r).toMatchObject({
      committed: true,
      state_updated: true,
      state_update_failed: false,
      state_failure_reason: null,
      integrated: false,
      integration_branch: null,
    });
    expect(r.files_staged).toEqual(['.tugtool/implementation-log/demo/step-1.md', 'alpha.txt']);
    expect(git(wt, 'cat-file', 'commit', r.commit_hash).split('\n\n').slice(1).join('\n\n')).toBe(
      'feat(α): Grüße\n\nZeile eins\n\n# not a comment\n\nCo-authored-by: B <b@c>\nTug-Step: step-1\nTug-Plan: .tugtool/tugplan-demo.md\n',
    );
    const entry = readFileSync(join(wt, r.log_entry_path), 'utf8');
    expect(entry).toContain('# step-1: Add alpha');
    expect(entry).toContain('Did α.\nSecond line.');
    expect(entry).toContain('- `alpha.txt`');
  });

  it('keeps state.db, logs, locks and kernel sessions out of the commit even without .gitignore lines', async () => {
    // A repository whose .gitignore and info/exclude know nothing about tugcode.
    const bare = tempRepo({ '.tugtool/tugplan-x.md': readFileSync(join(root, PLAN_PATH), 'utf8') });
    writeFileSync(join(bare, '.tugtool/state.db'), 'db');
    writeFileSync(join(bare, '.tugtool/state.db-wal'), 'wal');
    writeFileSync(join(bare, '.tugtool/integration.lock'), '');
    git(bare, 'config', 'core.excludesFile', '/dev/null');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(bare, '.tug/session'), { recursive: true });
    writeFileSync(join(bare, '.tug/session/x.json'), '{}');
    mkdirSync(join(bare, '.tugtool/logs'), { recursive: true });
    writeFileSync(join(bare, '.tugtool/logs/run.log'), 'log');
    writeFileSync(join(bare, 'src.txt'), 'code\n');
    const r = await commitStep(flowCtx(bare, undefined, { TUGCODE_STATE_DB: join(bare, 'no-such-dir', 'state.db') }), {
      plan: '.tugtool/tugplan-x.md',
      step: 'step-1',
      message: 'feat: x',
      allowMain: true,
    });
    expect(r.files_staged).toEqual(['.tugtool/implementation-log/x/step-1.md', 'src.txt']);
    expect(r.state_update_failed).toBe(true);
    expect(
      git(bare, 'ls-files')
        .split('\n')
        .filter((f) => f.startsWith('.tug')),
    ).toEqual(['.tugtool/implementation-log/x/step-1.md', '.tugtool/tugplan-x.md']);
  });

  it('puts the index and the log entry back when git commit fails (a failing pre-commit hook)', async () => {
    const { chmodSync, mkdirSync } = await import('node:fs');
    const hooks = join(root, '.git', 'hooks');
    mkdirSync(hooks, { recursive: true });
    writeFileSync(join(hooks, 'pre-commit'), '#!/bin/sh\necho "hook says no" >&2\nexit 1\n');
    chmodSync(join(hooks, 'pre-commit'), 0o755);
    writeFileSync(join(wt, 'staged.txt'), 'staged\n');
    git(wt, 'add', 'staged.txt');
    writeFileSync(join(wt, 'unstaged.txt'), 'unstaged\n');
    const wtIndex = git(wt, 'rev-parse', '--git-path', 'index').trim();
    const indexBefore = readFileSync(resolve(wt, wtIndex));
    // git add writes blobs before the hook refuses: unreachable objects are the only trace.
    const before = snapshot(root, { objects: false });
    try {
      await expect(
        commitStep(flowCtx(wt), { worktree: wt, plan: 'demo', step: 'step-2', message: 'feat: hooked' }),
      ).rejects.toMatchObject({ code: 'CommitFailed', exitCode: 4, details: { cause: 'hook' } });
      expect(snapshot(root, { objects: false })).toBe(before);
      expect(readFileSync(resolve(wt, wtIndex)).equals(indexBefore)).toBe(true);
    } finally {
      const { rmSync } = await import('node:fs');
      rmSync(join(hooks, 'pre-commit'));
      git(wt, 'rm', '-q', '--cached', 'staged.txt');
      rmSync(join(wt, 'staged.txt'));
      rmSync(join(wt, 'unstaged.txt'));
    }
  });

  it('refuses NothingToCommit before writing anything', async () => {
    const before = snapshot(root);
    await expect(
      commitStep(flowCtx(wt), { worktree: wt, plan: 'demo', step: 'step-2', message: 'feat: nothing' }),
    ).rejects.toMatchObject({ code: 'NothingToCommit', exitCode: 4 });
    expect(snapshot(root)).toBe(before);
  });

  it('refuses the main checkout without --allow-main, and a step the plan does not have', async () => {
    writeFileSync(join(wt, 'beta.txt'), 'b\n');
    const before = snapshot(root);
    await expect(commitStep(flowCtx(root), { plan: 'demo', step: 'step-2', message: 'x' })).rejects.toMatchObject({
      code: 'MainCheckoutRefused',
      exitCode: 4,
    });
    await expect(
      commitStep(flowCtx(wt), { worktree: wt, plan: 'demo', step: 'step-9', message: 'x' }),
    ).rejects.toMatchObject({ code: 'StepNotFound', exitCode: 3 });
    expect(snapshot(root)).toBe(before);
  });

  it('refuses a worktree with a detached HEAD', async () => {
    git(wt, 'switch', '-q', '--detach');
    const before = snapshot(root);
    try {
      await expect(
        commitStep(flowCtx(wt), { worktree: wt, plan: 'demo', step: 'step-2', message: 'x' }),
      ).rejects.toMatchObject({ code: 'InvalidArgument', exitCode: 2 });
      expect(snapshot(root)).toBe(before);
    } finally {
      git(wt, 'switch', '-q', '-');
    }
  });

  it('still commits when strict completion refuses, and reports why (exit 0)', async () => {
    await claimOnly(flowCtx(root), wt, 'step-2'); // claimed, items still open
    const r = await commitStep(flowCtx(wt), { worktree: wt, plan: 'demo', step: 'step-2', message: 'feat: beta' });
    expect(r).toMatchObject({
      committed: true,
      state_updated: false,
      state_update_failed: true,
      state_failure_reason: 'open_items',
    });
    expect(r.state_error?.error.code).toBe('ChecklistIncomplete');
    expect(git(wt, 'log', '-1', '--format=%H').trim()).toBe(r.commit_hash);
    expect((await stepRows(flowCtx(root))).find((s) => s.anchor === 'step-2')?.status).toBe('claimed');
  });

  it('reports an ownership failure for a step it does not hold, and AttemptMismatch as ownership', async () => {
    writeFileSync(join(wt, 'gamma.txt'), 'g\n');
    const r = await commitStep(flowCtx(wt), {
      worktree: wt,
      plan: 'demo',
      step: 'step-2',
      message: 'feat: gamma',
      attempt: 99,
    });
    expect(r).toMatchObject({ state_update_failed: true, state_failure_reason: 'ownership' });
    expect(r.state_error?.error.code).toBe('AttemptMismatch');
    expect(existsSync(join(wt, '.tugtool/implementation-log/demo/step-2.md'))).toBe(true);
  });
});
