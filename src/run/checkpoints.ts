/**
 * Checkpoints as verification (docs/run.md §3): which checkpoint items are commands, and running one.
 */
import { runChild } from './child.js';
import type { ChildOutcome } from './types.js';

/**
 * The command of a checkpoint item, or null when the item is not one: its text, trimmed, must be exactly
 * one code span and nothing else, and the span must not start with `<` (a placeholder such as `<cmd>`).
 * A span opens with a run of N backticks and closes at the next run of exactly N; as in CommonMark, one
 * leading and one trailing space are stripped when both are present and the content is not all spaces
 * (so ``` `` a`b `` ``` is `a`b`).
 */
export function checkpointCommand(text: string): string | null {
  const t = text.trim();
  const open = /^`+/.exec(t)?.[0];
  if (!open) return null;
  const n = open.length;
  // The closing run: exactly n backticks at the very end of the text, not preceded by another backtick.
  if (t.length < 2 * n + 1 || !t.endsWith(open) || t[t.length - n - 1] === '`') return null;
  let body = t.slice(n, t.length - n);
  // No run of exactly n backticks inside the body (it would close the span early, leaving text after it).
  for (const m of body.matchAll(/`+/g)) if (m[0].length === n) return null;
  body = body.replace(/\r?\n/g, ' ');
  if (body.length >= 2 && body.startsWith(' ') && body.endsWith(' ') && body.trim() !== '') body = body.slice(1, -1);
  const cmd = body.trim();
  if (cmd === '' || cmd.startsWith('<')) return null;
  return cmd;
}

export interface CheckpointRunOptions {
  command: string;
  cwd: string;
  /** The complete environment of the command. */
  env: Record<string, string | undefined>;
  timeoutMs: number;
  logPath: string;
  signal?: AbortSignal;
}

/** Runs one checkpoint command with `sh -c` in its own process group (exit 0 = the item holds). */
export function runCheckpoint(o: CheckpointRunOptions): Promise<ChildOutcome> {
  return runChild({
    argv: ['sh', '-c', o.command],
    cwd: o.cwd,
    env: o.env,
    timeoutMs: o.timeoutMs,
    logPath: o.logPath,
    ...(o.signal ? { signal: o.signal } : {}),
  });
}
