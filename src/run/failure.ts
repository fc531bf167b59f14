/** How an attempt ends early (docs/run.md §1 item 4.9–4.10): a failure with its reason code, or an abort. */
import type { ChildOutcome, FailCode } from './types.js';

export class StepFailure extends Error {
  constructor(
    readonly code: FailCode,
    readonly reason: string,
    readonly output: ChildOutcome | null = null,
    readonly artifact: 'coder_report' | 'verification_report' = 'coder_report',
    /**
     * The files that hold the output of the agent run that failed the attempt (absolute paths; those that
     * exist are named): a reviewer's or a resolver's. Left out: the attempt's implementer logs.
     */
    readonly logs?: string[],
  ) {
    super(`${code}: ${reason}`);
  }
}

/** The claim was lost or the run is stopping: no commit, no fail. */
export class Aborted extends Error {}
