/**
 * The state relay (docs/agents.md §1.5): under `tugcode run`, an agent's `tugcode state update|artifact|
 * heartbeat` reaches the state through the driver, so the agent needs no write access to `.tugtool/` (plans,
 * config, state.db) and, on PostgreSQL, no network. The relay is a request directory inside the worktree
 * (`.tug/relay/`, named by TUG_STATE_RELAY): the one channel every agent sandbox leaves open (codex's
 * refuses even a unix socket's connect). The CLI, when that variable is set, writes a state command there
 * as `<id>.req` and waits for `<id>.res`; the driver runs it with the running CLI, pinned to the step's own
 * plan, step, worktree and attempt, and refuses every other state command. Files appear by rename, so
 * neither side reads a half-written one.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import {
  lstat,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  rmdir,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { AGENT_STATE_COMMANDS, cliCommand, realDir, realDirsDown, type StepOwner } from './confine.js';

/** The variable naming the relay's socket. */
export const RELAY_ENV = 'TUG_STATE_RELAY';
/** Global flags the CLI accepts before the command. */
const GLOBAL_FLAGS = new Set(['--json', '-q', '--quiet', '-v', '--verbose']);
/** State commands that only read: they run directly even under the relay. */
const READS = new Set(['show', 'log', 'list', 'ready', 'export', 'doctor', 'help']);
const MAX_REQUEST = 1024 * 1024;
const MAX_OUTPUT = 1024 * 1024;

export interface RelayReply {
  exit: number;
  stdout: string;
  stderr: string;
}

/** The state subcommand argv names (global flags skipped), or null when it is not a state command. */
function stateSubcommand(argv: string[]): { at: number; sub: string } | null {
  let i = 0;
  // `-C <dir>` before the command is skipped here (so the command is still relayed) and refused by relayArgv.
  while (i < argv.length && (GLOBAL_FLAGS.has(argv[i]!) || /^(-C|--dir)(=|$)/.test(argv[i]!)))
    i += /^(-C|--dir)$/.test(argv[i]!) ? 2 : 1;
  if (argv[i] !== 'state') return null;
  let j = i + 1;
  while (j < argv.length && GLOBAL_FLAGS.has(argv[j]!)) j++;
  const sub = argv[j];
  return sub === undefined || sub.startsWith('-') ? null : { at: j, sub };
}

/** Whether the CLI sends this argv to the relay: a state command that writes. */
export function relayed(argv: string[]): boolean {
  const s = stateSubcommand(argv);
  return s !== null && !READS.has(s.sub);
}

/**
 * The argv the driver runs for a relayed command (its plan, worktree normalised), or why it is refused:
 * only the owner commands of the step's own plan, step, worktree and attempt, in the form the prompt gives
 * (`state <cmd> <plan> <step> … --worktree W --attempt N …`).
 */
