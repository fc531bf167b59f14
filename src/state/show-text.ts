/**
 * The text of `state show` (docs/state.md §5; the golden text of tests/state/show.test.ts): 12-cell bars with floored fill and percent,
 * substeps indented under their parent, items listed for the steps the data carries items for, leases as
 * "expires in 1h 45m" / "EXPIRED 5m ago", and an `Overall:` footer per plan. Pure: returns a string.
 */
import { humanDuration } from '../clock.js';
import { shellArg } from '../util/shell-arg.js';
import { usageLine } from '../contract/usage.js';
import { deferredNote, itemProgress } from '../contract/status.js';
import { integrationBranch, targetPlace } from '../contract/layout.js';
import { slugOfPlanPath } from '../plan/resolve.js';
import { decideLine, resetCommand } from '../contract/errors.js';
import { percent, type ShowPlan, type ShowResult, type ShowStep } from './show.js';

export interface TextOptions {
  /** Current time (lease texts). */
  now: string;
  /** ANSI colour (only when stdout is a TTY and NO_COLOR is unset; decided by the caller). */
  color: boolean;
  /** Name each step's anchor in its header (what `state start|update` take; `state claim` shows them). */
  anchors?: boolean;
  /**
   * At most this many lines (`state show --watch` fits a frame to the terminal): whole steps are left out,
   * completed ones first and claimed or in-progress ones last, behind a `… N more steps` line; the plan
   * header always stays.
   */
  maxLines?: number;
  /** The plan as the reader names it, for the `state decide` line of a needs_human step. */
  plan?: string;
}

const BAR_CELLS = 12;
const LABEL_WIDTH = 13;
const RULE = '─'.repeat(72);

const COLORS: Record<string, string> = {
  completed: '32',
  in_progress: '33',
  claimed: '36',
  failed: '31',
  needs_human: '35',
  pending: '2',
  active: '36',
  done: '32',
  archived: '2',
};

function bar(done: number, total: number): string {
  const filled = total === 0 ? 0 : Math.floor((BAR_CELLS * done) / total);
  return '█'.repeat(filled) + '░'.repeat(BAR_CELLS - filled);
}

/** `Tasks:       1/3  ████░░░░░░░░  33%`, then ` (1 deferred)` when some are. */
function progressLine(label: string, done: number, total: number, deferred = 0): string {
  return `${`${label}:`.padEnd(LABEL_WIDTH)}${done}/${total}  ${bar(done, total)} ${String(percent(done, total)).padStart(3)}%${deferredNote({ deferred })}`;
}

function paint(text: string, code: string | undefined, on: boolean): string {
  return on && code ? `\u001b[${code}m${text}\u001b[0m` : text;
}

/** A reason's line breaks (and the blanks around them) as one space: each item stays one line of the text. */
function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ');
}

function owner(path: string): string {
  const parts = path.split('/').filter(Boolean);
  return parts[parts.length - 1] ?? path;
}

