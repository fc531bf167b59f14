/**
 * What confines an agent implementer to its worktree (docs/agents.md §1): the
 * literal owner arguments its prompt and its allow rules share, the agent's scratch space inside the
 * worktree (`.tug/`, a runtime path every commit excludes), the `tugcode` launcher first on its PATH (in a
 * directory of the driver's outside the worktree), and the command rules a preset hands the agent CLI.
 */
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENT_DIR } from '../contract/layout.js';
import { withoutPassword } from '../config/state-url.js';
import { checkpointCommand } from './checkpoints.js';
import type { StepBrief } from './types.js';

/** The `tugcode state` subcommands an agent may run (its own step's progress; never complete, fail, …). */
export const AGENT_STATE_COMMANDS = ['update', 'artifact', 'heartbeat'] as const;

/** git subcommands denied explicitly, so that no user or project setting can allow them (docs/agents.md §1.3). */
export const DENIED_GIT = ['push', 'commit', 'rebase', 'reset', 'checkout', 'switch', 'merge', 'worktree'] as const;

/** `tugcode state` subcommands that are not the agent's: denied explicitly as well. */
export const DENIED_STATE = [
  'complete',
  'fail',
  'reset',
  'release',
  'import',
  'init',
  'prune',
  'claim',
  'start',
  'decide', // a human's answer to a reviewer's ESCALATE (docs/run.md §6.3), never an agent's
];

/** Single-quoted for a POSIX shell when it needs quoting (a plain path or anchor stays as is). */
export function sq(s: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** What pins an agent to its step: the same literal values in its prompt, its rules and the relay's check. */
export interface StepOwner {
  /** The plan, repo-relative (as the brief names it). */
  plan: string;
  step: string;
  /** The worktree, absolute. */
  worktree: string;
  attempt: number;
}

/** `<plan> <step> --worktree <W> --attempt <N>`, literally (agent permission systems refuse expansions). */
export function ownerArgs(o: StepOwner): string {
  return `${sq(o.plan)} ${sq(o.step)} --worktree ${sq(o.worktree)} --attempt ${o.attempt}`;
}

/** The agent's runtime directory inside its worktree, and what it holds. */
export function agentSpace(worktree: string): { dir: string; tmp: string; relay: string } {
  const dir = join(worktree, AGENT_DIR);
  return { dir, tmp: join(dir, 'tmp'), relay: join(dir, 'relay') };
}

/** The running CLI: node and bin/tugcode.cjs (two levels up from dist/run/ and from dist/bundle/). */
export function cliCommand(): { node: string; script: string } {
  return { node: process.execPath, script: fileURLToPath(new URL('../../bin/tugcode.cjs', import.meta.url)) };
}

/** The launcher's text: the running CLI by absolute paths, so a login shell's PATH cannot lose it once found. */
function launcherText(): string {
  const cli = cliCommand();
  return `#!/bin/sh\nexec ${sq(cli.node)} ${sq(cli.script)} "$@"\n`;
}

/**
 * Makes `path` a real directory, never through a link (docs/agents.md §1.4): a symlink or a file an agent
 * left there is removed (unlink removes the link, not what it names) and a directory made. Its parent must be
 * a real directory already.
 */
export async function realDir(path: string): Promise<void> {
  const st = await lstat(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return null;
    throw e;
  });
  if (st?.isDirectory()) return;
  if (st) await unlink(path);
  await mkdir(path);
}

/**
 * Whether every path from `root` down to `path` (inside it) is a real directory, no link among them: what
 * the driver checks before it removes or writes anything in an agent's `.tug/`, which the agent may have
 * swapped for a link meanwhile.
 */
export async function realDirsDown(root: string, path: string): Promise<boolean> {
  const rel = relative(root, path);
  if (rel.startsWith('..') || isAbsolute(rel)) return false;
  let at = root;
  for (const part of rel.split(sep).filter(Boolean)) {
    at = join(at, part);
    const st = await lstat(at).catch(() => null);
    if (!st?.isDirectory()) return false;
  }
  return true;
}

/** What an agent run is given: its PATH directory, TMPDIR and relay, and the launcher's check and removal. */
export interface AgentSpace {
  /** The directory first on the agent's PATH, holding only the `tugcode` launcher (outside the worktree). */
  bin: string;
  tmp: string;
  relay: string;
  /** Why the launcher is not as the driver wrote it (null when it is): an agent must not change it. */
  changed(): Promise<string | null>;
  /** Removes the launcher's directory. */
  release(): Promise<void>;
}

/**
 * Makes the agent's space for one run (docs/agents.md §1.2, §1.4): `.tug/tmp` (TMPDIR) in the worktree, and
 * the `tugcode` launcher in a fresh directory of the driver's under `driverDir` (the run's log directory),
 * the launcher read-only (0555) in directories of the user's alone (0700). Not in the worktree: whatever an
 * agent may edit there, a command its rules allow (`tugcode state update …`) would run unconfined.
 */
