/**
 * One run of the reviewer (docs/run.md §6.1–§6.2): the configured command or a read-only agent preset, in
 * the worker's worktree, with the implementer's environment plus TUG_REVIEW_ROUND, the review brief on
 * stdin (the step's brief plus `review`), and its verdict read from the last non-empty line of its stdout
 * (an agent's: of its final message).
 */
import { open, writeFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { runChild } from './child.js';
import {
  clearUsageOut,
  implementerArgv,
  implementerEnv,
  readUsageOut,
  throwIfNotStarted,
  type ImplementerVars,
  type UsageReport,
} from './implementer.js';
import type { AgentName } from './agents.js';
import type { ChildOutcome, ReviewBrief, ReviewVerdict } from './types.js';

/** How much of a reviewer's stdout (or final message) is searched for the verdict line. */
const VERDICT_SCAN_BYTES = 64 * 1024;

export interface ReviewerRunOptions {
  /** The reviewer: a command, or an agent preset. */
  which: { reviewer: string | null; reviewAgent: AgentName | null };
  brief: ReviewBrief;
  cwd: string;
  baseEnv: NodeJS.ProcessEnv;
  vars: ImplementerVars;
  /** The brief's JSON file (TUG_STEP_JSON). */
  briefPath: string;
  /** stderr (a command's) or all output (an agent's). */
  logPath: string;
  /** A command's stdout, where its verdict is. */
  stdoutPath: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** Names the reviewer's process group once it runs (run/child.ts). */
  pidRecord: import('../git/git-thread.js').PidRecord;
  agentAllow: string[];
  /** REVISE verdicts an attempt may get (the agent's prompt says so). */
  rounds: number;
}

/**
 * The outcome of a reviewer run, with the text its verdict is read from (null: none) and what it used
 * (docs/run.md §7.1: an agent's own report, a command's through TUG_USAGE_OUT).
 */
export type ReviewerOutcome = ChildOutcome & {
  text: string | null;
  /** `text` is the end of a longer output (VERDICT_SCAN_BYTES). */
  text_cut?: boolean;
} & UsageReport;

/** The last `bytes` of a file; `cut` when the text starts inside a line (the byte before it is no newline). */
async function tailOf(path: string, bytes: number): Promise<{ text: string; cut: boolean }> {
  const f = await open(path, 'r').catch(() => null);
  if (!f) return { text: '', cut: false };
  try {
    const end = (await f.stat()).size;
    // One byte more than the window, when there is one: whether the window begins a line.
    const buf = Buffer.alloc(Math.min(bytes + 1, end));
    if (buf.length) await f.read(buf, 0, buf.length, end - buf.length);
    if (end <= bytes) return { text: buf.toString('utf8'), cut: false };
    return { text: buf.subarray(1).toString('utf8'), cut: buf[0] !== 0x0a };
  } finally {
    await f.close();
  }
}

export async function runReviewer(o: ReviewerRunOptions): Promise<ReviewerOutcome> {
  const baseEnv = { ...o.baseEnv, TUG_REVIEW_ROUND: String(o.brief.review.round) };
  if (o.which.reviewAgent) {
    const [{ runAgent, reviewerArgv }, { reviewerPrompt }] = await Promise.all([
      import('./agents.js'),
      import('./review-prompt.js'),
    ]);
    const out = await runAgent(
      o.which.reviewAgent,
      {
        cwd: o.cwd,
        baseEnv,
        vars: o.vars,
        brief: o.brief,
        briefPath: o.briefPath,
        timeoutMs: o.timeoutMs,
        logPath: o.logPath,
        signal: o.signal,
        pidRecord: o.pidRecord,
        agentAllow: o.agentAllow,
      },
      {
        argv: reviewerArgv,
        prompt: reviewerPrompt(o.brief, {
          worktree: o.vars.worktree,
          briefPath: o.briefPath,
          rounds: o.rounds,
          notes: o.which.reviewAgent === 'claude',
        }),
        relay: ['artifact'],
      },
    );
    return { ...out, text: out.final_message };
  }
  const argv = implementerArgv(o.which.reviewer ?? '');
  const json = JSON.stringify(o.brief, null, 2) + '\n';
  await mkdir(dirname(o.briefPath), { recursive: true });
  await writeFile(o.briefPath, json);
  // As for the implementer: a reviewer that writes no usage must not report an earlier run's.
  await clearUsageOut(o.briefPath);
  const out = await runChild({
    argv,
    cwd: o.cwd,
    env: implementerEnv(baseEnv, o.vars, o.brief, o.briefPath),
    input: json,
    timeoutMs: o.timeoutMs,
    logPath: o.logPath,
    stdoutPath: o.stdoutPath,
    signal: o.signal,
    pidRecord: o.pidRecord,
  });
  throwIfNotStarted(out, argv[0]!, 'the reviewer');
  const [tail, used] = await Promise.all([tailOf(o.stdoutPath, VERDICT_SCAN_BYTES), readUsageOut(o.briefPath)]);
  return { ...out, text: tail.text, text_cut: tail.cut, ...used };
}

/** A verdict, or why the text holds none. */
export type VerdictParse = { ok: true; verdict: ReviewVerdict } | { ok: false; why: string };

function clip(s: string, max = 200): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/**
 * The verdict on the last non-empty line of `text` (docs/run.md §6.2); `cut`: the text is the end of a longer
 * output. A closing code fence after it is
 * skipped, so an agent that fences its JSON line is still understood; anything else is no verdict.
 */
export async function parseVerdict(text: string | null, cut = false): Promise<VerdictParse> {
  const lines = (text ?? '').split(/\r?\n/).map((l) => l.trim());
  while (lines.length && (lines.at(-1) === '' || /^```\s*$/.test(lines.at(-1)!))) lines.pop();
  const last = lines.at(-1);
  if (!last) return { ok: false, why: 'it printed nothing' };
  // The one line left of a cut text began before the window: whatever it says, it was not read whole.
  if (cut && lines.length === 1)
    return {
      ok: false,
      why: `its last line is longer than ${VERDICT_SCAN_BYTES / 1024} KiB, the most a verdict line may be`,
    };
  let value: unknown;
  try {
    value = JSON.parse(last);
  } catch {
    return { ok: false, why: `its last line is not JSON: ${clip(last)}` };
  }
  const { reviewVerdictSchema } = await import('../contract/schemas/run.js');
  const r = reviewVerdictSchema.safeParse(value);
  if (r.success) return { ok: true, verdict: r.data };
  const issue = r.error.issues[0]!;
  const where = issue.path.length ? `${issue.path.join('.')}: ` : '';
  return { ok: false, why: `its last line is not a verdict (${where}${issue.message}): ${clip(last)}` };
}
