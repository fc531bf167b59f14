/**
 * Integration through a shared git remote (docs/state.md §8, docs/run.md §1 `--remote`): the plan's integration
 * branch lives on the remote, every host's clone integrates there. Integrate = fetch the remote branch,
 * rebase the worktree's commits onto its tip, push fast-forward only (never forced); a rejected push means
 * another host integrated first, so fetch and try again (bounded, with backoff). The caller brings the
 * cross-host lock (the state store's integration lock) and a per-process serializer for fetches and pushes
 * (they update the same remote-tracking ref).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isClaimLost, TugError } from '../contract/errors.js';
import { shellArg } from '../util/shell-arg.js';
import type { GitRunner } from '../git/exec.js';
import { currentBranch, headCommit, isAncestor, resolveCommit } from '../git/refs.js';
import { rebaseInProgress, rebasingBranchOf, unmergedFiles } from './conflict.js';
import type { RebaseStop } from './integrate.js';

/** Runs `fn` under a lock, releasing it after. */
export type Locker = <T>(fn: () => Promise<T>) => Promise<T>;

export function trackingRef(remote: string, branch: string): string {
  return `refs/remotes/${remote}/${branch}`;
}

/** InvalidArgument unless `remote` is a configured remote of the repository. */
export async function requireRemote(g: GitRunner, cwd: string, remote: string): Promise<void> {
  const r = /^[A-Za-z0-9._/-]+$/.test(remote) ? await g.tryRun(['remote', 'get-url', '--', remote], cwd) : null;
  if (r?.status === 0) return;
  throw new TugError(
    'InvalidArgument',
    { reason: `no git remote named ${remote}`, remote },
    { hint: 'git remote add <name> <url>, or pass --remote <name> of an existing remote' },
  );
}

/** Tries of a fetch that failed (a network hiccup, a remote briefly away), with backoff: about 6 s in all. */
export const FETCH_TRIES = 5;
const FETCH_PAUSE_MS = 200;

/**
 * Fetch `branch` of `remote` into its remote-tracking ref; returns its tip, or null when the remote has no
 * such branch (the tracking ref is then deleted). A failed fetch is tried again with backoff (FETCH_TRIES in
 * all, `pauseMs` doubling); then it is GitError with git's message.
 */
export async function fetchBranch(
  g: GitRunner,
  cwd: string,
  remote: string,
  branch: string,
  pauseMs = FETCH_PAUSE_MS,
  signal?: AbortSignal,
): Promise<string | null> {
  const ref = trackingRef(remote, branch);
  const args = ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--no-auto-maintenance', '--', remote];
  for (let tries = 1; ; tries++) {
    const r = await g.tryRun([...args, `+refs/heads/${branch}:${ref}`], cwd);
    if (r.status === 0) break;
    if (/couldn't find remote ref/i.test(r.stderr)) {
      await g.tryRun(['update-ref', '-d', ref], cwd);
      return null;
    }
    // A stopping run (`signal`) does not try again.
    if (tries >= FETCH_TRIES || signal?.aborted)
      throw new TugError('GitError', { args: [...args, branch], stderr: r.stderr, cwd, tries });
    await sleep(pauseMs * 2 ** (tries - 1));
  }
  const tip = await resolveCommit(g, cwd, ref);
  if (!tip) throw new TugError('GitError', { args: ['rev-parse', ref], stderr: 'fetched ref not found', cwd });
  return tip;
}

/**
 * Whether git's message says the remote could not be reached (a network, a server or a path away), as
 * against a refusal by it (a rejected push, a pre-push hook): a run waits for the former (docs/state.md §8.4).
 */
export function remoteUnreachable(stderr: string): boolean {
  return /could not read from remote repository|does not appear to be a git repository|unable to access|could not resolve host|connection (refused|timed out|reset|closed)|remote end hung up|early EOF|ssh: connect to host|network is unreachable|no route to host/i.test(
    stderr,
  );
}

export type PushOutcome = { ok: true } | { ok: false; rejected: boolean; stderr: string };

/** `git push <remote> <commit>:refs/heads/<branch>`, never forced: a non-fast-forward is rejected. */
export async function pushFastForward(
  g: GitRunner,
  cwd: string,
  remote: string,
  commit: string,
  branch: string,
  noVerify = false,
): Promise<PushOutcome> {
  const args = ['push', '--quiet', '--porcelain', ...(noVerify ? ['--no-verify'] : []), '--', remote];
  const r = await g.tryRun([...args, `${commit}:refs/heads/${branch}`], cwd);
  if (r.status === 0) return { ok: true };
  const out = `${r.stdout}\n${r.stderr}`;
  // `!` in porcelain output: the ref was rejected (non-fast-forward, fetch first, stale info, …).
  const rejected = /^!\t/m.test(r.stdout) || /\[rejected\]|non-fast-forward|fetch first/i.test(out);
  return { ok: false, rejected, stderr: r.stderr.trim() || r.stdout.trim() };
}

