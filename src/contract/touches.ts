/**
 * Ready steps a claim passed over because their Touches overlap a running step's (docs/state.md §3.12):
 * the shape `state claim` answers and the run's `waiting` event carries, and its one line of text.
 */

export interface TouchesHeld {
  step_anchor: string;
  /** The running step whose Touches overlap. */
  overlaps: string;
}

/** `step-3 (overlaps step-2), step-4 (overlaps step-2)`. */
export function touchesHeldText(held: readonly TouchesHeld[]): string {
  return held.map((h) => `${h.step_anchor} (overlaps ${h.overlaps})`).join(', ');
}
