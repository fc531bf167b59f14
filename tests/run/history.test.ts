/**
 * The settle check's memory of the integration branch (src/run/history.ts): its "no" agrees with the
 * `git log -E --grep='^Tug-Step: *#?<step> *$'` it replaces, for the start tip's history (one git scan) and
 * for the commits the tip moves on by (read from their loose objects); anything the files cannot account
 * for is left to git ("maybe").
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitRunner } from '../../src/git/exec.js';
import { resolveRepo } from '../../src/git/repo.js';
import { stepHistory, stepNamedBy } from '../../src/run/history.js';
import { stepTrailerGrep } from '../../src/git/trailers.js';
import { git, tempRepo } from '../helpers/repo.js';

const g = gitRunner(process.env);
const STEPS = Array.from({ length: 14 }, (_, i) => `step-${i + 1}`);

/** A commit on the checked-out branch with `message` (as is, no cleanup). */
function commit(root: string, message: string, file = `f${Math.random()}`): string {
  writeFileSync(join(root, file), message);
  git(root, 'add', '-A');
  writeFileSync(join(root, '..', 'msg'), message);
  git(root, 'commit', '-q', '--cleanup=verbatim', '-F', join(root, '..', 'msg'));
  return git(root, 'rev-parse', 'HEAD').trim();
}

/** Whether the settle check's git grep finds a commit naming `step` on `ref`. */
function gitNames(root: string, step: string, ref = 'main'): boolean {
  return git(root, 'log', '-1', '--format=%H', '-E', `--grep=${stepTrailerGrep(step)}`, ref).trim() !== '';
}

/** Messages around the grep's edges: which lines name which step, and which name none. */
const MESSAGES = [
  'feat: one\n\nTug-Step: step-1\nTug-Plan: .tugtool/tugplan-x.md\n',
  'feat: two\n\nTug-Step:#step-2\n',
  'feat: three\n\nTug-Step:    step-3   \n',
  'feat: four\n\nTug-Step: # step-4\n', // a space after `#`: no
  'feat: five\n\ntug-step: step-5\n', // the key's case: no
  'feat: six\r\n\r\nTug-Step: step-6\r\n', // CRLF: the `\r` stays, no
  'Tug-Step: step-7\n', // the subject line counts too
  'feat: eight\n\n  Tug-Step: step-8\n', // indented: no
  'feat: nine\n\nTug-Step: step-9 and more\n', // more after the step: no
  'feat: ten\n\nSee Tug-Step: step-10\n', // not at the line's start: no
  'feat: eleven\n\nTug-Step: step-11\nTug-Step: #step-12\n',
  'feat: thirteen\n\nTug-Step: step-13\tx\n', // a tab: no
];

describe('the settle check from memory (history.ts)', () => {
  it('names exactly the steps whose line the settle grep matches', () => {
    const lines = MESSAGES.flatMap((m) => m.split('\n'));
    const named = new Set(lines.map(stepNamedBy).filter((s): s is string => s !== null));
    for (const s of STEPS) {
      const grep = new RegExp(stepTrailerGrep(s));
      expect(named.has(s), s).toBe(MESSAGES.some((m) => m.split('\n').some((l) => grep.test(l))));
    }
  });

  it("agrees with git for the start tip's history and for commits the tip moves on by", async () => {
    const root = tempRepo();
    const repo = resolveRepo(root, process.env);
    // Half the messages before the start (the git scan), half after (read from the loose objects).
    for (const m of MESSAGES.slice(0, 6)) commit(root, m);
    const h = stepHistory(g, repo, 'main', git(root, 'rev-parse', 'main').trim());
    for (const s of STEPS) expect(await h.mayName(s), s).toBe(gitNames(root, s));
    for (const m of MESSAGES.slice(6)) {
      commit(root, m);
      for (const s of STEPS) expect(await h.mayName(s), s).toBe(gitNames(root, s));
    }
    // A merge of a side branch the run never saw: both parents are read.
    git(root, 'switch', '-q', '-c', 'side', 'main~3');
    commit(root, 'side\n\nTug-Step: step-14\n');
    git(root, 'switch', '-q', 'main');
    git(root, 'merge', '-q', '--no-ff', '-m', 'merge side', 'side');
    for (const s of STEPS) expect(await h.mayName(s), s).toBe(gitNames(root, s));
  });

  it('leaves to git what the loose objects cannot account for', async () => {
    const root = tempRepo();
    const repo = resolveRepo(root, process.env);
    const h = stepHistory(g, repo, 'main', git(root, 'rev-parse', 'main').trim());
    expect(await h.mayName('step-1')).toBe(false);
    // Packed: the new commits are not loose any more.
    commit(root, 'feat: x\n\nTug-Step: step-2\n');
    git(root, 'gc', '-q');
    expect(await h.mayName('step-1')).toBe(true);
    expect(gitNames(root, 'step-1')).toBe(false);
    // A message in another encoding.
    const root2 = tempRepo();
    const h2 = stepHistory(g, resolveRepo(root2, process.env), 'main', git(root2, 'rev-parse', 'main').trim());
    git(root2, 'config', 'i18n.commitEncoding', 'ISO-8859-1');
    commit(root2, 'feat: y\n');
    expect(await h2.mayName('step-1')).toBe(true);
    // More commits than one walk reads.
    const root3 = tempRepo();
    const h3 = stepHistory(g, resolveRepo(root3, process.env), 'main', git(root3, 'rev-parse', 'main').trim());
    for (let i = 0; i < 70; i++) git(root3, 'commit', '-q', '--allow-empty', '-m', `c${i}`);
    expect(await h3.mayName('step-1')).toBe(true);
    // A failed scan (the start tip does not exist): every answer is git's.
    const h4 = stepHistory(g, repo, 'main', '0'.repeat(40));
    expect(await h4.mayName('step-1')).toBe(true);
  });
});
