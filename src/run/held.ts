/**
 * Steps held outside the run (docs/run.md §1.4): claimed by a worktree that is none of this run's workers
 * (a `tugcode state claim` by hand, an agent in its own worktree). A waiting worker and the summary name
 * the holder and its lease, so the user knows whom the run waits on and how to free the step.
 */
import { basename, dirname } from 'node:path';
import { TUGTREE_DIR, workerOfDir } from '../contract/layout.js';
import type { ShowStep } from '../state/index.js';
import type { RunSetup } from './context.js';
import { stateCallIn } from './context.js';
import type { HeldElsewhere } from './types.js';

/** Whether `owner` is one of this run's worker trees (`.tugtree/tugplan__<slug>--w<k>`, worktrees.ts). */
function isWorkerTree(rc: RunSetup, owner: string): boolean {
  return basename(dirname(owner)) === TUGTREE_DIR && workerOfDir(basename(owner), rc.prep.slug) !== null;
}

/** Of `steps` (shown by `state show`), those in `anchors` held by an owner outside this run. */
export function heldElsewhereOf(rc: RunSetup, steps: ShowStep[], anchors: string[]): HeldElsewhere[] {
  const want = new Set(anchors);
  return steps
    .filter((s) => want.has(s.anchor) && s.claimed_by !== null && !isWorkerTree(rc, s.claimed_by))
    .map((s) => ({
      step_anchor: s.anchor,
      owner: s.claimed_by!,
      lease_expires_at: s.lease_expires_at,
      lease_expired: s.lease_expired,
    }));
}

/** The claimed steps a waiting worker waits on that an owner outside the run holds (one state read). */
export async function heldElsewhere(rc: RunSetup, anchors: string[]): Promise<HeldElsewhere[]> {
  if (anchors.length === 0) return [];
  // Only words for the waiting line: a read that fails leaves them out, the worker waits on as before.
  const show = await rc.store
    .show(stateCallIn(rc, rc.flow.repo.mainRoot), { plan: rc.prep.planPath, items: 'none' })
    .catch(() => null);
  return heldElsewhereOf(rc, show?.plans[0]?.steps ?? [], anchors);
}
