/**
 * `state heartbeat` (docs/state.md §3–§4): renew the lease of the top-level step. An expired lease is
 * revived (expiry alone changes nothing until another worktree takes the step over); only a revival
 * appends an event.
 */
import { addSeconds } from '../clock.js';
import { leaseSeconds } from './lease.js';
import { recordEvent } from './record.js';
import type { StateContext } from './context.js';
import { checkOwner, findStep, invalidTransition, ownerPlan, stepArg, OWNER_TX } from './owner.js';
import { renewLease } from './queries/steps.js';
import { isExpired, isHeld } from './status.js';
import type { OwnerInput } from './start.js';

export interface HeartbeatInput extends OwnerInput {
  lease_seconds?: number | undefined;
}

export interface HeartbeatResult {
  renewed: boolean;
  step_anchor: string;
  lease_expires_at: string;
}

export async function heartbeat(ctx: StateContext, input: HeartbeatInput): Promise<HeartbeatResult> {
  const anchor = stepArg(input.step);
  const { ref, store } = await ownerPlan(ctx, input);
  const plan_path = ref.plan_path;
  const seconds = leaseSeconds(ctx.config, input.lease_seconds);
  return store.write(async (c) => {
    const now = ctx.clock.now();
    const s = await findStep(c, plan_path, anchor, { lock: true });
    await checkOwner(c, plan_path, s, input.worktree, input.attempt);
    const { top } = s;
    if (!isHeld(top.status))
      throw invalidTransition(
        plan_path,
        top,
        `${top.anchor} is ${top.status}; only a claimed or in-progress step has a lease`,
      );
    const lease = addSeconds(now, seconds);
    const revived = isExpired(top.lease_expires_at, now);
    await renewLease(c, { plan_path, anchor: top.anchor, worktree: input.worktree, now, lease, heartbeat: true });
    if (revived) {
      recordEvent(ctx, c, {
        at: now,
        plan_path,
        step_anchor: top.anchor,
        actor: input.worktree,
        attempt: top.attempt,
        details: { revived: true, expired_at: top.lease_expires_at, lease_expires_at: lease },
      });
    }
    return { renewed: true, step_anchor: anchor, lease_expires_at: lease };
  }, OWNER_TX);
}