export function relayArgv(
  argv: string[],
  cwd: string,
  pin: StepOwner,
  commands: readonly string[] = AGENT_STATE_COMMANDS,
): { argv: string[] } | { refused: string } {
  const s = stateSubcommand(argv);
  if (!s) return { refused: 'not a tugcode state command' };
  if (!commands.includes(s.sub))
    return {
      refused: `\`tugcode state ${s.sub}\` is not the agent's under tugcode run: only state ${commands.join(', ')} of its own step`,
    };
  if (argv.slice(0, s.at).some((a) => /^(-C|--dir)(=|$)/.test(a)))
    return { refused: '-C/--dir is not allowed through the relay' };
  const flags = argv.slice(0, s.at).filter((a) => GLOBAL_FLAGS.has(a));
  const [plan, step, ...rest] = argv.slice(s.at + 1);
  if (plan === undefined || (plan !== pin.plan && resolve(cwd, plan) !== resolve(pin.worktree, pin.plan)))
    return { refused: `the plan must be ${pin.plan} (this step's), not ${JSON.stringify(plan ?? '')}` };
  if (step !== pin.step && step !== `#${pin.step}`)
    return { refused: `the step must be ${pin.step} (this agent's), not ${JSON.stringify(step ?? '')}` };
  const out: string[] = [];
  let worktree = 0;
  let attempt = 0;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    const m = /^(--worktree|--attempt|-C|--dir)(?:=(.*))?$/.exec(a);
    if (!m) {
      out.push(a);
      continue;
    }
    const value = m[2] ?? rest[++i];
    if (m[1] === '-C' || m[1] === '--dir') return { refused: `${m[1]} is not allowed through the relay` };
    if (m[1] === '--worktree') {
      if (value === undefined || resolve(cwd, value) !== pin.worktree)
        return { refused: `--worktree must be ${pin.worktree} (this agent's), not ${JSON.stringify(value ?? '')}` };
      worktree++;
    } else {
      if (value !== String(pin.attempt))
        return { refused: `--attempt must be ${pin.attempt} (this agent's), not ${JSON.stringify(value ?? '')}` };
      attempt++;
    }
  }
  if (worktree === 0 || attempt === 0)
    return { refused: `give --worktree ${pin.worktree} --attempt ${pin.attempt} (this agent's step)` };
  return {
    argv: [
      ...flags,
      'state',
      s.sub,
      pin.plan,
      pin.step,
      ...out,
      '--worktree',
      pin.worktree,
      '--attempt',
      String(pin.attempt),
    ],
  };
}

/** A file flag of a state command (`--summary-file`, `--content-file`): its value is a path the CLI reads. */
const FILE_FLAG = /^(--[a-z][a-z-]*-file)(?:=(.*))?$/;

/**
 * The argv with each file a flag names replaced by the driver's copy of it, or why it is refused
 * (docs/agents.md §1.5): the CLI the relay runs is the driver's, unconfined, so a file it reads for the
 * agent must be one the agent may read itself, a file inside its worktree (by its real path: no link
 * out). The copy is read without following a link and checked again once open, so a file swapped for a
 * link meanwhile is refused too; at most MAX_REQUEST bytes (the CLI keeps less). `-` (stdin) stays: the
 * relayed command has none.
 */
export async function relayFiles(
  argv: string[],
  cwd: string,
  worktree: string,
  scratch: string,
): Promise<{ argv: string[] } | { refused: string }> {
  const out: string[] = [];
  let root: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const m = FILE_FLAG.exec(argv[i]!);
    const value = m ? (m[2] ?? argv[i + 1]) : undefined;
    if (!m || value === undefined || value === '-') {
      out.push(argv[i]!);
      continue;
    }
    if (m[2] === undefined) i++;
    root ??= await realpath(worktree);
    const inside = (p: string) => p === root || p.startsWith(root + sep);
    const refused = {
      refused: `${m[1]} must name a file inside the worktree ${worktree}, not ${JSON.stringify(value)}`,
    };
    const real = await realpath(resolve(cwd, value)).catch(() => null);
    if (!real || !inside(real)) return refused;
    const f = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => null);
    if (!f) return refused;
    try {
      const opened = await readlink(`/proc/self/fd/${f.fd}`).catch(() => real);
      if (!inside(opened) || !(await f.stat()).isFile()) return refused;
      const buf = Buffer.alloc(MAX_REQUEST);
      const { bytesRead } = await f.read(buf, 0, MAX_REQUEST, 0);
      const copy = join(scratch, randomBytes(8).toString('hex'));
      await writeFile(copy, buf.subarray(0, bytesRead), { flag: 'wx', mode: 0o600 });
      out.push(m[1]!, copy);
    } finally {
      await f.close();
    }
  }
  return { argv: out };
}

/** Runs the CLI for a relayed command; output capped. */
function runCli(argv: string[], cwd: string, env: Record<string, string>): Promise<RelayReply> {
  const cli = cliCommand();
  return new Promise((done) => {
    const child = spawn(cli.node, [cli.script, ...argv], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout = (stdout + d).slice(0, MAX_OUTPUT)));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(0, MAX_OUTPUT)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      done({ exit: 10, stdout, stderr: `${stderr}tugcode: the state relay could not run the command: ${e.message}\n` });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ exit: code ?? 10, stdout, stderr });
    });
  });
}

