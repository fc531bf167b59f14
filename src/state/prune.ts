/**
 * `state prune [--dry-run] [--purge]` (docs/state.md §4): plans whose file is gone from the main root and from
 * every worktree become `archived` (rows kept); `--purge` deletes their rows and events, leaving the prune
 * event itself (plan_path NULL) so `state log` shows the purge. The caller lists the work trees.
 */
import type { PlanRow } from './types.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { recordEvent } from './record.js';
import type { StateContext } from './context.js';
import { listPlans, purgePlan, setPlanStatus } from './queries/plans.js';

export interface PruneInput {
  /** Roots of the main checkout and of every linked worktree. */
  work_trees: string[];
  dry_run?: boolean | undefined;
  purge?: boolean | undefined;
}

export async function prune(ctx: StateContext, input: PruneInput): Promise<{ pruned: string[]; dry_run: boolean }> {
  const dry_run = Boolean(input.dry_run);
  const store = ctx.store;
  if (!store) return { pruned: [], dry_run };
  const roots = [...new Set([ctx.repoRoot, ...input.work_trees])];
  const gone = (plan_path: string) => !roots.some((r) => existsSync(join(r, ...plan_path.split('/'))));
  // File checks happen before the transaction; inside it the candidates are re-read.
  const candidates = (await store.read((c) => listPlans(c))).filter((p) => gone(p.plan_path)).map((p) => p.plan_path);
  const pick = (plans: PlanRow[]) =>
    plans
      .filter((p) => candidates.includes(p.plan_path) && (input.purge || p.status !== 'archived'))
      .map((p) => p.plan_path);
  if (dry_run) return { pruned: await store.read(async (c) => pick(await listPlans(c))), dry_run };
  return store.write(async (c) => {
    const now = ctx.clock.now();
    const pruned = pick(await listPlans(c));
    if (pruned.length === 0) return { pruned, dry_run };
    for (const p of pruned) {
      if (input.purge) await purgePlan(c, p);
      else await setPlanStatus(c, p, 'archived', now);
    }
    recordEvent(ctx, c, {
      at: now,
      plan_path: null,
      step_anchor: null,
      actor: 'admin',
      attempt: null,
      details: input.purge ? { purged: pruned } : { archived: pruned },
    });
    return { pruned, dry_run };
  });
}
