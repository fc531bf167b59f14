/**
 * The text of `state log` (issue 22 item 26): per event the operation that wrote it (claim, start, update,
 * complete, release, fail, heartbeat, …) and its key details, the command that ran it when that is not the
 * `state` command itself (`[run]`, `[commit]`), and the worktree shortened (`w1`, `main`). The JSON keeps
 * every field as stored; this only reads `details`. Pure: returns a string.
 */
import { worktreeNameOf } from '../contract/layout.js';
import { USAGE_TOKEN_FIELDS, usdText } from '../contract/usage.js';
import { LOG_DEFAULT_LIMIT, LOG_MAX_LIMIT, type LogEvent } from './log.js';

export interface LogTextOptions {
  /** The main checkout's root: shown as `main`. */
  mainRoot?: string | undefined;
  /** What the call asked for and what its limit left out (the `omitted` line, docs/state.md §4). */
  omitted?: number | undefined;
  limit?: number | undefined;
  after_id?: number | undefined;
}

type Details = Record<string, any>;

/** An owner (`/repo/.tugtree/tugplan__demo--w1`, `host:/path`, `admin`) as the worktree's short name. */
function shortActor(actor: string, o: LogTextOptions = {}): string {
  const hosted = /^([^/:]+):(\/.*)$/.exec(actor); // PostgreSQL owners are `<host>:<worktree>` (docs/state.md §8)
  if (hosted) return `${hosted[1]}:${shortActor(hosted[2]!, o)}`;
  if (!actor.startsWith('/')) return actor;
  if (o.mainRoot && actor === o.mainRoot) return 'main';
  // A plan worktree `.tugtree/tugplan__<slug>--<name>` (docs/git.md §3): its name (`w1`, a timestamp).
  const tree = worktreeNameOf(actor);
  if (tree) return tree;
  // Any other worktree: its directory name, as `state show` names owners.
  return actor.split('/').filter(Boolean).pop() ?? actor;
}

const short = (hash: unknown) => (typeof hash === 'string' ? hash.slice(0, 12) : '');
const list = (xs: unknown) => (Array.isArray(xs) ? xs.map(String).join(', ') : '');

/** `task 0 completed, test 1 deferred (+3 more)`. */
function changesText(changes: unknown, max = 4): string {
  if (!Array.isArray(changes) || changes.length === 0) return '';
  const one = (c: Details) => `${c.step_anchor ? `${c.step_anchor} ` : ''}${c.kind} ${c.ordinal} ${c.to}`;
  const shown = changes.slice(0, max).map(one).join(', ');
  return changes.length > max ? `${shown} (+${changes.length - max} more)` : shown;
}

/** What a discarded attempt took back (attempt.ts), or ''. */
function discardedText(d: Details): string {
  const parts: string[] = [];
  if (Array.isArray(d.items_reopened) && d.items_reopened.length)
    parts.push(`${d.items_reopened.length} item(s) reopened`);
  if (Array.isArray(d.substeps_reset) && d.substeps_reset.length)
    parts.push(`substeps reset: ${list(d.substeps_reset)}`);
  if (typeof d.refactors_reset === 'number' && d.refactors_reset > 0)
    parts.push(`${d.refactors_reset} refactor(s) reset`);
  return parts.length ? `; discarded: ${parts.join(', ')}` : '';
}

/**
 * One usage report (docs/run.md §7.1): `implementer 1,100 tokens (input 1,000, output 100) · $0.50`, the
 * kinds it measured only, `cost unknown` without a cost.
 */
function usageText(d: Details): string {
  const kinds = USAGE_TOKEN_FIELDS.filter((k) => typeof d[k] === 'number').map(
    (k) => `${k.replace(/_tokens$/, '').replace('_', ' ')} ${Number(d[k]).toLocaleString('en-US')}`,
  );
  const tokens = USAGE_TOKEN_FIELDS.reduce((n, k) => n + (typeof d[k] === 'number' ? Number(d[k]) : 0), 0);
  const cost = typeof d.cost_usd === 'number' ? usdText(d.cost_usd) : 'cost unknown';
  const measured = kinds.length ? `${tokens.toLocaleString('en-US')} tokens (${kinds.join(', ')})` : 'no tokens';
  return `${String(d.role ?? '?')} ${measured} · ${cost}`;
}

/** Events that name a secondary change in their `command` (record.ts). */
const SECONDARY: Record<string, string> = {
  takeover: 'takeover',
  step_failed: 'step failed',
  substep_auto_completed: 'auto-complete',
  plan_done: 'plan done',
  plan_reactivated: 'reactivate',
  step_needs_human: 'needs human',
};

