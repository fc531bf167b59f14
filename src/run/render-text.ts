/**
 * Text pieces shared by the driver's renderers: one readable line per event, durations, short hashes and
 * SGR colours (only when the caller says so: NO_COLOR and non-TTY output get none).
 */
import { decideCommands } from '../contract/errors.js';
import { touchesHeldText } from '../contract/touches.js';
import type { HeldElsewhere, RunEvent } from './types.js';
import { usageTokens, usdText } from '../contract/usage.js';

const SGR = { red: 31, green: 32, yellow: 33, cyan: 36, dim: 2, bold: 1 } as const;
export type Paint = keyof typeof SGR;

/** `paint(how, s)`: `s` in the SGR colour `how`, when `o.color` says so; else `s` as it is. */
export function painter(o: { color: boolean }): (how: Paint, s: string) => string {
  return o.color ? (how, s) => `\x1b[${SGR[how]}m${s}\x1b[0m` : (_how, s) => s;
}

/** `850ms`, `12s`, `1m05s`, `2h03m`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/**
 * The step a line is about: `step-4`, or `step-4 substep step-4-1` when a substep's run does it (docs/run.md
 * §1.3), so the substep's phases read apart from the step's own.
 */
export function unitText(e: { step_anchor: string; substep_anchor?: string | undefined }): string {
  return e.substep_anchor ? `${e.step_anchor} substep ${e.substep_anchor}` : e.step_anchor;
}

/** The first 12 hex digits of a commit. */
export function shortHash(h: string): string {
  return h.slice(0, 12);
}

/** The first line of a reason, without a leading copy of its code, clipped to `max` characters. */
export function reasonLine(code: string, reason: string, max = 200): string {
  let r = (reason.split('\n').find((l) => l.trim() !== '') ?? '').trim();
  if (r === code) r = '';
  else if (r.startsWith(code + ':') || r.startsWith(code + ' ')) r = r.slice(code.length + 1).trim();
  return r.length > max ? r.slice(0, max - 1) + '…' : r;
}

/** `a.ts, b.ts and 3 more`. */
export function fileList(files: string[], max = 3): string {
  if (files.length === 0) return 'the tree';
  const shown = files.slice(0, max).join(', ');
  return files.length > max ? `${shown} and ${files.length - max} more` : shown;
}

/**
 * `attempt 6, 2 of 3 failures`: a retry's attempt number counts its claims, interruptions included, while the
 * cap counts failures (docs/state.md §3.6), so past the first attempt the failures are said beside it.
 */
export function attemptText(e: { attempt: number; failures?: number; max_attempts?: number }): string {
  if (e.attempt <= 1 || e.failures === undefined || e.max_attempts === undefined) return `attempt ${e.attempt}`;
  return `attempt ${e.attempt}, ${e.failures} of ${e.max_attempts} failure${e.max_attempts === 1 ? '' : 's'}`;
}

/**
 * One readable line for an event (no newline), or null for `summary` (the caller prints the summary
 * table). `w1 step-2 claimed (attempt 1)`, `w1 step-2 → implementer`, `w1 step-2 substep step-2-1 → commit`,
 * `w2 step-3 completed abc123456789`,
 * `w1 step-2 attempt 1 failed: CheckpointFailed npm test exited 1`.
 */
