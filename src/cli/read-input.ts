/**
 * Text inputs from a file or stdin, read up to a bound and no further (docs/quality.md: every input has a
 * bound): `/dev/zero` or an endless pipe ends in InvalidArgument after `maxBytes`, never in a hang or an
 * out-of-memory abort. A terminal on stdin is refused (a command never waits for typing).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { TugError } from '../contract/errors.js';
import { sleepSync } from '../util/sleep-sync.js';

const CHUNK = 64 * 1024;
/**
 * A documented stdin input is read to its end (docs/output.md §1: such a command may wait on stdin), as
 * slowly as its writer writes. Only a pipe that stays open and silent this long is refused, never cut
 * short: a pause is not the end of the input.
 */
const SILENCE_MS = 600_000;

function readFd(fd: number, maxBytes: number, what: string): string {
  const chunks: Buffer[] = [];
  let total = 0;
  let waited = 0;
  for (;;) {
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, maxBytes + 1 - total));
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EOF') break;
      // A non-blocking pipe whose writer has not written (yet, or again): wait for it, 10–100 ms at a time.
      if (code === 'EAGAIN' && waited < SILENCE_MS) {
        const pause = Math.min(100, 10 + waited / 10);
        sleepSync(pause);
        waited += pause;
        continue;
      }
      if (code === 'EAGAIN')
        throw new TugError('InvalidArgument', {
          reason: `${what} stayed open with no data for ${SILENCE_MS / 60_000} minutes (after ${total} bytes); nothing was changed`,
        });
      throw e;
    }
    if (n === 0) break;
    waited = 0;
    chunks.push(buf.subarray(0, n));
    total += n;
    if (total > maxBytes)
      throw new TugError('InvalidArgument', {
        reason: `${what} is larger than ${maxBytes} bytes; nothing was changed`,
      });
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

/** Read stdin (documented stdin inputs only), at most `maxBytes`. */
export function readStdinBounded(what: string, maxBytes: number, isTTY: boolean): string {
  if (isTTY) {
    throw new TugError('InvalidArgument', {
      reason: `${what} reads stdin, but stdin is a terminal; pipe the input in`,
    });
  }
  try {
    return readFd(0, maxBytes, `stdin of ${what}`);
  } catch (e) {
    if (e instanceof TugError) throw e;
    throw new TugError('InvalidArgument', { reason: `cannot read stdin for ${what}: ${(e as Error).message}` });
  }
}

/** A file argument (`-` = stdin), at most `maxBytes`. */
export function readFileBounded(flag: string, path: string, maxBytes: number, stdinIsTTY: boolean): string {
  if (path === '-') return readStdinBounded(flag, maxBytes, stdinIsTTY);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw new TugError(
      'InvalidArgument',
      { reason: `${flag} ${path}: ${(e as Error).message}`, argument: flag },
      {
        hint: `${flag} names a file this user can read (a relative path is read from the current directory), or - for stdin`,
      },
    );
  }
  try {
    return readFd(fd, maxBytes, `${flag} ${path}`);
  } catch (e) {
    if (e instanceof TugError) throw new TugError('InvalidArgument', { ...e.details, argument: flag });
    throw new TugError('InvalidArgument', { reason: `${flag} ${path}: ${(e as Error).message}`, argument: flag });
  } finally {
    closeSync(fd);
  }
}
