/**
 * A step's artifacts for reading (the board's step detail, docs/board.md §4): those of a top-level step and its
 * substeps, the latest first cut to `limit`, each content cut to `content_max` characters. Read-only.
 */
import type { StateContext } from './context.js';
import { findStep, stepArg } from './owner.js';
import { requirePlanRow, resolvePlanRef } from './plan-ref.js';
import { artifactsOfTop, type ArtifactListRow } from './queries/artifacts.js';

export interface ArtifactsInput {
  plan: string;
  step: string;
  limit: number;
  content_max: number;
}

export type ListedArtifact = ArtifactListRow;

export async function artifacts(ctx: StateContext, input: ArtifactsInput): Promise<{ artifacts: ListedArtifact[] }> {
  const anchor = stepArg(input.step);
  const ref = await resolvePlanRef(ctx, input.plan);
  await requirePlanRow(ctx, ref);
  const store = ctx.store!;
  return store.read(async (c) => {
    const s = await findStep(c, ref.plan_path, anchor);
    const rows = await artifactsOfTop(c, {
      plan_path: ref.plan_path,
      top_anchor: s.top.anchor,
      limit: input.limit,
      content_max: input.content_max,
    });
    return { artifacts: rows };
  });
}