function stepLines(s: ShowStep, depth: number, o: TextOptions): string[] {
  const pad = '  '.repeat(depth);
  const top = s.parent_anchor === null;
  const held = s.status === 'claimed' || s.status === 'in_progress';
  const name = o.anchors ? `Step ${s.id} (${s.anchor})` : `Step ${s.id}`;
  let head = `${pad}${name}: ${s.title} [${paint(s.status, COLORS[s.status], o.color)}]`;
  if (top && held && s.claimed_by) head += ` (claimed by ${owner(s.claimed_by)})`;
  if ((s.status === 'pending' || (top && s.lease_expired)) && s.blocked_by.length > 0)
    head += ` (blocked by: ${s.blocked_by.join(', ')})`;
  if (s.completed_via === 'force') head += ` (forced: ${JSON.stringify(s.complete_reason ?? '')})`;
  if (s.completed_via === 'reconcile') head += ' (reconciled)';
  if (s.status === 'failed') head += ` (failed: ${JSON.stringify(s.fail_reason ?? '')})`;
  if (s.status === 'needs_human') head += ` (needs a human: ${JSON.stringify(s.fail_reason ?? '')})`;
  if (top && s.attempt > 1) head += ` (attempt ${s.attempt})`;
  if (top && s.failures > 0) head += ` (failures: ${s.failures})`;
  const lines = [head];
  lines.push(...reviewLines(s, pad, o));
  const kinds: [string, 'tasks' | 'tests' | 'checkpoints', string][] = [
    ['Tasks', 'tasks', 'task'],
    ['Tests', 'tests', 'test'],
    ['Checkpoints', 'checkpoints', 'checkpoint'],
  ];
  for (const [label, key, kind] of kinds) {
    const p = itemProgress(s.counts[key]);
    if (p.total === 0) continue;
    lines.push(`${pad}  ${progressLine(label, p.done, p.total, p.deferred)}`);
    for (const it of s.items.filter((i) => i.kind === kind)) {
      // The 0-based ordinal `state update --task N` takes (issue 22 item 24): `task 0 [ ] text`.
      const lead = `${pad}    ${'  '.repeat(it.depth)}${kind} ${it.ordinal} `;
      if (it.status === 'completed') lines.push(`${lead}[x] ${it.text}`);
      else if (it.status === 'deferred') lines.push(`${lead}[~] ${it.text} (deferred: ${oneLine(it.reason ?? '')})`);
      else if (it.status === 'in_progress') lines.push(`${lead}[ ] ${it.text}    ← in_progress`);
      else lines.push(`${lead}[ ] ${it.text}`);
    }
  }
  const r = s.counts.refactors;
  const rTotal = r.open + r.applied + r.failed + r.skipped;
  if (rTotal > 0) lines.push(`${pad}  ${progressLine('Refactors', r.applied + r.skipped, rTotal)}`);
  if (top && held && s.lease_expires_at) {
    const ms = Date.parse(s.lease_expires_at) - Date.parse(o.now);
    lines.push(
      `${pad}  Lease: ${s.lease_expired ? paint(`EXPIRED ${humanDuration(-ms)} ago`, '31', o.color) : `expires in ${humanDuration(ms)}`}`,
    );
  }
  if (s.status === 'completed' && s.commit_hash) lines.push(`${pad}  Commit: ${s.commit_hash.slice(0, 7)}`);
  if (s.usage) lines.push(`${pad}  Usage: ${usageLine(s.usage)}`);
  lines.push(...artifactLines(s, pad, o));
  return lines;
}

/** Summaries past this many code points are cut in the text (the JSON has them whole). */
const SUMMARY_CELLS = 100;

/**
 * The artifacts a `--step` view lists (docs/state.md §5.1): one line each, the summary's first line; the
 * content is `state export`'s.
 */
function artifactLines(s: ShowStep, pad: string, o: TextOptions): string[] {
  if (s.artifacts.length === 0) return [];
  const out = [`${pad}  Artifacts (content: tugcode state export ${shellArg(o.plan ?? '<plan>')}):`];
  for (const a of s.artifacts) {
    const first = [...(a.summary.split('\n')[0] ?? '')];
    const summary = first.length > SUMMARY_CELLS ? `${first.slice(0, SUMMARY_CELLS - 1).join('')}…` : first.join('');
    const who = [a.attempt === null ? '' : `attempt ${a.attempt}`, a.recorded_by ? `by ${owner(a.recorded_by)}` : '']
      .filter(Boolean)
      .join(', ');
    const when = a.recorded_at.replace(/\.\d+Z$/, 'Z');
    out.push(`${pad}    #${a.id} ${a.kind} ${when}${who ? ` (${who})` : ''}: ${summary}`);
  }
  return out;
}

/** What a needs_human step waits for and what a person's decision left for the next attempt (docs/state.md §3.11). */
function reviewLines(s: ShowStep, pad: string, o: TextOptions): string[] {
  const out: string[] = [];
  const sha = (c: string | null) => (c ?? '').slice(0, 12);
  if (s.status === 'needs_human') {
    out.push(`${pad}  Kept commit ${sha(s.review_commit)} waits for you:`);
    out.push(`${pad}    ${decideLine(o.plan, s.anchor)}`);
  } else if (s.human_decision === 'approved')
    out.push(`${pad}  Approved: the next run integrates ${sha(s.review_commit)} as it is`);
  if (s.human_notes !== null && s.status !== 'completed')
    out.push(`${pad}  Your notes for the next attempt: ${JSON.stringify(s.human_notes)}`);
  // A failed step stays failed until reset (docs/run.md §1.2), as a waiting one until decided: its way out.
  if (s.status === 'failed' && s.parent_anchor === null)
    out.push(`${pad}  To run it again: ${resetCommand(o.plan ?? '<plan>', s.anchor)}`);
  return out;
}

