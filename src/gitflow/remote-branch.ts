/**
 * The integration branch on a shared remote (docs/state.md §8): created there from the base when missing,
 * and mirrored into the clone's own `tugplan/<slug>` (fast-forward only) so `git log`, `merge` and the
 * state commands of this clone see what the hosts integrated.
 */
import { TugError } from '../contract/errors.js';
import { shellArg } from '../util/shell-arg.js';
import type { GitRunner } from '../git/exec.js';
import { setBranchPlan } from '../git/branch-config.js';
import { branchTip, isAncestor, resolveCommit } from '../git/refs.js';
import { gitWorktrees, type Repo } from '../git/repo.js';
import { catchUpCommit } from './integrate.js';
import { fetchBranch, pushFastForward, type Locker } from './remote.js';

export interface RemoteBranchInput {
  git: GitRunner;
  repo: Repo;
  remote: string;
  integrationBranch: string;
  base: string;
  planPath: string;
  lock: Locker;
  net: Locker;
  noVerify?: boolean | undefined;
}

/**
 * Under the lock: fetch the remote integration branch; create it on the remote when missing (from the
 * clone's integration branch when it has one, else from the base); publish the clone's integration branch
 * when it is ahead of the remote's; bring it up to the clone's base when the plan changed there
 * (catchUpCommit, docs/run.md §1.1 item 2), in the same push; then mirror the remote tip locally. Returns
 * the remote tip. A push rejected (another host moved the branch) looks again, at most 5 times in all.
 * A clone whose integration branch diverged from the remote's is InvalidArgument (nothing is forced); a
 * catch-up that conflicts is MergeConflict, one whose branch changed the plan itself PlanDrift (the remote
 * unchanged).
 */
export async function ensureRemoteBranch(o: RemoteBranchInput): Promise<string> {
  const { git: g, repo, remote, integrationBranch: integ } = o;
  const root = repo.mainRoot;
  for (let attempt = 1; ; attempt++) {
    const tip = await o.lock(async () => {
      const remoteTip = await o.net(() => fetchBranch(g, root, remote, integ));
      const local = await branchTip(g, root, integ);
      // What the remote branch is to be before the catch-up with the base.
      let from: string;
      if (remoteTip === null) {
        const made = local ?? (await resolveCommit(g, root, `refs/heads/${o.base}`));
        if (!made) throw new TugError('InvalidArgument', { reason: `base branch ${o.base} does not exist` });
        from = made;
      } else if (local && local !== remoteTip && !(await isAncestor(g, root, local, remoteTip))) {
        if (!(await isAncestor(g, root, remoteTip, local)))
          throw new TugError(
            'InvalidArgument',
            { reason: `${integ} and ${remote}/${integ} diverged`, branch: integ, remote },
            { hint: `reconcile them by hand (git log ${shellArg(`${integ}...${remote}/${integ}`)}), then run again` },
          );
        from = local; // this clone integrated locally before: its commits go to the remote
      } else from = remoteTip;
      const move = await catchUpCommit(g, repo, {
        tip: from,
        integrationBranch: integ,
        base: o.base,
        planPath: o.planPath,
        remote,
      }).catch(async (e: unknown) => {
        throw e instanceof TugError && e.code === 'PlanDrift' ? await whichIsNewer(o, e) : e;
      });
      const publish = move?.to ?? from;
      if (publish === remoteTip) return remoteTip;
      const p = await o.net(() => pushFastForward(g, root, remote, publish, integ, o.noVerify));
      if (p.ok) {
        await o.net(() => fetchBranch(g, root, remote, integ)); // the tracking ref follows
        return publish;
      }
      if (!p.rejected || attempt >= 5)
        throw new TugError('GitError', { args: ['push', remote, `${publish}:refs/heads/${integ}`], stderr: p.stderr });
      return null; // another host created or moved it meanwhile: look again
    });
    if (tip !== null) {
      await o.net(() => mirrorLocal(g, repo, integ, tip, { planPath: o.planPath, base: o.base }));
      return tip;
    }
  }
}

/**
 * A catch-up's PlanDrift with `newer`, which side holds the newer plan, so that its hint puts the right fix
 * first (src/contract/errors.ts): `remote_base` when the commit that last changed the plan on the remote
 * branch is on the remote's base and not on this clone's (another host took in a base this clone has not
 * pulled), else `integration` (the branch changed the plan itself). The remote's base is fetched to tell;
 * when that fails the error is returned as it is.
 */
async function whichIsNewer(o: RemoteBranchInput, e: TugError): Promise<TugError> {
  const { git: g, repo, remote } = o;
  const root = repo.mainRoot;
  const tip = e.details.integration_tip;
  if (typeof tip !== 'string') return e;
  let remoteBase: string | null;
  try {
    remoteBase = await o.net(() => fetchBranch(g, root, remote, o.base));
  } catch {
    return e;
  }
  const changed = (await g.tryRun(['log', '-1', '--format=%H', tip, '--', o.planPath], root)).stdout.trim();
  const localBase = await resolveCommit(g, root, `refs/heads/${o.base}`);
  const fromRemoteBase =
    remoteBase !== null &&
    changed !== '' &&
    (await isAncestor(g, root, changed, remoteBase)) &&
    !(localBase !== null && (await isAncestor(g, root, changed, localBase)));
  const details = fromRemoteBase
    ? {
        ...e.details,
        newer: 'remote_base',
        summary: `${remote}/${o.integrationBranch} took in a newer ${o.base} than this clone's (${remote}/${o.base} has its plan)`,
      }
    : { ...e.details, newer: 'integration' };
  return new TugError('PlanDrift', details);
}

/**
 * Move the clone's `branch` to `tip` when that is a fast-forward (created when missing, with its branch
 * config); a local branch that is not an ancestor of `tip` is left as it is. Returns whether it now is `tip`.
 */
export async function mirrorLocal(
  g: GitRunner,
  repo: Repo,
  branch: string,
  tip: string,
  create: { planPath: string; base: string },
): Promise<boolean> {
  const root = repo.mainRoot;
  const local = await branchTip(g, root, branch);
  if (local === tip) return true;
  if (local === null) {
    await g.run(['branch', '--no-track', branch, tip], root);
    await setBranchPlan(g, root, branch, create.planPath, create.base);
    return true;
  }
  if (!(await isAncestor(g, root, local, tip))) return false;
  const holder = (await gitWorktrees(g, repo)).find((w) => w.branch === branch && !w.prunable);
  if (holder) return (await g.tryRun(['merge', '--ff-only', '--quiet', tip], holder.path)).status === 0;
  const r = await g.tryRun(
    ['update-ref', '-m', 'tugcode: mirror the remote integration branch', `refs/heads/${branch}`, tip, local],
    root,
  );
  return r.status === 0;
}
