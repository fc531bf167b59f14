/**
 * How the driver integrates a step whose worktree started from a tip that has moved on (06-run.md §1 item
 * 4.7): its one commit is replayed onto the new tip (merge-tree + commit-tree) rather than rebased, keeping
 * the message, trailers, author and author date; a repository with a hook that only a rebase runs
 * (`post-rewrite`) gets the rebase, so the hook keeps firing. Two workers whose implementers wait for each
 * other start from the same tip, so the second integration always finds the tip moved.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../helpers/repo.js';
import { sql } from '../state/helpers.js';
import { nodeImplementer, planText, runJsonl, runRepo, step, stepCommits } from './helpers.js';

const AUTHOR = {
  GIT_AUTHOR_NAME: 'Ada Lovelace',
  GIT_AUTHOR_EMAIL: 'ada@example.invalid',
  GIT_AUTHOR_DATE: '1700000000 +0130',
  GIT_COMMITTER_NAME: 'Run Bot',
  GIT_COMMITTER_EMAIL: 'bot@example.invalid',
};

/** Steps 1 and 2 wait for each other before writing, so both start from the same integration tip. */
function pairedRun(root: string, env: Record<string, string> = {}) {
  const impl = nodeImplementer(`
writeFileSync(join(wt, step + '.txt'), step + '\\n');
if (step === 'step-1' || step === 'step-2') {
  mkdirSync(join(dir, 'barrier'), { recursive: true });
  writeFileSync(join(dir, 'barrier', step), '');
  const end = Date.now() + 20000;
  while (readdirSync(join(dir, 'barrier')).length < 2 && Date.now() < end) await sleep(20);
}
`);
  const trace = join(tempDir('tugcode-trace-'), 'trace.jsonl');
  const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv], {
    ...AUTHOR,
    ...env,
    TUGCODE_RUN_TRACE: trace,
  });
  const spans = existsSync(trace)
    ? readFileSync(trace, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { name: string; step: string })
    : [];
  return { ...r, spans };
}

const plan = planText([step(1, 'Left'), step(2, 'Right'), step(3, 'Third', { deps: [1, 2] })]);

describe('tugcode run: integrating onto a moved tip', () => {
  it('replays the commit: same message, trailers, author and date; linear history; state has the new hashes', () => {
    const root = runRepo(plan);
    const r = pairedRun(root);
    expect(r.events.at(-1), r.stderr + r.stdout).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
    // No integration needed a rebase: the second of the pair was replayed.
    expect(r.spans.filter((s) => s.name === 'integrate.rebase')).toEqual([]);
    expect(r.spans.filter((s) => s.name === 'integrate.replay').length).toBe(3);

    const integ = 'tugplan/demo';
    expect(stepCommits(root, integ).sort()).toEqual(['step-1', 'step-2', 'step-3']);
    // Linear: every commit since main has one parent, and each step's files are all there.
    expect(git(root, 'rev-list', '--min-parents=2', `main..${integ}`).trim()).toBe('');
    expect(git(root, 'rev-list', '--count', `main..${integ}`).trim()).toBe('3');
    for (const s of ['step-1', 'step-2', 'step-3']) expect(git(root, 'show', `${integ}:${s}.txt`)).toBe(`${s}\n`);
    const log = git(
      root,
      'log',
      '--format=%an%x1f%ae%x1f%ad%x1f%cn%x1f%s%x1f%(trailers:key=Tug-Step,valueonly)%x1e',
      '--date=raw',
      `main..${integ}`,
    );
    const records = log
      .split('\x1e')
      .map((r) => r.trim())
      .filter(Boolean);
    expect(records).toHaveLength(3);
    for (const record of records) {
      const [an, ae, ad, cn, subject, trailer] = record.split('\x1f');
      expect({ an, ae, ad, cn }).toEqual({
        an: 'Ada Lovelace',
        ae: 'ada@example.invalid',
        ad: '1700000000 +0130',
        cn: 'Run Bot',
      });
      expect(subject).toMatch(/^feat: (left|right|third)$/);
      expect(trailer?.trim()).toMatch(/^step-[123]$/);
    }
    // The recorded commit of every step is the one on the integration branch.
    const onBranch = new Set(git(root, 'rev-list', `main..${integ}`).trim().split('\n'));
    const rows = sql(root, "SELECT anchor, commit_hash FROM steps WHERE plan_path = '.tugtool/tugplan-demo.md'") as {
      anchor: string;
      commit_hash: string;
    }[];
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(onBranch.has(row.commit_hash)).toBe(true);
  });

  it('rebases instead when a post-rewrite hook exists, and the hook runs', () => {
    const root = runRepo(plan);
    const marker = join(tempDir('tugcode-hook-'), 'rewritten');
    const hook = join(root, '.git', 'hooks', 'post-rewrite');
    writeFileSync(hook, `#!/bin/sh\ncat >> ${JSON.stringify(marker)}\n`);
    chmodSync(hook, 0o755);
    const r = pairedRun(root);
    expect(r.events.at(-1), r.stderr + r.stdout).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.spans.filter((s) => s.name === 'integrate.rebase').length).toBeGreaterThanOrEqual(1);
    expect(readFileSync(marker, 'utf8')).toMatch(/^[0-9a-f]{40} [0-9a-f]{40}/);
    expect(stepCommits(root, 'tugplan/demo').sort()).toEqual(['step-1', 'step-2', 'step-3']);
  });
});
