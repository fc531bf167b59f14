/**
 * `tugcode run --remote NAME` (docs/run.md §1, docs/state.md §8): the plan's integration branch lives on a
 * shared git remote, and each host runs `tugcode run` in its own clone. Workers reset to the remote tip
 * (fetched before each step), integrate by fetch + rebase + fast-forward push under the state store's
 * integration lock (a PostgreSQL advisory lock on the plan when the state is shared), and the run
 * reconciles from the remote branch. The local `tugplan/<slug>` mirrors the remote at the start and end.
 */
import { TugError } from '../contract/errors.js';
import type { Locker } from '../gitflow/remote.js';
import { pause, SIGNAL_STOP, stateCallIn, type RunSetup } from './context.js';
import type { Beat } from './heartbeat.js';
import type { Integration } from './resolve.js';
import { Aborted, StepFailure } from './step.js';

export interface RemoteRun {
  readonly name: string;
  /** The remote integration tip last seen by this process (no git call). */
  tip(): string;
  /** Fetch the remote integration branch; returns its tip. */
  sync(): Promise<string>;
  /**
   * Fetch, mirror the local branch, and return the remote-tracking ref to read trailers from. After a signal
   * a failed fetch is no error: the ref as last fetched (docs/run.md §1.1 item 5).
   */
  syncRef(): Promise<string>;
  /**
   * Integrate the worktree's commits on the remote; `before` is the tip they were rebased onto. With
   * `keepConflict` a conflict comes back as the rebase left stopped (`stop`, docs/run.md §1.9).
   */
  integrate(worktree: string, beat: Beat, o?: { keepConflict?: boolean }): Promise<Integration>;
  /**
   * A claim taken over from an expired lease whose step is on the remote already (its host died between
   * the push and `complete`): the claim is released and the step settled by reconcile. Returns whether so.
   */
  settleIntegrated(worktree: string, step: string, attempt: number): Promise<boolean>;
}

/** A process-wide mutex: the workers' fetches and pushes update the same remote-tracking ref. */
function serializer(): Locker {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const p = tail.then(fn, fn);
    tail = p.catch(() => undefined);
    return p;
  };
}

/** How long a run waits for its remote to come back, as it waits for PostgreSQL (docs/state.md §8.4). */
const OUTAGE_MS = 120_000;
const OUTAGE_PAUSE_MS = 500;
const OUTAGE_PAUSE_MAX_MS = 5_000;

/**
 * Runs `fn` again while it fails because the remote is unreachable (GitError, remoteUnreachable), with
 * backoff, for up to OUTAGE_MS from the first failure since the last success; once that is spent every call
 * fails at once until one succeeds. The first failure of an outage is a `GitError` warning, and so is the
 * success that ends it. A stopping run (a signal, a fatal error) waits no more.
 */
function outageRider(rc: RunSetup, name: string, unreachable: (stderr: string) => boolean): Locker {
  let since: number | null = null;
  return async (fn) => {
    let wait = OUTAGE_PAUSE_MS;
    for (;;) {
      try {
        const result = await fn();
        // An outage said as it started is said as it ends (as PostgreSQL's is, docs/state.md §8.1).
        if (since !== null)
          rc.warn(
            'GitError',
            `${name} is back after ${Math.max(1, Math.round((Date.now() - since) / 1000))} s: the run goes on`,
            { remote: name, back: true },
          );
        since = null;
        return result;
      } catch (e) {
        const stderr = e instanceof TugError && e.code === 'GitError' ? String(e.details.stderr ?? '') : '';
        if (!unreachable(stderr) || rc.stop.signal.aborted) throw e;
        const now = Date.now();
        if (since === null) {
          since = now;
          const why = stderr.split('\n').find((l) => l.trim()) ?? '';
          rc.warn(
            'GitError',
            `${name} is unreachable (${why.trim()}): the run waits for it, up to ${OUTAGE_MS / 1000} s`,
            {
              remote: name,
              stderr,
            },
          );
        } else if (now - since > OUTAGE_MS) throw e;
        await pause(rc, wait);
        if (rc.stop.signal.aborted) throw e;
        wait = Math.min(wait * 2, OUTAGE_PAUSE_MAX_MS);
      }
    }
  };
}