export async function prepareAgentSpace(worktree: string, driverDir: string): Promise<AgentSpace> {
  const s = agentSpace(worktree);
  // An earlier agent in this worktree may have left links here: the driver never writes through one.
  await realDir(s.dir);
  // A launcher left by an older tugcode: not on PATH any more (rm removes a link, never what it points to).
  await rm(join(s.dir, 'bin'), { recursive: true, force: true });
  await realDir(s.tmp);
  await mkdir(driverDir, { recursive: true });
  const home = await mkdtemp(join(driverDir, '.agent-bin-'));
  const bin = join(home, 'bin');
  const launcher = join(bin, 'tugcode');
  const text = launcherText();
  await mkdir(bin, { mode: 0o700 });
  await writeFile(launcher, text, { flag: 'wx', mode: 0o555 });
  await chmod(launcher, 0o555); // the umask may have taken bits away
  // The directories stay the user's to remove (`rm -rf` of a crashed run's logs): what keeps the agent out is
  // where they are (outside the worktree), and the check below.
  const modes: [string, number, 'file' | 'dir'][] = [
    [home, 0o700, 'dir'],
    [bin, 0o700, 'dir'],
    [launcher, 0o555, 'file'],
  ];
  return {
    bin,
    tmp: s.tmp,
    relay: s.relay,
    changed: async () => {
      for (const [p, mode, kind] of modes) {
        const st = await lstat(p).catch(() => null);
        if (!st || (kind === 'dir' ? !st.isDirectory() : !st.isFile())) return `${p} is gone or replaced`;
        if ((st.mode & 0o7777) !== mode) return `${p} has mode ${(st.mode & 0o7777).toString(8)}`;
      }
      if ((await readFile(launcher, 'utf8').catch(() => null)) !== text) return `${launcher} was rewritten`;
      if ((await readdir(bin).catch(() => [])).join('/') !== 'tugcode') return `${bin} holds more than the launcher`;
      return null;
    },
    release: async () => {
      await rm(home, { recursive: true, force: true });
    },
  };
}

/** The environment an agent gets on top of the implementer's (docs/run.md §2): PATH, TMPDIR, the state relay. */
export function agentEnvAdditions(
  env: Record<string, string>,
  space: { bin: string; tmp: string; relay: string },
): Record<string, string> {
  return {
    PATH: `${space.bin}:${env.PATH ?? '/usr/local/bin:/usr/bin:/bin'}`,
    TMPDIR: space.tmp,
    TUG_STATE_RELAY: space.relay,
  };
}

/**
 * The agent's own environment: the relay's, but the state's PostgreSQL URL without its password. The agent's
 * state commands go through the relay, which has the whole URL (docs/agents.md §1.5); an agent that prints its
 * environment then puts no password in its log.
 */
export function agentProcessEnv(env: Record<string, string>): Record<string, string> {
  const url = env.TUGCODE_STATE_URL;
  return url ? { ...env, TUGCODE_STATE_URL: withoutPassword(url) } : env;
}

/** The step's checkpoint commands (the agent may run them to check its work). */
export function checkpointCommands(brief: StepBrief): string[] {
  return brief.items.flatMap((i) => {
    const c = i.kind === 'checkpoint' ? checkpointCommand(i.text) : null;
    return c ? [c] : [];
  });
}

/** `Bash(p)` and `Bash(p *)`: the command alone and with more arguments. */
const bash = (p: string) => [`Bash(${p})`, `Bash(${p} *)`];

/**
 * claude's `--allowedTools` and `--disallowedTools` for one step (docs/agents.md §1.3): its own step's state commands
 * with the literal owner arguments, the step's checkpoint commands, `[run] agent_allow`; denied: the git
 * commands that change history or other branches and the state commands that are not the agent's.
 */
export function claudeRules(
  o: StepOwner,
  extra: { checkpoints: string[]; allow: string[] },
): { allowed: string[]; disallowed: string[] } {
  const owner = ownerArgs(o);
  const allowed = [
    ...AGENT_STATE_COMMANDS.flatMap((c) => bash(`tugcode state ${c} ${owner}`)),
    ...extra.checkpoints.map((c) => `Bash(${c})`),
    ...extra.allow.map((p) => `Bash(${p})`),
  ];
  const disallowed = [
    ...DENIED_GIT.flatMap((g) => bash(`git ${g}`)),
    ...DENIED_STATE.flatMap((c) => bash(`tugcode state ${c}`)),
  ];
  return { allowed: [...new Set(allowed)], disallowed };
}

/** The only `tugcode state` command a reviewer agent may run: a note of its own (docs/agents.md §1.8). */
export const REVIEWER_STATE_COMMANDS = ['artifact'] as const;

/** claude's tools for a reviewer: reading and commands, no editing tool at all (docs/agents.md §1.8). */
export const REVIEWER_TOOLS = ['Read', 'Glob', 'Grep', 'Bash'] as const;

/** claude's editing tools, denied to a reviewer as well (a settings file cannot bring them back). */
export const EDIT_TOOLS = ['Write', 'Edit', 'MultiEdit', 'NotebookEdit'] as const;

/**
 * claude's `--allowedTools` and `--disallowedTools` for a reviewer (docs/agents.md §1.8): its own step's
 * `state artifact`, the step's checkpoint commands and `[run] agent_allow`; denied: the editing tools, the
 * git commands that change history or other branches, and every other state command.
 */
export function claudeReviewerRules(
  o: StepOwner,
  extra: { checkpoints: string[]; allow: string[] },
): { allowed: string[]; disallowed: string[] } {
  const owner = ownerArgs(o);
  const allowed = [
    ...REVIEWER_STATE_COMMANDS.flatMap((c) => bash(`tugcode state ${c} ${owner}`)),
    ...extra.checkpoints.map((c) => `Bash(${c})`),
    ...extra.allow.map((p) => `Bash(${p})`),
  ];
  const disallowed = [
    ...EDIT_TOOLS,
    ...DENIED_GIT.flatMap((g) => bash(`git ${g}`)),
    ...[...AGENT_STATE_COMMANDS.filter((c) => c !== 'artifact'), ...DENIED_STATE].flatMap((c) =>
      bash(`tugcode state ${c}`),
    ),
  ];
  return { allowed: [...new Set(allowed)], disallowed };
}
