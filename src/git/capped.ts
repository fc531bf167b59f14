/**
 * A git command's stdout read up to a byte cap (the reviewer's diff, docs/run.md §6.1): git is stopped once
 * the cap is passed, so a step that rewrote a huge file never has its whole diff held in memory. The text
 * ends on a whole UTF-8 character.
 */
import { spawn } from 'node:child_process';
import { TugError } from '../contract/errors.js';
import { gitChildEnv } from './env.js';

export interface Capped {
  text: string;
  /** More output than `maxBytes` existed (git was stopped). */
  truncated: boolean;
}

/** The byte length of `buf` without an incomplete UTF-8 sequence at its end. */
function wholeChars(buf: Buffer): number {
  let i = buf.length;
  // Back over continuation bytes (at most 3), to the lead byte of the last character.
  let k = i - 1;
  while (k >= 0 && i - k <= 4 && (buf[k]! & 0xc0) === 0x80) k--;
  if (k < 0) return i;
  const lead = buf[k]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  if (i - k < need) i = k;
  return i;
}

/** `git <args>` in `cwd`, its stdout up to `maxBytes`. A non-zero exit (not one we caused) is GitError. */
export function gitCapped(env: NodeJS.ProcessEnv, args: string[], cwd: string, maxBytes: number): Promise<Capped> {
  return new Promise((res, rej) => {
    const child = spawn('git', ['-C', cwd, ...args], { env: gitChildEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      if (truncated) return;
      out.push(d);
      size += d.length;
      if (size > maxBytes) {
        truncated = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-4096)));
    child.on('error', (e) => rej(new TugError('GitError', { args, reason: e.message })));
    child.on('close', (code) => {
      if (!truncated && code !== 0) {
        rej(new TugError('GitError', { args, exit_code: code, stderr }));
        return;
      }
      const all = Buffer.concat(out);
      const cut = truncated ? all.subarray(0, maxBytes) : all;
      res({ text: cut.subarray(0, truncated ? wholeChars(cut) : cut.length).toString('utf8'), truncated });
    });
  });
}
