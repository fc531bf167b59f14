// Shared by the state benchmarks: temp repos with plans, plan texts, and the built library.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = join(ROOT, 'bin', 'tugcode.cjs');
/** The environment of a bench's CLI and git processes: no colour, a fixed identity for its commits. */
export const RUN_ENV = {
  ...process.env,
  NO_COLOR: '1',
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@e',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@e',
};
export const lib = (p) => import(pathToFileURL(join(ROOT, 'dist', p)).href);

/** A plan of n top-level steps; step i depends on step i-gap (gap 0: no dependencies). */
export function planText(n, gap = 0, items = 1) {
  const out = [
    '## Phase 1.0: Bench {#phase-bench}',
    '',
    '**Purpose:** benchmark.',
    '',
    '### Execution Steps {#execution-steps}',
    '',
  ];
  for (let i = 1; i <= n; i++) {
    out.push(`#### Step ${i}: Step ${i} {#step-${i}}`, '');
    out.push(`**Depends on:** ${gap > 0 && i > gap ? `#step-${i - gap}` : 'none'}`, '');
    out.push('**Tasks:**', ...Array.from({ length: items }, (_, k) => `- [ ] task ${k}`), '');
  }
  return out.join('\n') + '\n';
}

const made = [];
process.on('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A temp directory removed when the process exits. */
export function tempDir(prefix = 'tugcode-bench-') {
  const d = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(d);
  return d;
}

export function tempRepo(files) {
  const root = join(tempDir(), 'repo');
  mkdirSync(root);
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'b',
    GIT_AUTHOR_EMAIL: 'b@e',
    GIT_COMMITTER_NAME: 'b',
    GIT_COMMITTER_EMAIL: 'b@e',
  };
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root });
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  execFileSync('git', ['add', '-A'], { cwd: root });
  execFileSync('git', ['commit', '-q', '-m', 'bench'], { cwd: root, env });
  return root;
}

export function cli(args, cwd, env = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`tugcode ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/**
 * `node …argv` as a child process that runs beside others (claimers): resolves with its stdout and wall time,
 * rejects with its stderr when it exits non-zero.
 */
export function runNode(argv, { cwd, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn(process.execPath, argv, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('close', (code) => {
      if (code !== 0) reject(new Error(`node ${argv.join(' ')} exited ${code}: ${err || out}`));
      else resolve({ out, ms: performance.now() - t0 });
    });
  });
}

export { median } from './lib.mjs';

/** A state context on `root` for in-process calls (system clock). */
export async function stateCtx(root, command = 'bench') {
  const { openStateContext } = await lib('state/sqlite-open.js');
  const { WarningSink } = await lib('contract/envelope.js');
  const { CONFIG_DEFAULTS } = await lib('config/defaults.js');
  const { systemClock } = await lib('clock.js');
  return openStateContext({
    repoRoot: root,
    workTree: root,
    clock: systemClock(),
    config: JSON.parse(JSON.stringify(CONFIG_DEFAULTS)),
    warnings: new WarningSink(),
    command,
    mode: 'write',
    env: process.env,
    cwd: root,
  });
}
