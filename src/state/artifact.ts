/**
 * `state artifact` (docs/state.md §4): the owner records an audit breadcrumb. The summary is cut to 500 code
 * points and the content to 64 KiB of code points (never splitting a character).
 */
import { TugError } from '../contract/errors.js';
import { recordEvent } from './record.js';
import type { StateContext } from './context.js';
import { checkOwner, checkText, findStep, ownerPlan, stepArg, OWNER_TX } from './owner.js';
import { insertArtifact } from './queries/events.js';
import {
  ARTIFACT_KINDS,
  CONTENT_MAX_CODE_POINTS,
  SUMMARY_MAX_CODE_POINTS,
  truncateCodePoints,
  type ArtifactKind,
} from './status.js';

export { truncateCodePoints };
import type { OwnerInput } from './start.js';

export interface ArtifactInput extends OwnerInput {
  kind: string;
  summary: string;
  content?: string | undefined;
}

export interface ArtifactResult {
  recorded: boolean;
  step_anchor: string;
  kind: ArtifactKind;
  artifact_id: number;
  truncated: boolean;
}

export async function artifact(ctx: StateContext, input: ArtifactInput): Promise<ArtifactResult> {
  const anchor = stepArg(input.step);
  if (!(ARTIFACT_KINDS as readonly string[]).includes(input.kind)) {
    throw new TugError('InvalidArgument', {
      reason: `unknown artifact kind ${JSON.stringify(input.kind)}; expected one of ${ARTIFACT_KINDS.join(', ')}`,
      argument: '--kind',
    });
  }
  const kind = input.kind as ArtifactKind;
  checkText('summary', input.summary, { nonEmpty: true });
  if (input.content !== undefined) checkText('content', input.content);
  const summary = truncateCodePoints(input.summary, SUMMARY_MAX_CODE_POINTS);
  const content = input.content === undefined ? null : truncateCodePoints(input.content, CONTENT_MAX_CODE_POINTS);
  const truncated = summary.truncated || Boolean(content?.truncated);
  const { ref, store } = await ownerPlan(ctx, input);
  const plan_path = ref.plan_path;
  return store.write(async (c) => {
    const now = ctx.clock.now();
    const s = await findStep(c, plan_path, anchor, { lock: true });
    await checkOwner(c, plan_path, s, input.worktree, input.attempt);
    const id = await insertArtifact(c, {
      plan_path,
      step_anchor: anchor,
      kind,
      summary: summary.text,
      content: content?.text ?? null,
      recorded_at: now,
    });
    recordEvent(ctx, c, {
      at: now,
      plan_path,
      step_anchor: anchor,
      actor: input.worktree,
      attempt: s.top.attempt,
      details: { artifact_id: id, kind, truncated },
    });
    return { recorded: true, step_anchor: anchor, kind, artifact_id: id, truncated };
  }, OWNER_TX);
}