export function eventLine(e: RunEvent, o: { color: boolean; plan_path?: string }): string | null {
  const paint = painter(o);
  switch (e.type) {
    case 'run_started': {
      // With --remote the steps land on the remote's branch, which the local one mirrors (docs/run.md §1.1 item 2).
      const into = e.remote ? `through ${e.remote}/${e.integration_branch}` : `into ${e.integration_branch}`;
      return `run ${e.plan_path}: ${workersText(e.workers, e.workers_requested)}, integrating ${into} (base ${e.base_branch})`;
    }
    case 'claimed': {
      const notes = [attemptText(e)];
      if (e.resumed) notes.push('resumed');
      if (e.reclaimed_from_expired) notes.push('taken over from an expired lease');
      return `${e.worker} ${e.step_anchor} claimed (${notes.join(', ')})`;
    }
    case 'phase':
      return `${e.worker} ${unitText(e)} → ${e.phase}`;
    case 'step_completed':
      return (
        `${e.worker} ${e.step_anchor} ${paint('green', 'completed')}` +
        (e.commit_hash === null ? ' (no commit)' : ` ${shortHash(e.commit_hash)}`)
      );
    case 'attempt_failed': {
      const why = reasonLine(e.reason_code, e.reason);
      // Where its output went (docs/run.md §1.3): the reason is only the tail's gist.
      const logs = e.logs?.length ? ` (log: ${e.logs.join(', ')})` : '';
      return (
        `${e.worker} ${e.step_anchor} attempt ${e.attempt} ${paint('red', 'failed')}: ` +
        `${paint('red', e.reason_code)}${why === '' ? '' : ' ' + why}${logs}`
      );
    }
    case 'claim_lost':
      return `${e.worker} ${e.step_anchor} attempt ${e.attempt} ${paint('yellow', 'lost its claim')}: ${e.error_code}`;
    case 'review': {
      const how = e.verdict === 'APPROVE' ? 'green' : e.verdict === 'REVISE' ? 'yellow' : 'red';
      const why = reasonLine('', e.summary);
      return `${e.worker} ${e.step_anchor} review round ${e.round}: ${paint(how, e.verdict)}${why === '' ? '' : ' ' + why}`;
    }
    case 'needs_human': {
      const why = reasonLine('', e.reason);
      return (
        `${e.step_anchor} ${paint('yellow', 'needs a human')}${why === '' ? '' : ': ' + why} ` +
        `(kept as ${e.review_ref}; ${decideCommands(o.plan_path, e.step_anchor)[0]}, --revise or --reject)`
      );
    }
    case 'conflict':
      return `${e.worker} ${e.step_anchor} ${paint('yellow', 'conflict')} in ${fileList(e.files)}: resolving`;
    case 'conflict_resolved':
      return `${e.worker} ${e.step_anchor} ${paint('green', 'conflict resolved')} (round ${e.round}): ${fileList(e.files)}`;
    case 'waiting':
      return `${e.worker} ${waitingText(e)}`;
    case 'worker_stopped':
      return `${e.worker} stopped (${e.reason})`;
    case 'usage': {
      const who = e.role === 'implementer' ? '' : ` ${e.role}`;
      const cost = e.usage.cost_usd === null ? '' : ` · ${usdText(e.usage.cost_usd)}`;
      return (
        `${e.worker} ${e.step_anchor}${who} used ${usageTokens(e.usage).toLocaleString('en-US')} tokens${cost} ` +
        `(plan: ${planSpend(e.plan)})`
      );
    }
    case 'stalled':
      // Seconds in a sentence as the failure reason says them (`2 s`, docs/run.md §7.3); the compact `2s` is
      // for the live view's and the summary's columns.
      return (
        `${e.worker} ${e.step_anchor} attempt ${e.attempt} ${paint('red', 'stalled')}: no output, item or file ` +
        `change for ${e.idle_seconds} s`
      );
    case 'step_failed':
      return (
        `${e.worker} ${e.step_anchor} ${paint('red', 'failed')} at its cap ` +
        (e.max_attempts === undefined
          ? `(${e.failures} failure${e.failures === 1 ? '' : 's'})`
          : `(${e.failures} of ${e.max_attempts} failure${e.max_attempts === 1 ? '' : 's'})`)
      );
    case 'budget_exhausted': {
      const of: string[] = [];
      if (e.budget_usd !== null) of.push(`${usdText(e.usage.cost_usd ?? 0)} of ${usdText(e.budget_usd)}`);
      if (e.budget_tokens !== null)
        of.push(`${e.usage.tokens.toLocaleString('en-US')} of ${e.budget_tokens.toLocaleString('en-US')} tokens`);
      const running = e.running.length ? `; ${e.running.join(', ')} finishing` : '';
      return `${paint('yellow', 'budget reached')}: ${of.join(', ')}; no new claims${running}`;
    }
    case 'warning':
      return `${paint('yellow', 'warning')}: ${e.code}: ${e.message}`;
    case 'summary':
      return null;
  }
}

/** The plan's spend in a few words: `$1.25, 60,000 tokens`. */
export function planSpend(p: { tokens: number; cost_usd: number | null }): string {
  const tokens = `${p.tokens.toLocaleString('en-US')} tokens`;
  return p.cost_usd === null ? tokens : `${usdText(p.cost_usd)}, ${tokens}`;
}

/** `held by <owner>, lease until <at>` (or `lease expired at <at>`). */
export function heldText(h: HeldElsewhere): string {
  const lease =
    h.lease_expires_at === null
      ? 'no lease'
      : `lease ${h.lease_expired ? 'expired at' : 'until'} ${h.lease_expires_at}`;
  return `held by ${h.owner}, ${lease}`;
}

/** Why a worker waits: the claimed steps it waits on, and the ready steps Touches hold back. */
export function waitingText(e: Extract<RunEvent, { type: 'waiting' }>): string {
  // A step held outside the run says by whom and until when (docs/run.md §1.4): the run cannot free it.
  const outside = new Map((e.held_by ?? []).map((h) => [h.step_anchor, h]));
  const named = (e.claimed_steps ?? []).map((a) => {
    const h = outside.get(a);
    return h ? `${a} (${heldText(h)})` : a;
  });
  const on = named.length ? ` for ${named.join(', ')}` : '';
  if (!e.touches_held?.length) return `waiting${on}`;
  return `waiting${on}${on ? ';' : ':'} held back by Touches: ${touchesHeldText(e.touches_held)}`;
}

/**
 * `2 workers`, or when the plan can keep fewer busy than `--workers` asked for (docs/run.md §1 item 3)
 * `1 worker (3 requested; its dependencies let at most 1 step run at once)`; the dry run says it too.
 */
export function workersText(workers: number, requested?: number): string {
  const n = `${workers} worker${workers === 1 ? '' : 's'}`;
  if (requested === undefined || requested <= workers) return n;
  return `${n} (${requested} requested; its dependencies let at most ${workers} step${workers === 1 ? '' : 's'} run at once)`;
}

/**
 * The run holding a plan's lock while it lives, as `tugcode status` (docs/git.md §6) and the board's plan line
 * (docs/board.md §3) say it: `run: pid 4242 on host since <time>, 2 workers`; on another host (`alive` null)
 * this host cannot tell, so it says where the run is. Empty for a run whose pid is gone (said elsewhere, with
 * the command that takes its claims over).
 */
export function liveRunNote(
  r:
    | {
        pid: number;
        host: string;
        started_at: string;
        alive: boolean | null;
        workers?: number | null;
        workers_requested?: number | undefined;
      }
    | null
    | undefined,
): string {
  if (!r || r.alive === false) return '';
  const workers = r.workers ? `, ${workersText(r.workers, r.workers_requested)}` : '';
  return `run: pid ${r.pid} on ${r.host} since ${r.started_at}${workers}${r.alive === null ? ' (another host)' : ''}`;
}
