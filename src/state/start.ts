/** `state start` (docs/state.md §3–§4): claimed → in_progress; a substep pending → in_progress. */
import { recordEvent } from './record.js';
import type { StateContext } from './context.js';
import { checkOwner, findStep, invalidTransition, ownerPlan, stepArg, OWNER_TX } from './owner.js';
import { startSub, startTop } from './queries/steps.js';
import { isHeld } from './status.js';

export interface OwnerInput {
  plan: string;
  step: string;
  /** Canonical worktree path of the caller. */
  worktree: string;
  /** Fencing token: refused when it is not the top-level step's current attempt. */
  attempt?: number | undefined;
}

export interface StartResult {
  started: boolean;
  step_anchor: string;
  started_at: string;
  already_started: boolean;
}

export async function start(ctx: StateContext, input: OwnerInput): Promise<StartResult> {
  const anchor = stepArg(input.step);
  const { ref, store } = await ownerPlan(ctx, input);
  const plan_path = ref.plan_path;
  return store.write(async (c) => {
    const now = ctx.clock.now();
    const s = await findStep(c, plan_path, anchor, { lock: true });
    await checkOwner(c, plan_path, s, input.worktree, input.attempt);
    const { step, top } = s;
    if (step.status === 'in_progress')
      return { started: true, step_anchor: anchor, started_at: step.started_at ?? now, already_started: true };
    const startedTop: string[] = [];
    if (step.parent_anchor === null) {
      if (step.status !== 'claimed')
        throw invalidTransition(plan_path, step, `${anchor} is ${step.status}; only a claimed step can start`);
      startTop(c, { plan_path, anchor, worktree: input.worktree, attempt: top.attempt, now });
    } else {
      if (!isHeld(top.status))
        throw invalidTransition(plan_path, step, `the top-level step ${top.anchor} is ${top.status}`, {
          top_anchor: top.anchor,
        });
      if (step.status !== 'pending')
        throw invalidTransition(plan_path, step, `${anchor} is ${step.status}; only a pending substep can start`);
      startSub(c, { plan_path, anchor, now });
      if (top.status === 'claimed') {
        startTop(c, { plan_path, anchor: top.anchor, worktree: input.worktree, attempt: top.attempt, now });
        startedTop.push(top.anchor);
      }
    }
    recordEvent(ctx, c, {
      at: now,
      plan_path,
      step_anchor: anchor,
      actor: input.worktree,
      attempt: top.attempt,
      details: { started: anchor, also_started: startedTop },
    });
    return { started: true, step_anchor: anchor, started_at: now, already_started: false };
  }, OWNER_TX);
}
