/**
 * The plan on the base branch during a run (docs/run.md §1 item 4.1): before each claim the run compares
 * the plan committed on the base branch with the structure it started from. Prose edits are fine; a
 * changed structure stops the run with PlanDrift, and running again takes the new plan over (its start
 * re-initialises the state from the base's blob and brings the base into the integration branch, §1.1
 * items 1–2). The base's blob is the one plan of a run: the start makes the state and the workers' trees
 * agree with it, and this watch keeps them from claiming once it moved.
 */
import { TugError } from '../contract/errors.js';
import type { RunSetup } from './context.js';

export interface DriftWatch {
  /** Throws PlanDrift when the base branch's plan has another structure than at the start. */
  check(): Promise<void>;
}

export async function watchDrift(rc: RunSetup): Promise<DriftWatch> {
  const { structureHash } = await import('../plan/structure.js');
  const spec = `refs/heads/${rc.prep.base}:${rc.prep.planPath}`;
  const { refTip } = await import('./refs.js');
  // The base tip from its ref file: the plan's blob is looked up only when the base moved.
  let baseTip = await refTip(rc.g, rc.flow.repo.commonDir, rc.flow.repo.mainRoot, rc.prep.base);
  const blobOf = async () =>
    (await rc.g.tryRun(['rev-parse', '--verify', '--quiet', spec], rc.flow.repo.mainRoot)).stdout.trim();
  // The blob id last seen with the starting structure; unknown until the base first moves (the plan's
  // structure is then compared once), which spares every run a git process at its start.
  let known: string | null = null;
  const structure = structureHash(rc.prep.plan);
  return {
    async check() {
      const tip = await refTip(rc.g, rc.flow.repo.commonDir, rc.flow.repo.mainRoot, rc.prep.base);
      if (tip === baseTip) return;
      baseTip = tip;
      const now = await blobOf();
      if (known !== null && now === known) return;
      const { showBlob } = await import('../git/refs.js');
      const { parsePlan } = await import('../plan/parse.js');
      const bytes = await showBlob(rc.g, rc.flow.repo.mainRoot, `refs/heads/${rc.prep.base}`, rc.prep.planPath);
      const changed = !bytes || structureHash(parsePlan(bytes)) !== structure;
      if (!changed) {
        known = now; // a prose edit: nothing to do
        return;
      }
      throw new TugError('PlanDrift', {
        plan_path: rc.prep.planPath,
        summary: `the plan on ${rc.prep.base} changed its structure during the run`,
        during_run: true,
      });
    },
  };
}
