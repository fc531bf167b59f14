/** Helpers of the driver tests: a repository with a committed plan, a scripted implementer, the CLI run. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI } from '../helpers/cli.js';
import { DRIVER, planText as buildPlan } from '../helpers/plan.js';
import { git, tempDir } from '../helpers/repo.js';

export const T0 = '2026-03-01T10:00:00.000Z';

export { step, initializedRepo as runRepo } from '../helpers/plan.js';

/** A plan of driver-test steps (`step`). */
export function planText(steps: string[]): string {
  return buildPlan(steps, DRIVER);
}

/**
 * A bare `remote.git` cloned from `seed` (a repository holding the plan), and a clone of it per name, side
 * by side in one new directory: hosts sharing a remote. `identity`: each clone commits as its own name.
 */
export function remoteWithClones<N extends string>(
  seed: string,
  names: readonly N[],
  o: { identity?: boolean } = {},
): { dir: string; remote: string } & Record<N, string> {
  const dir = tempDir('tugcode-remote-');
  const remote = join(dir, 'remote.git');
  git(dir, 'clone', '-q', '--bare', seed, remote);
  const clones = {} as Record<N, string>;
  for (const name of names) {
    const path = join(dir, name);
    git(dir, 'clone', '-q', remote, path);
    if (o.identity) {
      git(path, 'config', 'user.name', name);
      git(path, 'config', 'user.email', `${name}@example.invalid`);
    }
    clones[name] = path;
  }
  return { dir, remote, ...clones };
}

/**
 * A scripted implementer: writes `<step>.txt`, records which step files it saw in `$SEEN_DIR`, and fails
 * while `$FAIL_DIR/<step>` exists (the file holds how many more times, default once). A shell script: a
 * node start costs ~0.1 s of CPU, and runs call the implementer once per step.
 */
export function implementerScript(): { argv: string; seen: string; failDir: string } {
  const dir = tempDir('tugcode-impl-');
  const seen = join(dir, 'seen');
  const failDir = join(dir, 'fail');
  mkdirSync(seen);
  mkdirSync(failDir);
  const script = join(dir, 'impl.sh');
  writeFileSync(
    script,
    `#!/bin/sh
step="$TUG_STEP"
brief=$(cat)
# The brief (JSON, two-space indented) names this step at its top level.
case "$brief" in
  *"
  \\"step_anchor\\": \\"$step\\","*) ;;
  *) echo 'brief mismatch' >&2; exit 3 ;;
esac
files=$(ls -A "$TUG_WORKTREE" | grep -E '^step-[0-9-]+[.]txt$' | LC_ALL=C sort | sed 's/.*/"&"/' | paste -sd, -)
printf '{"attempt":%s,"files":[%s]}\\n' "$TUG_ATTEMPT" "$files" >> '${seen}'/"$step"
fail='${failDir}'/"$step"
if [ -e "$fail" ]; then
  n=$(cat "$fail"); n=\${n:-1}
  if [ "$n" -le 1 ]; then rm -f "$fail"; else echo $((n - 1)) > "$fail"; fi
  echo "working on $step"; echo 'implementer failed on purpose' >&2; exit 1
fi
echo "$step" > "$TUG_WORKTREE/$step.txt"
echo "done $step"
`,
    { mode: 0o755 },
  );
  return { argv: JSON.stringify(script), seen, failDir };
}

