/**
 * Kernel test helpers: temp workspaces and byte-level tree snapshots.
 */
import {
  mkdtempSync,
  mkdirSync,
  writeFileSync,
  readdirSync,
  readFileSync,
  lstatSync,
  cpSync,
  realpathSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFile, spawnSync } from 'node:child_process';
import { KernelError } from '../../src/kernel/errors.js';
import { afterEachFile } from '../helpers/file-hooks.js';

// The workspaces of a test file are removed after it (tests/helpers/file-hooks.ts).
const made: string[] = [];
afterEachFile(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

function workspaceDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tug-test-'));
  made.push(dir);
  return dir;
}

export function tempWs(files: Record<string, string | Uint8Array> = {}): string {
  const dir = workspaceDir();
  writeTree(dir, files);
  return dir;
}

export function writeTree(dir: string, files: Record<string, string | Uint8Array>): void {
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), c);
  }
}

/** A private temp directory, a child's TMPDIR: what the child leaves there is visible. Removed after the file. */
export function privateTmp(): string {
  return realpathSync(workspaceDir());
}

const TUG = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'tug.js');

/**
 * The built `bin/tug.js` as a child process (`npm test` builds first), asynchronously, so the test's event
 * loop keeps running; `json` is stdout parsed, when it is JSON.
 */
export function tugChild(
  args: string[],
  cwd: string,
  env: Record<string, string | undefined>,
): Promise<{ code: number; json: any; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [TUG, ...args],
      { cwd, env, encoding: 'utf8', timeout: 120_000 },
      (err, stdout, stderr) => {
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        const code = err ? ((err as { code?: number }).code ?? -1) : 0;
        resolve({ code: typeof code === 'number' ? code : -1, json, stdout, stderr });
      },
    );
  });
}

export function copyTree(src: string): string {
  const dir = workspaceDir();
  cpSync(src, dir, { recursive: true });
  return dir;
}

/** Every file under dir (relative path → bytes as hex-free Buffer string), skipping excluded dirs. */
export function readTree(dir: string, skip: string[] = ['.git', '.tug']): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (skip.includes(name)) continue;
      const st = lstatSync(join(dir, r));
      if (st.isDirectory()) walk(r);
      else out[r] = readFileSync(join(dir, r)).toString('latin1');
    }
  };
  walk('');
  return out;
}

export function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

export function gitInit(cwd: string): void {
  git(cwd, 'init', '-q');
  git(cwd, 'add', '-A');
  git(cwd, 'commit', '-qm', 'init', '--no-gpg-sign');
}

/** A strict, emit-free tsconfig.json shared by the kernel's TypeScript fixtures. */
export const TSCONFIG = JSON.stringify({
  compilerOptions: {
    strict: true,
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'Bundler',
    lib: ['ES2022'],
    noEmit: true,
  },
});

/** UTF-16 offset of the `nth` (0-based) occurrence of `needle` in `src`; throws when there is none. */
export function offsetOf(src: string, needle: string, nth = 0): number {
  let i = -1;
  for (let k = 0; k <= nth; k++) i = src.indexOf(needle, i + 1);
  if (i === -1) throw new Error(`${needle} not found`);
  return i;
}

/** The KernelError a promise rejects with (any other rejection, or none, fails the test). */
export async function failure(p: Promise<unknown>): Promise<KernelError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof KernelError) return e;
    throw e;
  }
  throw new Error('expected a KernelError');
}

/**
 * The environment a front door would inject (the kernel never reads process.env): this process's, without
 * the kernel's own TUG_* / TUGCODE_* variables, so a developer's settings never reach a test.
 */
export function kernelEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(TUG_|TUGCODE_)/.test(k)) out[k] = v;
  return { ...out, ...extra };
}
