/**
 * Runs the built CLI as a real child process (`npm test` builds first, in `pretest`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import type { z } from 'zod';
import { schemaFor, errorEnvelope } from '../../src/contract/schemas/index.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = join(ROOT, 'bin', 'tugcode.cjs');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Parsed stdout when it is JSON, else undefined. */
  json: any;
}

export interface RunOpts {
  cwd: string;
  env?: Record<string, string | undefined>;
  input?: string;
}

export function runCli(args: string[], opts: RunOpts): CliResult {
  const env: Record<string, string | undefined> = { ...process.env, NODE_ENV: 'test', NO_COLOR: '1', ...opts.env };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: opts.cwd,
    env: env as NodeJS.ProcessEnv,
    input: opts.input ?? '',
    encoding: 'utf8',
    timeout: 120_000,
  });
  let json: unknown;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, json };
}

export interface AsyncCliResult {
  code: number | null;
  /** Parsed stdout when it is JSON, else undefined. */
  json: any;
  stderr: string;
}

/**
 * `tugcode …args --json` as a child process that runs beside others (races, several hosts); `onSpawn` gets its
 * pid (a race's gate watches what the process has open).
 */
export function cliAsync(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
  onSpawn?: (pid: number) => void,
): Promise<AsyncCliResult> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args, '--json'], {
      cwd,
      env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (p.pid !== undefined) onSpawn?.(p.pid);
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('close', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(out);
      } catch {
        json = undefined;
      }
      resolve({ code, json, stderr: err });
    });
  });
}

/**
 * Run with --json and check the contract: exactly one JSON document, validated against the command's
 * zod schema (success) or the error envelope (failure), exit code 0 iff status ok. `run`: the real CLI, or
 * runCliInProcess (tests/helpers/cli-in-process.ts).
 */
export function runJson(
  command: string,
  args: string[],
  opts: RunOpts,
  run: (args: string[], opts: RunOpts) => CliResult = runCli,
): CliResult {
  const r = run([...args, '--json'], opts);
  expect(r.json, `stdout is one JSON document:\n${r.stdout}\nstderr:\n${r.stderr}`).toBeDefined();
  if (r.json.status === 'ok') {
    expect(r.code).toBe(0);
    checkSchema(schemaFor(command), r.json);
  } else {
    expect(r.code).not.toBe(0);
    checkSchema(errorEnvelope, r.json);
    expect(r.json.command).toBe(command);
    expect(r.stderr).toContain(`tugcode: ${r.json.error.code}: `);
  }
  return r;
}

export function checkSchema(schema: z.ZodTypeAny, value: unknown): void {
  const res = schema.safeParse(value);
  if (!res.success) {
    throw new Error(
      `output does not match its schema: ${JSON.stringify(res.error.issues.slice(0, 5), null, 2)}\n${JSON.stringify(value, null, 2).slice(0, 3000)}`,
    );
  }
}

/** Expect an error envelope with this code and exit code. */
export function expectError(r: CliResult, code: string, exit: number): void {
  expect(r.json?.status, r.stdout + r.stderr).toBe('error');
  expect(r.json.error.code).toBe(code);
  expect(r.code).toBe(exit);
}