/** Each top-level step's lines with its substeps' (each step followed by an empty line), and its status. */
function stepBlocks(steps: ShowStep[], o: TextOptions): { status: string; lines: string[] }[] {
  const blocks: { status: string; lines: string[] }[] = [];
  // Indentation follows nesting; with --step the shown subtree starts at depth 0.
  const depth = new Map<string, number>();
  for (const s of steps) {
    const d = s.parent_anchor !== null && depth.has(s.parent_anchor) ? depth.get(s.parent_anchor)! + 1 : 0;
    depth.set(s.anchor, d);
    const lines = [...stepLines(s, d, o), ''];
    const block = d > 0 ? blocks[blocks.length - 1] : undefined;
    if (block) block.lines.push(...lines);
    else blocks.push({ status: s.status, lines });
  }
  return blocks;
}

/** The steps' lines, each step followed by an empty line. */
export function renderSteps(steps: ShowStep[], o: TextOptions): string[] {
  return stepBlocks(steps, o).flatMap((b) => b.lines);
}

const HELD = new Set(['claimed', 'in_progress']);

/** The blocks that fit in `budget` lines (with the `… N more` line when some are left out). */
function fitBlocks(blocks: { status: string; lines: string[] }[], budget: number): string[] {
  const shown = blocks.map(() => true);
  const size = () =>
    blocks.reduce((n, b, i) => n + (shown[i] ? b.lines.length : 0), 0) + (shown.every(Boolean) ? 0 : 2);
  const idx = blocks.map((_, i) => i);
  const order = [
    ...idx.filter((i) => blocks[i]!.status === 'completed'),
    ...idx.filter((i) => blocks[i]!.status !== 'completed' && !HELD.has(blocks[i]!.status)).reverse(),
    ...idx.filter((i) => HELD.has(blocks[i]!.status)).reverse(),
  ];
  for (const i of order) {
    if (size() <= budget) break;
    shown[i] = false;
  }
  const out = blocks.flatMap((b, i) => (shown[i] ? b.lines : []));
  const hidden = blocks.filter((_, i) => !shown[i]);
  if (hidden.length > 0) {
    const by = new Map<string, number>();
    for (const b of hidden) by.set(b.status, (by.get(b.status) ?? 0) + 1);
    const what = [...by].map(([status, n]) => `${n} ${status}`).join(', ');
    out.push(`… ${hidden.length} more step(s) not shown (${what})`, '');
  }
  return out;
}

/** At most `max` lines: the first `max - 1` and a `… N more lines` line. */
function cutLines(lines: string[], max: number | undefined): string[] {
  if (max === undefined || lines.length <= max) return lines;
  const keep = Math.max(1, max - 1);
  return [...lines.slice(0, keep), `… ${lines.length - keep} more line(s)`];
}

export function renderPlan(p: ShowPlan, o: TextOptions): string {
  const head = [`Plan: ${p.plan_path} [${paint(p.status, COLORS[p.status], o.color)}]`];
  const slug = slugOfPlanPath(p.plan_path);
  if (p.integration_target && slug)
    head.push(`Integrates into: ${targetPlace(p.integration_target, integrationBranch(slug))}`);
  head.push('');
  const { steps_completed, steps_total, percent: pct } = p.overall;
  const foot = [`Overall: ${steps_completed}/${steps_total} steps complete (${pct}%)`];
  if (p.usage) foot.push(`Usage: ${usageLine(p.usage)}`);
  const blocks = stepBlocks(p.steps, { ...o, plan: o.plan ?? p.plan_path });
  const body =
    o.maxLines === undefined
      ? blocks.flatMap((b) => b.lines)
      : fitBlocks(blocks, o.maxLines - head.length - foot.length);
  return cutLines([...head, ...body, ...foot], o.maxLines).join('\n') + '\n';
}

/** `state show` as text; `r.backend` (what the operation adds) names the store an empty answer was read from. */
export function renderShow(
  r: ShowResult & { backend?: { kind: 'sqlite' | 'postgres'; location: string } },
  o: TextOptions,
): string {
  if (r.plans.length === 0) {
    const where = r.backend?.kind === 'postgres' ? r.backend.location : 'state.db';
    return `No plans in ${where} (tugcode state init <plan>).\n`;
  }
  if (r.plans.length === 1) return renderPlan(r.plans[0]!, o);
  // Several plans: each in full, then cut to the height (the first plan's header stays on top).
  const text = r.plans.map((p) => renderPlan(p, { ...o, maxLines: undefined })).join(`\n${RULE}\n\n`);
  return o.maxLines === undefined ? text : cutLines(text.replace(/\n$/, '').split('\n'), o.maxLines).join('\n') + '\n';
}
