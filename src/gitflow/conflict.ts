/**
 * A rebase stopped on a conflict in a worktree (docs/run.md §1.9): reading it (which paths are unmerged,
 * which integration commits touched them, which step's commit is being applied), checking a resolution (no
 * conflict markers), staging it, continuing the rebase without an editor, and getting out of it (abort;
 * a worktree a killed driver left mid-rebase is recognised from its admin directory).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { adminDirOf } from '../git/dot-git.js';
import type { GitRunner } from '../git/exec.js';
import { trailersFormat, TUG_STEP } from '../git/trailers.js';

/**
 * The rebase git has in progress in the worktree `W` (its admin directory says), or null: the branch it
 * will update (`refs/heads/…`) and the commit that branch was at (`orig-head`), when git wrote them.
 */
export function rebaseInProgress(W: string): { dir: string; headName: string | null; origHead: string | null } | null {
  const admin = adminDirOf(W);
  if (!admin) return null;
  const read = (f: string) => {
    try {
      return readFileSync(f, 'utf8').trim() || null;
    } catch {
      return null; // an interrupted start: not written yet
    }
  };
  for (const d of ['rebase-merge', 'rebase-apply']) {
    const dir = join(admin, d);
    if (!existsSync(dir)) continue;
    return { dir, headName: read(join(dir, 'head-name')), origHead: read(join(dir, 'orig-head')) };
  }
  return null;
}

/** The branch a rebase in progress in `W` will update (`refs/heads/` stripped), or null. */
export function rebasingBranchOf(W: string): string | null {
  const h = rebaseInProgress(W)?.headName;
  return h?.startsWith('refs/heads/') ? h.slice('refs/heads/'.length) : null;
}

/** The unmerged paths of the worktree's index. */
export async function unmergedFiles(g: GitRunner, W: string): Promise<string[]> {
  const r = await g.tryRun(['diff', '--name-only', '-z', '--diff-filter=U'], W);
  return [...new Set(r.stdout.split('\0').filter(Boolean))];
}

/**
 * Leaves a rebase in progress in `W`, if any: `git rebase --abort` (the branch back where it was); when
 * that fails, `--quit` and the branch checked out again. Returns whether there was one.
 */
export async function abortRebase(g: GitRunner, W: string): Promise<boolean> {
  const r = rebaseInProgress(W);
  if (!r) return false;
  if ((await g.tryRun(['rebase', '--abort'], W)).status === 0 && !rebaseInProgress(W)) return true;
  await g.tryRun(['rebase', '--quit'], W);
  const branch = r.headName?.startsWith('refs/heads/') ? r.headName.slice('refs/heads/'.length) : null;
  if (branch) await g.tryRun(['checkout', '--quiet', '--force', branch], W);
  return true;
}

/**
 * A line that opens (`<<<<<<< `), splits in diff3 style (`|||||||`) or closes (`>>>>>>> `) a conflict as git
 * writes it. Not `=======`: outside a conflict it is a heading's underline (Markdown, RST), and inside one
 * the conflict's `<<<<<<<` line comes first and is reported (docs/run.md §1.9).
 */
const MARKER = /^(?:<{7}|>{7}|\|{7})(?:[ \t]|$)/m;

/**
 * Conflict markers left in `files` (repo-relative, in the worktree `W`): `path:line` of the first one in
 * each file that has any. A file that is gone (the resolution deleted it) has none.
 */
export function conflictMarkers(W: string, files: string[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(join(W, f), 'utf8');
    } catch {
      continue;
    }
    const m = MARKER.exec(text);
    if (m) out.push(`${f}:${text.slice(0, m.index).split('\n').length}`);
  }
  return out;
}

/** Stage the resolution: every change of the worktree but the runtime files, as a step's commit does. */
export async function stageResolution(g: GitRunner, W: string): Promise<void> {
  const { stageAllButRuntime } = await import('./commit.js');
  await stageAllButRuntime(g, W);
}

