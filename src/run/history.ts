/**
 * The settle check of a claimed step (docs/run.md §1.5) answered from memory: which steps the messages of
 * the integration branch's history name in a `Tug-Step:` line, exactly as the check's `git log -E
 * --grep='^Tug-Step: *#?<step> *$'` matches them. One git scan of the start tip's history; after that, the
 * commits a tip moved on by (this run's integrations, or anyone's) are read from their loose objects, back
 * to a commit already read. Only a "no" is answered here: a step some line names, or a tip the files
 * cannot account for (a packed object, a long or merged history, grafts or replace refs), is left to git,
 * as before. Local runs only (`--remote` settles its own way).
 */
import { join } from 'node:path';
import { looseCommit, parentsRewritten } from '../git/ancestry.js';
import type { GitRunner } from '../git/exec.js';
import { refTip } from '../git/ref-files.js';
import type { Repo } from '../git/repo.js';
import { TUG_STEP } from '../git/trailers.js';

/** Commits read from the files to account for one move of the tip before git is asked instead. */
const WALK_LIMIT = 64;

const PREFIX = `${TUG_STEP}:`;

/**
 * The step a message line names for the settle grep, or null: `^Tug-Step: *#?<step> *$` matches the line
 * for exactly this `<step>` (anchors are [a-z0-9-], docs/plan-format.md).
 */
export function stepNamedBy(line: string): string | null {
  if (!line.startsWith(PREFIX)) return null;
  const value = line.slice(PREFIX.length).replace(/^ +/, '').replace(/ +$/, '');
  return value.startsWith('#') ? value.slice(1) : value;
}

/** Every step the lines of `text` name (stepNamedBy), added to `out`. */
function addNamed(text: string, out: Set<string>): void {
  for (const line of text.split('\n')) {
    const s = stepNamedBy(line);
    if (s !== null) out.add(s);
  }
}

export interface StepHistory {
  /**
   * false: no commit in the history of the branch's tip has a line naming `step` (the settle grep would
   * find nothing); true: one may have (ask git).
   */
  mayName(step: string): Promise<boolean>;
}

/**
 * The history of `branch` as of its tip `tip`, scanned in the background (awaited by the first question).
 * A failed scan leaves every answer to git.
 */
export function stepHistory(g: GitRunner, repo: Repo, branch: string, tip: string): StepHistory {
  /** Commits whose whole history was read. */
  const known = new Set<string>();
  /** Every step a line of those histories names. */
  const named = new Set<string>();
  const scan = g
    .run(['log', '-E', `--grep=^${PREFIX}`, '--format=%B', tip, '--'], repo.mainRoot)
    .then((out) => {
      addNamed(out, named);
      known.add(tip);
      return true;
    })
    .catch(() => false);
  const objects = join(repo.commonDir, 'objects');
  /** Reads the commits from `head` back to known ones; false when the files cannot account for them all. */
  const account = (head: string): boolean => {
    if (known.has(head)) return true;
    if (parentsRewritten(repo.commonDir)) return false;
    const seen = new Set<string>();
    const found = new Set<string>();
    const todo = [head];
    while (todo.length > 0) {
      const c = todo.pop()!;
      if (known.has(c) || seen.has(c)) continue;
      seen.add(c);
      if (seen.size > WALK_LIMIT) return false;
      const commit = looseCommit(objects, c);
      if (!commit || commit.encoded) return false;
      addNamed(commit.message.toString('utf8'), found);
      todo.push(...commit.parents);
    }
    for (const c of seen) known.add(c);
    for (const s of found) named.add(s);
    return true;
  };
  return {
    async mayName(step) {
      if (!(await scan)) return true;
      const tip = await refTip(g, repo.commonDir, repo.mainRoot, branch);
      if (tip === null || !account(tip)) return true;
      return named.has(step);
    },
  };
}