export interface RemoteIntegrateInput {
  git: GitRunner;
  /** The worktree whose checked-out branch carries the new commits. */
  worktree: string;
  remote: string;
  integrationBranch: string;
  /** The cross-host integration lock (the state store's). */
  lock: Locker;
  /** Serializes this process's fetches and pushes. */
  net: Locker;
  /** Renew the claim after taking the lock; throwing an ownership refusal stops the integration. */
  heartbeat?: (() => Promise<void> | void) | undefined;
  noVerify?: boolean | undefined;
  /** Push attempts before giving up (default 8); backoff from 100 ms, doubling, at most 2 s, jittered. */
  maxAttempts?: number | undefined;
  /** Told every remote tip seen (after each fetch and each push). */
  onTip?: ((tip: string) => void) | undefined;
  /** A conflict leaves the rebase stopped for a resolver (integrate.ts `keepConflict`, docs/run.md §1.9). */
  keepConflict?: boolean | undefined;
  /** Aborted when the run stops: a failed fetch is not tried again. */
  signal?: AbortSignal | undefined;
}

export type RemoteIntegrateResult =
  | { integrated: true; head: string; base: string; rebased: boolean; attempts: number }
  | { integrated: false; reason: 'integration_conflict'; error: TugError; stop?: RebaseStop }
  | { integrated: false; reason: 'ownership'; error: TugError }
  | { integrated: false; reason: 'push_rejected' | 'push_failed'; error: TugError; attempts: number };

/** Rebase the worktree's branch onto the remote integration tip and push it there, fast-forward only. */
export async function integrateRemote(input: RemoteIntegrateInput): Promise<RemoteIntegrateResult> {
  const { git: g, worktree: W, remote, integrationBranch: integ } = input;
  const max = input.maxAttempts ?? 8;
  let pause = 100;
  let last: PushOutcome & { ok: false } = { ok: false, rejected: true, stderr: '' };
  for (let attempt = 1; attempt <= max; attempt++) {
    const r = await input.lock(async (): Promise<RemoteIntegrateResult | PushOutcome> => {
      if (input.heartbeat) {
        try {
          await input.heartbeat();
        } catch (e) {
          if (isClaimLost(e)) return { integrated: false, reason: 'ownership', error: e };
          throw e;
        }
      }
      const tip = await input.net(() => fetchBranch(g, W, remote, integ, undefined, input.signal));
      if (tip === null)
        throw new TugError('InvalidArgument', { reason: `integration branch ${integ} does not exist on ${remote}` });
      input.onTip?.(tip);
      let rebased = false;
      if (!(await isAncestor(g, W, tip, 'HEAD'))) {
        const conflict = await rebaseOnto(g, W, tip, `${remote}/${integ}`, input);
        if (conflict) return { integrated: false, reason: 'integration_conflict', ...conflict };
        rebased = true;
      }
      const head = (await headCommit(g, W))!;
      if (head === tip) return { integrated: true, head, base: tip, rebased, attempts: attempt };
      const pushed = await input.net(() => pushFastForward(g, W, remote, head, integ, input.noVerify));
      // The remote away: the caller decides how long to wait for it, with the lock released meanwhile.
      if (!pushed.ok && !pushed.rejected && remoteUnreachable(pushed.stderr))
        throw new TugError('GitError', { args: ['push', remote, integ], stderr: pushed.stderr, cwd: W });
      if (!pushed.ok) return pushed;
      input.onTip?.(head);
      return { integrated: true, head, base: tip, rebased, attempts: attempt };
    });
    if ('integrated' in r) return r;
    last = r as PushOutcome & { ok: false };
    if (attempt < max) {
      await sleep(pause / 2 + Math.random() * pause);
      pause = Math.min(pause * 2, 2000);
    }
  }
  const reason = last.rejected
    ? `the push to ${remote}/${integ} was rejected ${max} times (other hosts kept integrating first)`
    : `git push to ${remote}/${integ} failed: ${last.stderr}`;
  return {
    integrated: false,
    reason: last.rejected ? 'push_rejected' : 'push_failed',
    error: new TugError(
      last.rejected ? 'Busy' : 'GitError',
      { reason, stderr: last.stderr, remote, branch: integ },
      { message: reason, hint: last.rejected ? 'retry in a moment' : `check that ${shellArg(remote)} is reachable` },
    ),
    attempts: max,
  };
}

/**
 * Rebase HEAD's branch onto `tip`; on failure return MergeConflict naming the files, with the rebase aborted,
 * or left stopped on the conflict (`keepConflict`, a conflict and not a hook's refusal) as `stop`.
 */
async function rebaseOnto(
  g: GitRunner,
  W: string,
  tip: string,
  into: string,
  o: { noVerify?: boolean | undefined; keepConflict?: boolean | undefined },
): Promise<{ error: TugError; stop?: RebaseStop } | null> {
  const verify = o.noVerify ? ['--no-verify'] : [];
  const r = await g.tryRun(['rebase', '--quiet', '--no-autosquash', '--no-autostash', ...verify, tip], W, {
    env: { GIT_EDITOR: 'true' },
  });
  if (r.status === 0) return null;
  const files = await unmergedFiles(g, W);
  const before = o.keepConflict ? (rebaseInProgress(W)?.origHead ?? null) : null;
  const kept = before !== null && files.length > 0;
  if (!kept) await g.tryRun(['rebase', '--abort'], W);
  const branch = kept ? rebasingBranchOf(W) : await currentBranch(g, W);
  const error = new TugError('MergeConflict', {
    branch: branch ?? W,
    into,
    files,
    rebase: kept ? 'stopped' : 'aborted',
    reason: kept
      ? 'rebase onto the remote integration branch conflicted; the rebase is stopped there for the resolver'
      : 'rebase onto the remote integration branch conflicted; the rebase was aborted and the commit stays on the worktree branch',
  });
  return kept ? { error, stop: { onto: tip, files, head: before } } : { error };
}
