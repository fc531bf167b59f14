/**
 * Commits carrying Tug-Step / Tug-Plan trailers, read with git's own trailer parser (`%(trailers:…)`),
 * for merge verification and for the reconcile calls of worktree create.
 */
import { git } from './exec.js';

export interface TrailerCommit {
  hash: string;
  /** Committer time, seconds since the epoch. */
  committer_time: number;
  steps: string[];
  plans: string[];
}

const FORMAT = '%H%x00%ct%x00%(trailers:key=Tug-Step,valueonly,separator=%x1f)%x00%(trailers:key=Tug-Plan,valueonly,separator=%x1f)%x1e';

/** Commits reachable from `refs` that carry at least one Tug-Step trailer, newest first (git log order). */
export function scanTrailerCommits(cwd: string, refs: string[]): TrailerCommit[] {
  if (refs.length === 0) return [];
  const out = git(['log', `--format=${FORMAT}`, ...refs, '--'], cwd);
  const commits: TrailerCommit[] = [];
  for (const rec of out.split('\x1e')) {
    const r = rec.replace(/^\n/, '');
    if (!r) continue;
    const [hash, ct, steps, plans] = r.split('\0');
    if (!hash || !steps) continue;
    commits.push({
      hash,
      committer_time: Number(ct),
      steps: steps.split('\x1f').map((s) => s.trim().replace(/^#/, '')).filter(Boolean),
      plans: (plans ?? '').split('\x1f').map((s) => s.trim()).filter(Boolean),
    });
  }
  return commits;
}

/** The newest commit reachable from `ref` whose trailers name this plan and step. */
export function findStepCommit(commits: TrailerCommit[], planPath: string, step: string): TrailerCommit | null {
  return commits.find((c) => c.steps.includes(step) && c.plans.includes(planPath)) ?? null;
}
