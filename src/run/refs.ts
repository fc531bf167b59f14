/**
 * A branch tip read from the ref files themselves (loose ref, then packed-refs): the driver reads the
 * integration tip and the base tip around every step, and a git process for each read cost ~6 ms. The
 * reader lives with the other file readers of the git flows (src/git/ref-files.ts).
 */
import { refTip } from '../git/ref-files.js';
import type { RunCtx } from './context.js';

export { refTip };

/** The plan's integration tip: the remote's with `--remote`, else the local branch's, read from its files. */
export async function integrationTip(rc: RunCtx): Promise<string> {
  if (rc.remote) return rc.remote.tip();
  return (await refTip(rc.g, rc.flow.repo.commonDir, rc.flow.repo.mainRoot, rc.prep.integration))!;
}