/** The relay directory as the driver holds it for one run (holdRelayDir). */
interface RelayDir {
  /** The path naming the entry `name` of the relay directory: a bare name (ids are the agent's), never `.`, `..` or a/b. */
  entry(name: string): string;
  /** Its entries (none when, without /proc, the path is no longer a real directory inside the worktree). */
  list(): Promise<string[]>;
  /** Removes its entries, and itself when its path still names it; lets it go. */
  remove(): Promise<void>;
}

/**
 * Holds the relay directory the driver just made (docs/agents.md §1.4): opened once without following a link,
 * checked to be the directory its path names, inside the worktree. On Linux every entry is then named
 * through `/proc/self/fd/<fd>/<name>`, which resolves to the directory the fd holds whatever the path names
 * now: an agent that swaps `.tug/relay` (or `.tug`) for a link moves only where it looks, never where the
 * driver reads, writes or removes. Without /proc the path, checked before each listing: a swap between that
 * check and a step of a request is the residual race §1.4 names.
 */
async function holdRelayDir(dir: string, worktree: string): Promise<RelayDir> {
  const f = await open(dir, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | constants.O_NOFOLLOW);
  let held: { dev: number; ino: number };
  try {
    const [st, at] = await Promise.all([f.stat(), lstat(dir)]);
    if (!st.isDirectory() || st.dev !== at.dev || st.ino !== at.ino || !(await realDirsDown(worktree, dir)))
      throw new Error(`the state relay ${dir} is not a real directory inside the worktree`);
    held = { dev: st.dev, ino: st.ino };
  } catch (e) {
    await f.close();
    throw e;
  }
  const same = (st: { dev: number; ino: number } | null) => st !== null && st.dev === held.dev && st.ino === held.ino;
  const proc = `/proc/self/fd/${f.fd}`;
  const byFd = same(await stat(proc).catch(() => null));
  if (!byFd) await f.close();
  const base = byFd ? proc : dir;
  const entry = (name: string) => {
    if (name === '' || name === '.' || name === '..' || name.includes('/'))
      throw new Error(`not an entry name of the state relay: ${JSON.stringify(name)}`);
    return join(base, name);
  };
  return {
    entry,
    list: async () => (byFd || (await realDirsDown(worktree, dir)) ? readdir(base).catch(() => []) : []),
    remove: async () => {
      if (!byFd) {
        // Only a real directory inside the worktree; a link in its place is left for the next prepare.
        if (await realDirsDown(worktree, dir)) await rm(dir, { recursive: true, force: true });
        return;
      }
      try {
        for (const n of await readdir(proc).catch(() => [] as string[]))
          await rm(entry(n), { recursive: true, force: true });
        // rmdir removes only an empty directory, and never through a link in the last place.
        if (same(await lstat(dir).catch(() => null)) && (await realDirsDown(worktree, dir)))
          await rmdir(dir).catch(() => undefined);
      } finally {
        await f.close();
      }
    },
  };
}

