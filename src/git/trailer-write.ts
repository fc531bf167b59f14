/**
 * Writes the Tug-* trailers of a step commit with git's own trailer support (`git interpret-trailers`),
 * so the block is found and formatted exactly as git (and reconcile's `%(trailers)`) reads it.
 * Existing Tug-* trailers are replaced; every other line of the message is kept byte for byte.
 */
import { TugError } from '../contract/errors.js';
import type { GitRunner } from './exec.js';
import { isTugTrailerKey } from './trailers.js';

export interface TrailerSpec {
  key: string;
  value: string;
}

/** Reject values that would break a trailer line. */
function checkValue(t: TrailerSpec): void {
  if (/[\r\n\0]/.test(t.value) || t.value.trim() === '') {
    throw new TugError('InvalidArgument', {
      reason: `trailer ${t.key} needs a one-line, non-empty value`,
      value: t.value,
    });
  }
}

/** The trailers git sees in `message`, as `[key, value]` pairs (continuation lines unfolded). */
async function parseTrailers(g: GitRunner, message: string, cwd: string): Promise<[string, string][]> {
  const out = await g.run(['interpret-trailers', '--parse', '--no-divider'], cwd, { input: message });
  const pairs: [string, string][] = [];
  for (const line of out.split('\n')) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    pairs.push([line.slice(0, i).trim(), line.slice(i + 1).trim()]);
  }
  return pairs;
}

/** Normalize a user message: no NUL, CRLF → LF, no trailing blank lines; must not be empty. */
function normalizeMessage(message: string): string {
  if (message.includes('\0'))
    throw new TugError('InvalidArgument', { reason: 'the commit message contains a NUL byte' });
  const m = message.replace(/\r\n/g, '\n').replace(/\s+$/, '');
  if (m.trim() === '') throw new TugError('InvalidArgument', { reason: 'the commit message is empty' });
  return m.replace(/^\n+/, '') + '\n';
}

/** Whitespace git trims off a trailer's value (C isspace). */
const GIT_SPACE = /^[ \t\n\v\f\r]|[ \t\n\v\f\r]$/;

/**
 * What `git interpret-trailers --no-divider --where end --if-exists add --if-missing add` makes of a
 * normalized one-line message without any `tug-` in it: git never reads a message's first paragraph (its
 * title) as trailers, so the trailers go after a blank line, each `<key>: <value>`. Null for any other
 * message, or a value git would trim (ask git). Valid only where git has no `trailer.*` configuration, which
 * may rename a key or run a command for it.
 */
export function trailersAfterTitle(msg: string, trailers: TrailerSpec[]): string | null {
  if (msg.indexOf('\n') !== msg.length - 1 || /tug-/i.test(msg)) return null;
  if (trailers.some((t) => GIT_SPACE.test(t.value))) return null;
  return `${msg}\n${trailers.map((t) => `${t.key}: ${t.value}\n`).join('')}`;
}

/**
 * Returns `message` with every Tug-* trailer removed and `trailers` appended (in order), using
 * `git interpret-trailers`. Removal replaces one existing Tug-* trailer with an empty value at a time
 * (`--if-exists replace` + `--trim-empty`), so git decides what the trailer block is. `unconfigured`: the
 * caller knows git has no `trailer.*` configuration, so a one-line message gets its trailers without a git
 * process (trailersAfterTitle), byte for byte as git writes them.
 */
export async function withTugTrailers(
  g: GitRunner,
  message: string,
  trailers: TrailerSpec[],
  cwd: string,
  o: { unconfigured?: boolean | undefined } = {},
): Promise<string> {
  trailers.forEach(checkValue);
  let msg = normalizeMessage(message);
  const fast = o.unconfigured ? trailersAfterTitle(msg, trailers) : null;
  if (fast !== null) return fast;
  // No "tug-" anywhere: no Tug-* trailer to remove, and no git call to find out.
  let existing = /tug-/i.test(msg) ? (await parseTrailers(g, msg, cwd)).filter(([k]) => isTugTrailerKey(k)) : [];
  for (let guard = existing.length + 1; existing.length > 0 && guard > 0; guard--) {
    const key = existing[0]![0];
    msg = await g.run(
      ['interpret-trailers', '--no-divider', '--if-exists', 'replace', '--trim-empty', '--trailer', `${key}: `],
      cwd,
      { input: msg },
    );
    existing = (await parseTrailers(g, msg, cwd)).filter(([k]) => isTugTrailerKey(k));
  }
  if (existing.length > 0) {
    throw new TugError('GitError', {
      args: ['interpret-trailers'],
      reason: 'could not remove the existing Tug-* trailers',
      trailers: existing,
    });
  }
  const args = ['interpret-trailers', '--no-divider', '--if-exists', 'add', '--if-missing', 'add', '--where', 'end'];
  for (const t of trailers) args.push('--trailer', `${t.key}: ${t.value}`);
  return g.run(args, cwd, { input: msg });
}
