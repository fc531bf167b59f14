/**
 * Recorder for the envelope golden test (issue 11: "the JSON output and exit codes stay byte-identical").
 * Runs a fixed script of real CLI calls in one temp repository with every source of variation pinned (clock,
 * git identities and dates, colours, locale, global git config) and turns each call into a golden entry:
 * the argv, the exit code, stdout (a parsed JSON document when that reproduces its bytes exactly, else its
 * lines) and stderr lines, with the temp path replaced by `<REPO>`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runCli } from './cli.js';
import { tempDir } from './repo.js';

export const T0_MS = Date.parse('2026-03-01T10:00:00.000Z');

/** The state a script shares between its steps: paths, the clock, named values learned from outputs. */
export interface Session {
  root: string;
  /** A fake HOME with an empty global git config. */
  home: string;
  /** Seconds after T0. */
  clock: number;
  /** Values substituted into argv as `<NAME>` (e.g. `<WT>`); `<REPO>` is always the root. */
  vars: Record<string, string>;
}

/** One CLI call of the script. */
export interface Call {
  label: string;
  argv: string[];
  /** Working directory: a var name (`WT`) or `REPO` (default). */
  cwd?: string;
  input?: string;
  env?: Record<string, string>;
  /** Read values out of the parsed JSON output into `vars` for later calls. */
  learn?: (json: any, s: Session) => void;
  /**
   * Replace machine-dependent parts of the parsed JSON output (after the exactness check on the raw bytes)
   * and say so in the entry. Only for facts of the machine (tool versions), never of tugcode.
   */
  scrub?: (json: any) => void;
}

/** A setup action between calls (writing files, git commits, advancing the clock). */
export interface Setup {
  setup: string;
  run: (s: Session) => void;
}

export type ScriptItem = Call | Setup;

export interface Entry {
  label: string;
  cwd: string;
  argv: string[];
  now: string;
  input?: string;
  exit: number;
  /** Machine-dependent parts of `json` were replaced (see Call.scrub). */
  scrubbed?: boolean;
  /** The JSON document on stdout when `JSON.stringify(json, null, 2) + '\n'` is exactly stdout. */
  json?: unknown;
  /** Otherwise stdout split on '\n' (joining with '\n' gives the bytes back). */
  stdout?: string[];
  stderr: string[];
}

export function nowIso(s: Session): string {
  return new Date(T0_MS + s.clock * 1000).toISOString();
}

/** The environment of every process of the script: the caller's, minus anything tugcode or git reads. */
export function pinnedEnv(s: Session): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const k of Object.keys(process.env)) {
    if (/^(TUGCODE_|GIT_|LC_|XDG_)/.test(k)) env[k] = undefined;
  }
  const date = `${Math.floor(T0_MS / 1000) + s.clock} +0000`;
  return {
    ...env,
    HOME: s.home,
    LANG: 'C',
    LC_ALL: 'C',
    TZ: 'UTC',
    COLUMNS: '100',
    NO_COLOR: '1',
    FORCE_COLOR: undefined,
    TUGCODE_NOW: nowIso(s),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: join(s.home, '.gitconfig'),
    GIT_AUTHOR_NAME: 'Envelope Author',
    GIT_AUTHOR_EMAIL: 'author@example.com',
    GIT_COMMITTER_NAME: 'Envelope Committer',
    GIT_COMMITTER_EMAIL: 'committer@example.com',
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  };
}

/** git with the pinned environment (setup only). */
export function gitIn(s: Session, cwd: string, ...args: string[]): string {
  const env = Object.fromEntries(
    Object.entries({ ...process.env, ...pinnedEnv(s) }).filter(([, v]) => v !== undefined),
  );
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: env as NodeJS.ProcessEnv });
}

export function writeIn(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
}

/** A new session: a git repository on `main` with one commit at T0 and a private HOME. */
export function newSession(): Session {
  const root = realpathSync(tempDir('tugcode-envelopes-'));
  const home = realpathSync(tempDir('tugcode-envelopes-home-'));
  writeFileSync(join(home, '.gitconfig'), '');
  const s: Session = { root, home, clock: 0, vars: {} };
  gitIn(s, root, 'init', '-q', '-b', 'main');
  gitIn(s, root, 'config', 'commit.gpgsign', 'false');
  writeIn(root, { 'README.md': '# envelopes\n' });
  gitIn(s, root, 'add', '-A');
  gitIn(s, root, 'commit', '-q', '-m', 'initial');
  return s;
}

function substitute(text: string, s: Session): string {
  return text.replace(/<([A-Z0-9_]+)>/g, (m, name: string) => (name === 'REPO' ? s.root : (s.vars[name] ?? m)));
}

/** Replace every spelling of the session's temp paths with placeholders. */
export function normalize(text: string, s: Session): string {
  const pairs: [string, string][] = [
    [s.root, '<REPO>'],
    [s.home, '<HOME>'],
  ];
  let out = text;
  for (const [path, name] of pairs) {
    out = out.split(path).join(name);
    // The same path as JSON would escape it (only matters if a path ever holds a backslash or quote).
    const escaped = JSON.stringify(path).slice(1, -1);
    if (escaped !== path) out = out.split(escaped).join(name);
  }
  return out;
}

/** Run one call and turn it into a golden entry. */
export function record(call: Call, s: Session): Entry {
  const argv = call.argv.map((a) => substitute(a, s));
  const cwdName = call.cwd ?? 'REPO';
  const cwd = cwdName === 'REPO' ? s.root : s.vars[cwdName];
  if (!cwd) throw new Error(`${call.label}: no value for cwd ${cwdName}`);
  const input = call.input === undefined ? undefined : substitute(call.input, s);
  const r = runCli(argv, { cwd, env: { ...pinnedEnv(s), ...call.env }, input });
  if (call.learn) {
    if (r.json === undefined) throw new Error(`${call.label}: expected JSON to learn from:\n${r.stdout}${r.stderr}`);
    call.learn(r.json, s);
  }
  const stdout = normalize(r.stdout, s);
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    parsed = undefined;
  }
  const exact = parsed !== undefined && JSON.stringify(parsed, null, 2) + '\n' === stdout;
  if (call.scrub) {
    if (!exact) throw new Error(`${call.label}: scrub needs a JSON document on stdout:\n${stdout}${r.stderr}`);
    call.scrub(parsed);
  }
  return {
    label: call.label,
    cwd: normalize(cwd, s),
    argv: call.argv,
    now: nowIso(s),
    ...(call.input !== undefined ? { input: call.input } : {}),
    exit: r.code,
    ...(call.scrub ? { scrubbed: true } : {}),
    ...(exact ? { json: parsed } : { stdout: stdout.split('\n') }),
    stderr: normalize(r.stderr, s).split('\n'),
  };
}

/** Run a whole script; returns the entries in order. */
export function runScript(script: ScriptItem[], s: Session): Entry[] {
  const out: Entry[] = [];
  for (const item of script) {
    if ('setup' in item) item.run(s);
    else out.push(record(item, s));
  }
  return out;
}

/** The canonical text of an entry (key order included), for an exact comparison with a readable diff. */
export function entryText(e: Entry): string {
  return JSON.stringify(e, null, 2);
}