/**
 * Back to the conflict as the rebase left it, before a resolver's next round: the index's unmerged
 * entries written out again with their markers (`checkout --merge`), every other change and untracked file
 * (not ignored) dropped. Only while nothing of the failed round was staged.
 */
export async function restoreConflict(g: GitRunner, W: string): Promise<void> {
  await g.run(['checkout', '--quiet', '--merge', '--', '.'], W);
  await g.run(['clean', '-fdq'], W);
}

export type ContinueOutcome =
  | { done: true }
  /** The next commit of the rebase conflicted too. */
  | { done: false; files: string[] }
  /** Failed without a conflict (a hook): git's message. */
  | { done: false; files: []; error: string };

/**
 * `git rebase --continue` with no editor (GIT_EDITOR and core.editor `true`: the commit keeps its message
 * and trailers), through `rg` (the driver's bounded runner: a hook counts against the step's time).
 */
export async function continueRebase(
  rg: GitRunner,
  g: GitRunner,
  W: string,
  o: { notesRewrite?: boolean | undefined } = {},
): Promise<ContinueOutcome> {
  const r = await rg.tryRun(
    [
      '-c',
      'core.editor=true',
      ...(o.notesRewrite === false ? ['-c', 'notes.rewrite.rebase=false'] : []),
      'rebase',
      '--continue',
    ],
    W,
    { env: { GIT_EDITOR: 'true' } },
  );
  if (r.status === 0 && !rebaseInProgress(W)) return { done: true };
  const files = await unmergedFiles(g, W);
  if (files.length > 0) return { done: false, files };
  return { done: false, files: [], error: (r.stderr || r.stdout).trim() || `git rebase --continue exited ${r.status}` };
}

/** The Tug-Step trailers of `commit` (`REBASE_HEAD`: the commit a stopped rebase is applying). */
export async function stepsOf(g: GitRunner, W: string, commit: string): Promise<string[]> {
  const r = await g.tryRun(
    ['log', '-1', `--format=${trailersFormat([TUG_STEP], { valueOnly: true, separator: '%x1f' })}`, commit],
    W,
  );
  if (r.status !== 0) return [];
  return r.stdout
    .split('\x1f')
    .map((s) => s.trim().replace(/^#/, ''))
    .filter(Boolean);
}

/** One integration commit that touched a conflicted file. */
export interface IntegratedCommit {
  /** Its `Tug-Step` (the first, when several), or null. */
  step_anchor: string | null;
  commit: string;
  subject: string;
}

/**
 * The commits of `onto` since the step's base (the merge base of `onto` and `head`, the step's commits
 * before the rebase) that touched any of `files`, oldest first, at most `max`.
 */
export async function integratedTouching(
  g: GitRunner,
  W: string,
  o: { onto: string; head: string; files: string[]; max?: number },
): Promise<IntegratedCommit[]> {
  if (o.files.length === 0) return [];
  const base = (await g.tryRun(['merge-base', o.onto, o.head], W)).stdout.trim();
  const range = base ? `${base}..${o.onto}` : o.onto;
  const fmt = `%H%x00%s%x00${trailersFormat([TUG_STEP], { valueOnly: true, separator: '%x1f' })}%x1e`;
  const r = await g.tryRun(
    ['log', '--reverse', `--format=${fmt}`, `--max-count=${o.max ?? 50}`, range, '--', ...o.files],
    W,
  );
  if (r.status !== 0) return [];
  return r.stdout
    .split('\x1e')
    .map((rec) => rec.replace(/^\n+/, ''))
    .filter(Boolean)
    .map((rec) => {
      const [commit, subject, steps] = rec.split('\0');
      const step = (steps ?? '')
        .split('\x1f')
        .map((s) => s.trim().replace(/^#/, ''))
        .find(Boolean);
      return { step_anchor: step ?? null, commit: commit!, subject: subject ?? '' };
    });
}
