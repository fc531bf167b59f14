/**
 * The only place git is spawned. Uses child_process directly (execa and simple-git cost 25–95 ms of
 * import time, 07-quality.md §2), synchronously for the short calls on command paths.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { TugError } from '../contract/errors.js';

export interface GitResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Environment for git children: never prompt, stable output. */
function gitEnv(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', ...extra };
}

/** Run git; never throws for a non-zero exit (the caller decides). Throws GitError if git cannot start. */
export function gitTry(args: string[], cwd: string, opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): GitResult {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    input: opts.input,
    env: gitEnv(opts.env),
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (r.error) throw new TugError('GitError', { args, reason: r.error.message });
  return { status: r.status ?? 128, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** Run git and return stdout; a non-zero exit is GitError. */
export function git(args: string[], cwd: string, opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const r = gitTry(args, cwd, opts);
  if (r.status !== 0) throw new TugError('GitError', { args, stderr: r.stderr, exit_code: r.status, cwd });
  return r.stdout;
}

/** `git --version` as [major, minor, patch], or null when git is missing. */
export function gitVersion(): [number, number, number] | null {
  try {
    const out = execFileSync('git', ['--version'], { encoding: 'utf8' });
    const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(out);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : null;
  } catch {
    return null;
  }
}

/** Run git and return stdout as bytes (blobs, plan files hashed as bytes); a non-zero exit is GitError. */
export function gitBytes(args: string[], cwd: string, opts: { env?: NodeJS.ProcessEnv; input?: string } = {}): Buffer {
  const r = spawnSync('git', args, {
    cwd,
    env: gitEnv(opts.env),
    input: opts.input ?? '',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (r.error) throw new TugError('GitError', { args, reason: r.error.message });
  if (r.status !== 0) throw new TugError('GitError', { args, stderr: String(r.stderr), exit_code: r.status, cwd });
  return r.stdout;
}