export function seenBy(seen: string): Record<string, { attempt: number; files: string[] }[]> {
  const out: Record<string, { attempt: number; files: string[] }[]> = {};
  for (const f of readdirSync(seen))
    out[f] = readFileSync(join(seen, f), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
  return out;
}

export interface RunResult {
  code: number | null;
  events: any[];
  stdout: string;
  stderr: string;
}

/** The environment of a run the tests start: no colour, a fixed git identity. */
export const baseEnv = (env: Record<string, string> = {}) => ({
  ...process.env,
  NODE_ENV: 'test',
  NO_COLOR: '1',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.invalid',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.invalid',
  ...env,
});

/** `tugcode run … --json` to the end: its JSON Lines parsed. */
export function runJsonl(cwd: string, args: string[], env: Record<string, string> = {}): RunResult {
  const r = spawnSync(process.execPath, [CLI, 'run', ...args, '--json'], {
    cwd,
    env: baseEnv(env),
    encoding: 'utf8',
    timeout: 180_000,
  });
  return { code: r.status, events: parseLines(r.stdout), stdout: r.stdout, stderr: r.stderr };
}

export function parseLines(stdout: string): any[] {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** Start `tugcode run … --json` (`text`: without --json) in the background; resolves when it exits. */
export function startRun(cwd: string, args: string[], env: Record<string, string> = {}, o: { text?: boolean } = {}) {
  const json = o.text ? [] : ['--json'];
  const child = spawn(process.execPath, [CLI, 'run', ...args, ...json], { cwd, env: baseEnv(env) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<RunResult>((res) =>
    child.on('exit', (code, signal) =>
      res({ code: code ?? (signal ? -1 : null), events: o.text ? [] : parseLines(stdout), stdout, stderr }),
    ),
  );
  return {
    child,
    done,
    events: () => parseLines(stdout.split('\n').slice(0, -1).join('\n')),
    /** The output so far (text mode's lines). */
    stdout: () => stdout,
    stderr: () => stderr,
  };
}

/** `Tug-Step` trailers of the commits on `branch`, oldest first. */
export function stepCommits(root: string, branch: string): string[] {
  return git(root, 'log', '--reverse', '--format=%(trailers:key=Tug-Step,valueonly)', branch)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/**
 * A node implementer whose body is `code` (an ES module; `step`, `wt`, `attempt`, `dir` are in scope, and
 * the node:fs / node:path functions below are imported). `dir` is a scratch directory outside the repo.
 */
export function nodeImplementer(code: string): { argv: string; dir: string } {
  const dir = tempDir('tugcode-impl-');
  const script = join(dir, 'impl.mjs');
  writeFileSync(
    script,
    `import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const step = process.env.TUG_STEP, wt = process.env.TUG_WORKTREE, attempt = Number(process.env.TUG_ATTEMPT);
const dir = ${JSON.stringify(dir)};
readFileSync(0, 'utf8');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
${code}
`,
  );
  return { argv: `node ${JSON.stringify(script)}`, dir };
}

/** Every ref of the repository with its hash, and its worktrees: what "nothing changed" compares. */
export function gitSnapshot(root: string): { refs: string; worktrees: string } {
  return {
    refs: git(root, 'for-each-ref', '--format=%(refname) %(objectname)'),
    worktrees: git(root, 'worktree', 'list', '--porcelain'),
  };
}

/** Wait until `pred` holds (polling), or throw after `ms`. */
export async function waitFor(pred: () => boolean, ms = 20_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// ---------------------------------------------------------------------------------------------------------
// Kill / signal tests (tests/run/kill.test.ts): an implementer that can be held mid-step, and polling.
// ---------------------------------------------------------------------------------------------------------

/**
 * Like implementerScript, and it can be held: it first writes `$started/<step>-a<attempt>` (its pid), then,
 * while `$hold/<step>-a<attempt>` exists, it sleeps (at most 120 s), then does the step's edit.
 */
export function holdingImplementer(): { argv: string; seen: string; started: string; hold: string } {
  const dir = tempDir('tugcode-hold-');
  const seen = join(dir, 'seen');
  const started = join(dir, 'started');
  const hold = join(dir, 'hold');
  for (const d of [seen, started, hold]) mkdirSync(d);
  const script = join(dir, 'impl.mjs');
  writeFileSync(
    script,
    `import { appendFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const step = process.env.TUG_STEP, wt = process.env.TUG_WORKTREE, attempt = process.env.TUG_ATTEMPT;
const files = readdirSync(wt).filter((f) => /^step-[0-9-]+\\.txt$/.test(f)).sort();
appendFileSync(join(${JSON.stringify(seen)}, step), JSON.stringify({ attempt: Number(attempt), files }) + '\\n');
writeFileSync(join(${JSON.stringify(started)}, step + '-a' + attempt), String(process.pid));
const hold = join(${JSON.stringify(hold)}, step + '-a' + attempt);
const until = Date.now() + 120000;
while (existsSync(hold) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
writeFileSync(join(wt, step + '.txt'), step + '\\n');
console.log('done ' + step);
`,
  );
  return { argv: `node ${JSON.stringify(script)}`, seen, started, hold };
}

/** Polls `pred` every 50 ms until it returns a truthy value (returned), or throws after `ms`. */
export async function waitUntil<T>(what: string, pred: () => T, ms = 60_000): Promise<NonNullable<T>> {
  const until = Date.now() + ms;
  for (;;) {
    const v = pred();
    if (v) return v as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether process group `pgid` still has a member that is not a zombie (Linux /proc; else kill 0). */
export function groupAlive(pgid: number): boolean {
  // 0 or 1 would ask about this process's own group or init's: a test read a pid too early.
  if (!Number.isInteger(pgid) || pgid <= 1) throw new Error(`not a process group id: ${pgid}`);
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${p}/stat`, 'utf8');
    } catch {
      continue;
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(f[2]) === pgid && f[0] !== 'Z') return true;
  }
  return false;
}

/** `tugcode <args> --json` (not `run`) in `cwd`, its JSON parsed. */
export function tugJson(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): { code: number | null; json: any; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, '--json'], { cwd, env: baseEnv(env), encoding: 'utf8' });
  let json: any;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { code: r.status, json, stderr: r.stderr };
}
