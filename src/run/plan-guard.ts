/**
 * The run's contract inside a worker's worktree (docs/run.md §2, docs/agents.md §1): the running plan and
 * `.tugtool/config.toml`. An implementer or resolver may change any file of its worktree but these; one that
 * changes them fails its attempt `PlanEdited`, and the worker's next reset discards the edit, so it never
 * reaches the integration branch (nor, by `merge`, the base). Other files under `.tugtool/` — another plan,
 * a new plan for later work — are the step's files like any other.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CONFIG_FILE } from '../contract/layout.js';
import { StepFailure } from './failure.js';
import type { ChildOutcome } from './types.js';

/** Repo-relative path → content hash ('missing' when absent). */
export type ContractSnapshot = Map<string, string>;

/** The contract files of a run of `planPath` (repo-relative). */
export function contractFiles(planPath: string): string[] {
  return [planPath, CONFIG_FILE];
}

/** The contract files' contents in worktree `W`, as hashes; null when the worktree is gone. */
export async function snapshotContract(W: string, planPath: string): Promise<ContractSnapshot | null> {
  const tree = await stat(W).catch(() => null);
  if (!tree?.isDirectory()) return null;
  const out: ContractSnapshot = new Map();
  await Promise.all(
    contractFiles(planPath).map(async (p) => {
      const body = await readFile(join(W, p)).catch(() => null);
      out.set(p, body === null ? 'missing' : createHash('sha1').update(body).digest('hex'));
    }),
  );
  return out;
}

/**
 * The contract files that differ between two snapshots, in contractFiles order. A worktree that is gone
 * (null) edited nothing: the worktree's own check says what happened (WorktreeBroken).
 */
export function contractChanges(before: ContractSnapshot | null, after: ContractSnapshot | null): string[] {
  if (before === null || after === null) return [];
  return [...before.keys()].filter((p) => before.get(p) !== after.get(p));
}

/** The attempt's `PlanEdited` failure: `by` (the implementer, the resolver) changed `changed` in its worktree. */
export function planEditFailure(o: {
  step: string;
  attempt: number;
  by: string;
  changed: string[];
  out: ChildOutcome;
  logs?: string[];
}): StepFailure {
  return new StepFailure(
    'PlanEdited',
    `${o.step}: ${o.by} of attempt ${o.attempt} changed ${o.changed.join(' and ')} in its worktree; the running ` +
      `plan and .tugtool/config.toml are the run's contract and change only by people: the edit is discarded ` +
      `(to change the plan, edit it in the main checkout and commit it, then run again)`,
    o.out,
    'coder_report',
    o.logs,
  );
}