/** The operation that wrote an event and its key details, from the event's `details`. */
function describeEvent(e: LogEvent, o: LogTextOptions = {}): { op: string; text: string } {
  const d = e.details as Details;
  const attempt = e.attempt !== null ? `attempt ${e.attempt}` : '';
  const join = (...xs: string[]) => xs.filter(Boolean).join(', ');
  switch (e.command) {
    case 'takeover':
      return {
        op: 'takeover',
        text:
          join(`from ${shortActor(String(d.previous_owner ?? '?'), o)} (lease expired)`, attempt) + discardedText(d),
      };
    case 'step_failed':
      return {
        op: 'step failed',
        text: join(`"${d.fail_reason ?? ''}"`, `failures ${d.failures ?? '?'}`) + discardedText(d),
      };
    case 'substep_auto_completed':
      return { op: 'auto-complete', text: 'every item done' };
    case 'plan_done':
      return { op: 'plan done', text: `${d.steps_completed ?? '?'} step(s) completed` };
    case 'plan_reactivated':
      return { op: 'reactivate', text: 'archived plan initialized again' };
    case 'step_needs_human':
      return {
        op: 'needs human',
        text: join(attempt, `"${d.reason ?? ''}"`, d.review_commit ? `kept ${short(String(d.review_commit))}` : ''),
      };
  }
  if (typeof d.decision === 'string')
    return {
      op: 'decide',
      text:
        join(
          d.decision,
          d.notes !== undefined ? `notes "${d.notes}"` : '',
          d.reason !== undefined ? `"${d.reason}"` : '',
          `step ${d.status ?? '?'}`,
        ) + discardedText(d),
    };
  if (d.integration_target) {
    // Where the plan integrates from now on (docs/run.md §1.11), and where it did before a move.
    const name = (t: Details) => (t.kind === 'remote' ? `remote ${t.where}` : `the clone ${t.where}`);
    const to: Details = d.integration_target;
    return {
      op: 'target',
      text: join(
        `${to.kind === 'remote' ? 'through' : 'into'} ${name(to)}`,
        d.previous_target ? `moved from ${name(d.previous_target)}` : '',
      ),
    };
  }
  if (d.claimed === true)
    return {
      op: 'claim',
      text: join(
        attempt,
        d.resumed ? 'resumed' : '',
        d.reclaimed_from_expired ? 'taken over after its lease expired' : '',
        d.lease_expires_at ? `lease until ${d.lease_expires_at}` : '',
        d.failed_steps?.length ? `failed at the cap: ${list(d.failed_steps.map((f: Details) => f.step_anchor))}` : '',
        d.prose_refreshed ? 'plan prose refreshed' : '',
      ),
    };
  if (d.claimed === false)
    return {
      op: 'claim',
      text: join(
        'nothing claimed',
        d.failed_steps?.length ? `failed at the cap: ${list(d.failed_steps.map((f: Details) => f.step_anchor))}` : '',
        d.prose_refreshed ? 'plan prose refreshed' : '',
      ),
    };
  if (typeof d.started === 'string')
    return {
      op: 'start',
      text: join(attempt, d.also_started?.length ? `also started ${list(d.also_started)}` : ''),
    };
  if (typeof d.updated === 'number') {
    const head = `${d.updated} item(s)${d.complete_remaining ? ' (--complete-remaining)' : ''}`;
    const changes = changesText(d.changes);
    return {
      op: 'update',
      text: join(
        changes ? `${head}: ${changes}` : head,
        d.auto_completed_steps?.length ? `auto-completed ${list(d.auto_completed_steps)}` : '',
      ),
    };
  }
  if (d.completed === true)
    return {
      op: 'complete',
      text: join(
        attempt,
        d.commit_hash ? `commit ${short(d.commit_hash)}` : 'no commit',
        d.completed_via && d.completed_via !== 'complete' && d.completed_via !== 'force'
          ? `via ${d.completed_via}`
          : '',
        d.force_reason !== undefined ? `forced: "${d.force_reason}"` : '',
        d.substeps_forced?.length ? `substeps forced: ${list(d.substeps_forced)}` : '',
      ),
    };
  if (d.already_completed === true)
    return { op: 'complete', text: join('already completed', d.commit_hash ? `commit ${short(d.commit_hash)}` : '') };
  if (d.released === true)
    return {
      op: 'release',
      text:
        join(attempt, d.previous_owner ? `claim of ${shortActor(String(d.previous_owner), o)}` : '') + discardedText(d),
    };
  if (d.failed_attempt === true)
    return {
      op: 'fail',
      text:
        join(attempt, `"${d.reason ?? ''}"`, `failures ${d.failures ?? '?'}`, `step ${d.step_status ?? '?'}`) +
        discardedText(d),
    };
  if (d.revived === true && d.expired_at !== undefined)
    return {
      op: 'heartbeat',
      text: join(attempt, `lease revived (expired ${d.expired_at})`, `until ${d.lease_expires_at}`),
    };
  if (typeof d.artifact_id === 'number')
    return { op: 'artifact', text: join(attempt, `${d.kind} #${d.artifact_id}`, d.truncated ? 'truncated' : '') };
  if (d.reset === true)
    return {
      op: 'reset',
      text:
        join(
          `was ${d.previous_status}`,
          d.previous_owner ? `claimed by ${shortActor(String(d.previous_owner), o)}` : '',
          d.previous_attempt !== undefined ? `attempt ${d.previous_attempt}` : '',
        ) + discardedText(d),
    };
  if (d.reinitialized === true)
    return {
      op: 'init',
      text: join(
        're-initialized (--force)',
        d.release_claims ? 'claims released' : '',
        Array.isArray(d.kept_decisions) && d.kept_decisions.length
          ? `human decisions kept: ${list(d.kept_decisions)}`
          : '',
      ),
    };
  if (typeof d.steps_created === 'number')
    return {
      op: 'init',
      text: `${d.steps_created} step(s), ${d.checklist_items_created ?? 0} item(s), ${d.refactors_created ?? 0} refactor(s)`,
    };
  if (d.prose_refreshed === true) return { op: 'init', text: 'plan prose refreshed' };
  if (Array.isArray(d.reconciled))
    return {
      op: 'reconcile',
      text: `${d.reconciled.length} step(s): ${d.reconciled.map((r: Details) => `${r.step_anchor} at ${short(r.commit_hash)}`).join(', ')}`,
    };
  if (Array.isArray(d.archived)) return { op: 'prune', text: `archived ${list(d.archived)}` };
  if (Array.isArray(d.purged)) return { op: 'prune', text: `purged ${list(d.purged)}` };
  if (d.imported !== undefined) return { op: 'import', text: d.replaced ? 'replaced this backend’s copy' : 'imported' };
  if (typeof d.ordinal === 'number' && 'skipped_reason' in d)
    return { op: 'refactor skip', text: `refactor ${d.ordinal}: "${d.skipped_reason ?? ''}"` };
  if (typeof d.ordinal === 'number' && typeof d.status === 'string')
    return {
      op: 'refactor',
      text: join(`refactor ${d.ordinal} ${d.status}`, d.error_code ? String(d.error_code) : ''),
    };
  if (typeof d.ordinal === 'number' && d.pending !== undefined)
    return { op: 'refactor', text: `refactor ${d.ordinal} applying` };
  if (d.retried !== undefined || d.recovered !== undefined) return { op: 'refactor', text: 'run-step' };
  if (typeof d.usage_id === 'number') return { op: 'usage', text: join(attempt, usageText(d)) };
  // Anything else: the stored command and details as they are.
  const raw = JSON.stringify(d);
  return { op: e.command, text: raw === '{}' ? '' : raw.length > 120 ? raw.slice(0, 119) + '…' : raw };
}