/**
 * Check the remote, create the integration branch there when missing or bring it up to the base when the
 * plan changed there (docs/run.md §1.1 item 2), mirror it locally.
 */
export async function openRemote(rc: RunSetup, name: string): Promise<RemoteRun> {
  const { requireRemote, fetchBranch, integrateRemote, remoteUnreachable, trackingRef } =
    await import('../gitflow/remote.js');
  const { ensureRemoteBranch, mirrorLocal } = await import('../gitflow/remote-branch.js');
  const { g, prep } = rc;
  const repo = rc.flow.repo;
  const root = repo.mainRoot;
  const integ = prep.integration;
  await requireRemote(g, root, name);
  const net = serializer();
  const lock: Locker = async (fn) => {
    const release = await rc.store.integrationLock(prep.planPath);
    try {
      return await fn();
    } finally {
      await release();
    }
  };
  const noVerify = rc.flow.config.run.no_verify;
  let current = await ensureRemoteBranch({
    git: g,
    repo,
    remote: name,
    integrationBranch: integ,
    base: prep.base,
    planPath: prep.planPath,
    lock,
    net,
    noVerify,
  });
  const seen = (tip: string) => {
    current = tip;
  };
  // Started, the run rides out a remote that is away for a while (its start above fails at once: a wrong
  // remote is not worth waiting for).
  const ride = outageRider(rc, name, remoteUnreachable);
  const sync = async () => {
    const tip = await ride(() => net(() => fetchBranch(g, root, name, integ, undefined, rc.stop.signal)));
    if (tip === null)
      throw new TugError('InvalidArgument', { reason: `integration branch ${integ} vanished from ${name}` });
    seen(tip);
    return tip;
  };
  const syncRef = async () => {
    let tip: string;
    try {
      tip = await sync();
    } catch (e) {
      // Stopped by a signal, the run waits for no remote: the summary reads the branch as last fetched (its
      // own pushes included), and the mirror waits for the next run. The interruption is what it reports.
      if (rc.stop.signal.reason === SIGNAL_STOP && e instanceof TugError) return trackingRef(name, integ);
      throw e;
    }
    await net(() => mirrorLocal(g, repo, integ, tip, { planPath: prep.planPath, base: prep.base }));
    return trackingRef(name, integ);
  };
  return {
    name,
    tip: () => current,
    sync,
    syncRef,
    async settleIntegrated(W, step, attempt) {
      const { readTrailerCommits } = await import('../git/log.js');
      const { commits, scanned } = await readTrailerCommits(g, root, [await syncRef()]);
      const mine = (c: { steps: string[]; plans: string[] }) =>
        c.steps.includes(step) && (c.plans.length === 0 || c.plans.includes(prep.planPath));
      if (!commits.some(mine)) return false;
      // Reconcile skips a step under a live claim: ours is handed back in its transaction.
      await rc.store.reconcile(stateCallIn(rc, root), {
        plan: prep.planPath,
        commits,
        scanned_commits: scanned,
        held: { step, attempt },
        worktree: W,
      });
      return true;
    },
    async integrate(W, beat, o) {
      const r = await ride(() =>
        integrateRemote({
          git: g,
          worktree: W,
          remote: name,
          integrationBranch: integ,
          lock,
          net,
          heartbeat: () => beat.now(),
          noVerify,
          onTip: seen,
          keepConflict: o?.keepConflict,
          signal: rc.stop.signal,
        }),
      );
      if (r.integrated) return { before: r.base, after: r.head };
      if (r.reason === 'ownership') throw new Aborted();
      if (r.reason === 'integration_conflict' && r.stop) return { stop: r.stop };
      // Other hosts kept winning the push: hand the claim back (Busy), it is claimed again on a newer tip.
      if (r.reason === 'push_rejected') throw r.error;
      if (r.reason === 'push_failed') throw new StepFailure('HookFailed', r.error.message);
      const files = (r.error.details.files as string[] | undefined) ?? [];
      if (files.length === 0)
        throw new StepFailure('HookFailed', `rebase onto ${name}/${integ} failed without a conflict (a git hook?)`);
      throw new StepFailure('IntegrationConflict', `rebase onto ${name}/${integ} conflicted in ${files.join(', ')}`);
    },
  };
}