/** A relay serving one agent run; `close()` stops it and removes its directory. */
export interface Relay {
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** How often the driver looks for requests and the CLI for its reply. */
const POLL_MS = 50;
/** How long the CLI waits for a reply. */
const REPLY_WAIT_MS = 180_000;

/**
 * Serves the relay in `dir` for one step's agent. `env` is the environment the commands run with (the
 * implementer's, without TUG_STATE_RELAY so they run directly); `commands` the state commands it may run
 * (a reviewer's: `artifact` only).
 */
export async function serveRelay(
  dir: string,
  pin: StepOwner,
  env: Record<string, string>,
  commands: readonly string[] = AGENT_STATE_COMMANDS,
): Promise<Relay> {
  // The agent may swap `.tug` or the relay for a link at any time: nothing is read, written or removed
  // through one (docs/agents.md §1.4). rm removes a link itself, never what it points to.
  await realDir(dirname(dir));
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir);
  const relay = await holdRelayDir(dir, pin.worktree);
  const runEnv = { ...env };
  delete runEnv[RELAY_ENV];
  // The driver's copies of the files a request names (relayFiles): private to this process, outside the worktree.
  const files = await mkdtemp(join(tmpdir(), 'tugcode-relay-'));
  const answer = async (text: string): Promise<RelayReply> => {
    let req: { argv?: unknown; cwd?: unknown };
    try {
      req = JSON.parse(text) as typeof req;
    } catch {
      return { exit: 2, stdout: '', stderr: 'tugcode: the state relay got a malformed request\n' };
    }
    const argv = Array.isArray(req.argv) ? req.argv.map(String) : [];
    const cwd = typeof req.cwd === 'string' ? req.cwd : pin.worktree;
    const pinned = relayArgv(argv, cwd, pin, commands);
    const r = 'refused' in pinned ? pinned : await relayFiles(pinned.argv, cwd, pin.worktree, files);
    if ('refused' in r)
      return {
        exit: 4,
        stdout: '',
        stderr: `tugcode: refused under tugcode run (docs/agents.md §1): ${r.refused}\n`,
      };
    try {
      return await runCli(r.argv, pin.worktree, runEnv);
    } finally {
      for (const n of await readdir(files).catch(() => [] as string[])) await rm(join(files, n), { force: true });
    }
  };
  let stopped = false;
  const handle = async (id: string) => {
    const work = relay.entry(`${id}.work`);
    try {
      await rename(relay.entry(`${id}.req`), work);
    } catch {
      return; // gone meanwhile
    }
    // A request that is a link (to a file the agent may not read) is not followed.
    const f = await open(work, constants.O_RDONLY | constants.O_NOFOLLOW);
    let text: string;
    try {
      const st = await f.stat();
      text = st.size > MAX_REQUEST || !st.isFile() ? '' : await f.readFile('utf8');
    } finally {
      await f.close();
    }
    const reply = await answer(text);
    // Written as a new file (O_EXCL): a link planted under the reply's name is removed, never written through.
    const tmp = relay.entry(`${id}.res.tmp`);
    await rm(tmp, { force: true });
    await writeFile(tmp, JSON.stringify(reply), {
      flag: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    });
    await rename(tmp, relay.entry(`${id}.res`));
    await rm(work, { force: true });
  };
  const loop = (async () => {
    while (!stopped) {
      const names = await relay.list();
      // One at a time, in arrival order (ids sort by time): the agent's updates apply in the order it made them.
      for (const n of names.filter((x) => x.endsWith('.req')).sort())
        await handle(n.slice(0, -4)).catch(() => undefined);
      await sleep(POLL_MS);
    }
  })();
  return {
    close: async () => {
      stopped = true;
      await loop;
      await relay.remove();
      await rm(files, { recursive: true, force: true });
    },
  };
}

/** The CLI side: sends argv to the relay and waits for its reply (a reply of its own when none comes). */
export async function sendToRelay(dir: string, argv: string[], cwd: string): Promise<RelayReply> {
  const id = `${Date.now().toString().padStart(15, '0')}-${process.pid}-${randomBytes(4).toString('hex')}`;
  const res = join(dir, `${id}.res`);
  try {
    await writeFile(join(dir, `${id}.req.tmp`), JSON.stringify({ argv, cwd }));
    await rename(join(dir, `${id}.req.tmp`), join(dir, `${id}.req`));
  } catch (e) {
    return {
      exit: 10,
      stdout: '',
      stderr: `tugcode: cannot reach the state relay ${dir} (${RELAY_ENV}): ${(e as Error).message}\n`,
    };
  }
  for (const end = Date.now() + REPLY_WAIT_MS; Date.now() < end; await sleep(POLL_MS)) {
    let text: string;
    try {
      text = await readFile(res, 'utf8');
    } catch {
      continue;
    }
    await rm(res, { force: true });
    try {
      return JSON.parse(text) as RelayReply;
    } catch {
      break;
    }
  }
  return { exit: 10, stdout: '', stderr: `tugcode: the state relay ${dir} (${RELAY_ENV}) gave no reply\n` };
}