/** `[run]`: the command that wrote the event, when it is not the `state` command of the same name. */
function viaOf(e: LogEvent, op: string): string {
  if (SECONDARY[e.command] !== undefined || e.command === op) return '';
  return e.command === `state ${op}` ? '' : `[${e.command}]`;
}

/**
 * The line that says the limit left events out, and how to see them: a larger --limit while that reaches
 * them all, else paging from the oldest (--after-id 0); with --after-id, the next page.
 */
function omittedLine(events: LogEvent[], o: LogTextOptions): string | null {
  const n = o.omitted ?? 0;
  if (n === 0) return null;
  const s = n === 1 ? '' : 's';
  if (o.after_id !== undefined)
    return `… ${n} newer event${s} not shown (--after-id ${events[events.length - 1]!.id} for the next page)`;
  const limit = o.limit ?? LOG_DEFAULT_LIMIT;
  const page = '--after-id 0 to page from the oldest';
  const how =
    limit + n <= LOG_MAX_LIMIT
      ? `--limit ${limit + n} to see them`
      : limit < LOG_MAX_LIMIT
        ? `--limit ${LOG_MAX_LIMIT} for the latest ${LOG_MAX_LIMIT}, or ${page}`
        : page;
  return `… ${n} older event${s} not shown (${how})`;
}

export function renderLog(events: LogEvent[], o: LogTextOptions = {}): string {
  if (events.length === 0) return 'No events';
  const plans = new Set(events.map((e) => e.plan_path));
  const onePlan = plans.size === 1 ? [...plans][0] : undefined;
  const rows = events.map((e) => {
    const { op, text } = describeEvent(e, o);
    return {
      id: String(e.id).padStart(5),
      at: e.at,
      where: `${onePlan === undefined ? `${e.plan_path ?? '-'} ` : ''}${e.step_anchor ?? '-'}`,
      who: shortActor(e.actor, o),
      op,
      text: [text, viaOf(e, op)].filter(Boolean).join('  '),
    };
  });
  const w = (k: 'where' | 'who' | 'op') => Math.max(...rows.map((r) => r[k].length));
  const [ww, wa, wo] = [w('where'), w('who'), w('op')];
  const lines = rows.map((r) =>
    `${r.id}  ${r.at}  ${r.where.padEnd(ww)}  ${r.who.padEnd(wa)}  ${r.op.padEnd(wo)}  ${r.text}`.trimEnd(),
  );
  const more = omittedLine(events, o);
  if (more !== null) {
    if (o.after_id !== undefined) lines.push(more);
    else lines.unshift(more);
  }
  return (onePlan ? `Plan: ${onePlan}\n` : '') + lines.join('\n');
}
