/**
 * The driver's one runner for the children it waits on (docs/run.md §2–§3): the implementer and checkpoint
 * commands. Through execa, loaded on first use, or from the run's thread when given one (git-thread.ts: the
 * spawn then does not hold up the event loop); argv only (a shell runs only when argv names one).
 *
 * - **Its own process group.** The child is spawned detached, so it leads a group; a timeout or an abort
 *   sends SIGTERM to the whole group, then SIGKILL after a grace period, so an implementer's grandchildren
 *   (a test runner, `sleep 30 &`) never outlive it. When the child exits by itself, whatever it left running
 *   in its group is ended the same way: a step is over when its implementer exits.
 * - **Its mark.** What leaves the group (a new session: claude's Bash tool starts every command in one) still
 *   carries the child's TUG_PROCESS_MARK in its environment: once the group is gone, those are SIGKILLed and
 *   reported (onLeftRunning; docs/agents.md §1.6).
 * - **Output.** stdout and stderr are both the log file's descriptor (opened for append), so they are
 *   interleaved exactly as written and nothing passes through this process: an implementer may print
 *   gigabytes. The tail (the last 4 KiB of this run's output) is read back from the file at the end.
 * - **Never blocks the event loop**: every step is asynchronous, so other workers keep heartbeating.
 * - **Git works in the worker's tree**: the variables that would point git elsewhere (GIT_DIR, GIT_INDEX_FILE
 *   … of a hook that started `run`) are removed (kernel/git-env.ts), so the child's own git calls act on `cwd`.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { mkdir, open, readFile, readdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Options } from 'execa';
import { withoutGitRedirects } from '../kernel/light.js';
import { writePidRecord, type GitThread, type PidRecord } from '../git/git-thread.js';
import type { ChildOutcome } from './types.js';

/** How a started child ended (spawn errors included), whichever way it was started. */
interface Started {
  exitCode?: number | undefined;
  signal?: string | undefined;
  /** The spawn error's code (ENOENT, …) when it could not start. */
  code?: string | undefined;
  shortMessage?: string | undefined;
}

/** How much output `tail` keeps. */
export const TAIL_BYTES = 4096;
/** Default delay between SIGTERM and SIGKILL of a group. */
export const KILL_GRACE_MS = 2000;

export interface ChildOptions {
  /** argv[0] is the program (looked up on the env's PATH); never run through a shell. */
  argv: readonly string[];
  cwd: string;
  /** The environment of the child (nothing of this process's is added; git's redirecting variables are removed). */
  env: Record<string, string | undefined>;
  /** Written to the child's stdin, which is then closed; without it stdin is /dev/null. */
  input?: string;
  timeoutMs: number;
  /** stdout+stderr are appended here; its directory is created. */
  logPath: string;
  /** stdout goes to this file instead (truncated first; only stderr goes to the log): a reviewer's verdict. */
  stdoutPath?: string;
  signal?: AbortSignal;
  /** Delay between SIGTERM and SIGKILL of the group (default 2 s). */
  graceMs?: number;
  /**
   * Written the moment the child runs, naming its pid (= its process group id): the driver's record for a
   * crash (run/orphans.ts). Written by the thread that starts it, so no SIGKILL can fall between the two;
   * removed here once the child's group is gone.
   */
  pidRecord?: PidRecord | undefined;
  /**
   * The run's thread (git-thread.ts) to start the child from, off the event loop; not with `stdoutLines`,
   * whose stdout passes through this thread.
   */
  thread?: GitThread | undefined;
  /**
   * stdout passes through this, line by line, on its way to the log (codex's `--json` events made readable,
   * usage.ts); without it stdout is the log's descriptor and nothing passes through this process.
   */
  stdoutLines?: (line: string) => string;
}

/** The longest stdout line `stdoutLines` is given; a longer one goes to the log as it is, unparsed. */
const LINE_MAX = 8 * 1024 * 1024;

/**
 * Feeds a piped stdout through `transform` into the log, one line at a time, in order; resolves once the
 * stream ended and everything is written. Memory stays bounded by LINE_MAX whatever the child prints.
 */
function pipeLines(
  stream: NodeJS.ReadableStream,
  log: import('node:fs/promises').FileHandle,
  transform: (line: string) => string,
): Promise<void> {
  let pending = '';
  let writes = Promise.resolve();
  const put = (text: string) => {
    if (text !== '') writes = writes.then(() => log.write(text)).then(() => undefined);
  };
  const safe = (line: string) => {
    try {
      return transform(line);
    } catch {
      return line + '\n';
    }
  };
  return new Promise((resolve) => {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        put(safe(pending.slice(0, nl)));
        pending = pending.slice(nl + 1);
      }
      if (pending.length > LINE_MAX) {
        put(pending);
        pending = '';
      }
    });
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      if (pending !== '') put(safe(pending));
      pending = '';
      writes.then(resolve, () => resolve());
    };
    stream.on('end', end);
    stream.on('error', end);
    stream.on('close', end);
  });
}

/** The process groups of the children running now: a run stopped by a second signal ends them (docs/run.md §1.2). */
const running = new Set<number>();

/** How many children were started so far, in this process. */
let startedCount = 0;

/**
 * Children started so far and running now: a mark from which `besideSince` counts the children that ran
 * beside one of its own (an OutsideWrite cannot say which of them made a change, docs/agents.md §1.6).
 */
export function childMark(): { started: number; running: number } {
  return { started: startedCount, running: running.size };
}

/**
 * The children that ran since `mark` besides the span's own one (every span runs one child: an agent, a
 * command, the refactors' run-step): those running then, those started since.
 */
export function besideSince(mark: { started: number; running: number }): number {
  return mark.running + Math.max(0, startedCount - mark.started - 1);
}

/** How many child process groups are running now (what a first signal is ending, docs/run.md §1.1 item 5). */
export function runningGroupCount(): number {
  return running.size;
}

/** SIGKILLs every child process group still running; how many there were. */
export function killRunningGroups(): number {
  for (const pgid of running) signalGroup(pgid, 'SIGKILL');
  return running.size;
}

/** Sends sig to the process group pid leads (to pid alone when the group is gone); false when none exists. */
function signalGroup(pid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the group still has a live member. A member that has died but is not yet reaped (a zombie) still
 * keeps the group id in use, and where PID 1 reaps orphans slowly (containers) that lasts a second or more:
 * on Linux the members' states are read from /proc so zombies do not count.
 */
async function groupLive(pgid: number): Promise<boolean> {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== 'linux') return true;
  let pids: string[];
  try {
    pids = (await readdir('/proc')).filter((d) => /^\d+$/.test(d));
  } catch {
    return true;
  }
  for (const p of pids) {
    let stat: string;
    try {
      stat = await readFile(`/proc/${p}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(f[2]) === pgid && f[0] !== 'Z') return true;
  }
  return false;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The variable that marks every process a child starts, its own group or not (docs/agents.md §1.6). */
export const MARK_ENV = 'TUG_PROCESS_MARK';

/** A process a child left running outside its group, ended by the driver. */
export interface LeftProcess {
  pid: number;
  /** Its command line, at most 200 characters. */
  command: string;
}

/** The processes as the child's log and the run's warning name them: `pid <n> \`<command>\``, comma-separated. */
export function leftWords(left: LeftProcess[]): string {
  return left.map((l) => `pid ${l.pid} \`${l.command}\``).join(', ');
}

type LeftListener = (left: LeftProcess[], logPath: string) => void;
const leftListeners = new Set<LeftListener>();

/** Calls `f` for each child that left processes running outside its group; returns the removal. */
export function onLeftRunning(f: LeftListener): () => void {
  leftListeners.add(f);
  return () => leftListeners.delete(f);
}

/**
 * SIGKILLs every process whose environment carries `<MARK_ENV>=<mark>` (Linux: /proc/<pid>/environ, which
 * only this user's processes let it read), until none is left (a child may fork meanwhile); what it ended.
 */
async function endMarked(mark: string): Promise<LeftProcess[]> {
  if (process.platform !== 'linux') return [];
  const needle = `${MARK_ENV}=${mark}\0`;
  const ended = new Map<number, LeftProcess>();
  for (let round = 0; round < 5; round++) {
    const pids = (await readdir('/proc').catch(() => [] as string[])).filter((d) => /^\d+$/.test(d));
    let found = 0;
    for (const p of pids) {
      const environ = await readFile(`/proc/${p}/environ`, 'latin1').catch(() => '');
      if (!`\0${environ}`.includes(`\0${needle}`)) continue;
      const pid = Number(p);
      if (!ended.has(pid)) {
        const cmd = await readFile(`/proc/${p}/cmdline`, 'utf8').catch(() => '');
        ended.set(pid, { pid, command: cmd.split('\0').filter(Boolean).join(' ').slice(0, 200) });
      }
      try {
        process.kill(pid, 'SIGKILL');
        found++;
      } catch {
        // gone meanwhile
      }
    }
    if (found === 0) break;
    await sleep(25);
  }
  return [...ended.values()];
}

/** The output's tail as text: a cut UTF-8 sequence at its start is dropped. */
function decodeTail(buf: Buffer): string {
  let i = 0;
  while (i < buf.length && i < 4 && (buf[i]! & 0xc0) === 0x80) i++;
  return buf.subarray(i).toString('utf8');
}

/** The last non-empty line of text ('' when none), without its line end. */
export function lastLine(text: string): string {
  const lines = text.split(/\r?\n/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i]!.trimEnd();
    if (l.trim() !== '') return l;
  }
  return '';
}

/**
 * Runs one child to its end and reports it. Never rejects for the child's sake: a program that cannot be
 * spawned is `ok: false` with the reason in the log and the tail. Rejects only when the log file cannot be
 * opened.
 */
export async function runChild(o: ChildOptions): Promise<ChildOutcome> {
  const grace = o.graceMs ?? KILL_GRACE_MS;
  await mkdir(dirname(o.logPath), { recursive: true });
  const log = await open(o.logPath, 'a+');
  const stdout =
    o.stdoutPath === undefined
      ? null
      : await open(o.stdoutPath, 'w').catch(async (e: unknown) => {
          await log.close();
          throw e;
        });
  /** The child's process group while it is in `running`. */
  let group: number | undefined;
  const mark = randomBytes(12).toString('hex');
  try {
    const start = (await log.stat()).size;
    if (o.signal?.aborted) return await outcome(log, start, { exit_code: null, timed_out: false, aborted: true });

    /** What ended the child early (the first cause wins). */
    let killedBy: 'timeout' | 'abort' | null = null;
    let termAt: number | null = null;
    let hardKill: NodeJS.Timeout | undefined;
    let pid: number | undefined;
    // SIGTERM to the group, SIGKILL after the grace period; sent once the child runs.
    const signalTerm = () => {
      if (pid === undefined || termAt === null || hardKill) return;
      const leader = pid;
      signalGroup(leader, 'SIGTERM');
      hardKill = setTimeout(() => signalGroup(leader, 'SIGKILL'), grace);
    };
    const terminate = (cause: 'timeout' | 'abort') => {
      if (termAt !== null) return;
      killedBy = cause;
      termAt = Date.now();
      signalTerm();
    };
    const started = (p: number) => {
      pid = p;
      startedCount++;
      running.add((group = p));
      signalTerm();
    };
    const timer = setTimeout(() => terminate('timeout'), o.timeoutMs);
    const onAbort = () => terminate('abort');
    o.signal?.addEventListener('abort', onAbort, { once: true });
    if (o.signal?.aborted) onAbort();

    const env = { ...withoutGitRedirects(o.env), [MARK_ENV]: mark };
    const out = (stdout ?? log).fd;
    let piped: Promise<void> | null = null;
    let result: Started;
    try {
      if (o.thread && !o.stdoutLines) {
        // From the run's thread: the spawn does not hold up the event loop every worker shares.
        const r = await o.thread.spawn(
          {
            file: o.argv[0]!,
            args: o.argv.slice(1),
            cwd: o.cwd,
            env,
            input: o.input,
            detached: true,
            outFds: [out, log.fd],
            pidRecord: o.pidRecord,
          },
          started,
        );
        result = {
          exitCode: r.exitCode ?? undefined,
          signal: r.signal ?? undefined,
          code: r.errorCode,
          shortMessage: r.error,
        };
      } else {
        const { execa } = await import('execa');
        const options = {
          cwd: o.cwd,
          env,
          extendEnv: false,
          detached: true,
          stdin: o.input === undefined ? 'ignore' : 'pipe',
          ...(o.input === undefined ? {} : { input: o.input }),
          // Any descriptor works at run time (passed to spawn as is); execa's types only list 3–9.
          stdout: o.stdoutLines ? 'pipe' : (out as 3),
          stderr: log.fd as 3,
          buffer: false,
          reject: false,
          // execa's own cleanup would kill only the leader, and not at all when detached: the group is ours.
          cleanup: false,
        } satisfies Options;
        const child = execa(o.argv[0]!, o.argv.slice(1), options);
        piped = o.stdoutLines && child.stdout ? pipeLines(child.stdout, log, o.stdoutLines) : null;
        if (child.pid !== undefined) {
          if (o.pidRecord) writePidRecord(writeFileSync, o.pidRecord, child.pid);
          started(child.pid);
        }
        const r = await child;
        result = {
          exitCode: r.exitCode,
          signal: r.signal,
          code: (r as { code?: string }).code,
          shortMessage: r.shortMessage,
        };
      }
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
    }

    // The leader is gone; end what it left in its group (grandchildren), then report.
    if (pid !== undefined && (await groupLive(pid))) {
      if (termAt === null) {
        termAt = Date.now();
        signalGroup(pid, 'SIGTERM');
      }
      while (Date.now() - termAt < grace && (await groupLive(pid))) await sleep(25);
      signalGroup(pid, 'SIGKILL');
    }
    if (hardKill) clearTimeout(hardKill);
    // What left the group (a new session: claude's Bash tool starts each command in one) still carries the
    // mark in its environment, unless it scrubbed it (docs/agents.md §1.6).
    if (pid !== undefined) {
      const left = await endMarked(mark);
      if (left.length) {
        await log.appendFile(
          `tugcode: ended ${left.length} process(es) left running outside the group: ${leftWords(left)}\n`,
        );
        for (const f of leftListeners) f(left, o.logPath);
      }
    }
    // The group is gone, so is every writer of the pipe: the rest of stdout is in the log once this ends.
    await piped;

    const spawned = pid !== undefined && (result.exitCode !== undefined || result.signal !== undefined);
    let spawnError: string | undefined;
    if (!spawned) {
      const code = result.code;
      spawnError = code ?? 'spawn failed';
      const reason = `tugcode: cannot run ${o.argv[0]}: ${code ?? result.shortMessage ?? 'spawn failed'}\n`;
      await log.appendFile(reason);
    }
    const ended = await outcome(log, start, {
      exit_code: result.exitCode ?? null,
      signal: result.signal ?? null,
      timed_out: killedBy === 'timeout',
      aborted: killedBy === 'abort',
    });
    return spawnError === undefined ? ended : { ...ended, spawn_error: spawnError };
  } finally {
    // The group is gone (or never ran): its record names nothing a later run must end.
    if (o.pidRecord) await rm(o.pidRecord.path, { force: true }).catch(() => undefined);
    if (group !== undefined) running.delete(group);
    await stdout?.close();
    await log.close();
  }
}

async function outcome(
  log: import('node:fs/promises').FileHandle,
  start: number,
  r: { exit_code: number | null; signal?: string | null; timed_out: boolean; aborted: boolean },
): Promise<ChildOutcome> {
  const end = (await log.stat()).size;
  const n = Math.max(0, Math.min(TAIL_BYTES, end - start));
  const buf = Buffer.alloc(n);
  if (n > 0) await log.read(buf, 0, n, end - n);
  const tail = decodeTail(buf);
  return {
    ok: r.exit_code === 0 && !r.timed_out && !r.aborted,
    exit_code: r.exit_code,
    signal: r.signal ?? null,
    timed_out: r.timed_out,
    aborted: r.aborted,
    tail,
    last_line: lastLine(tail),
  };
}

/** How a child ended, for a reason: `exited 3`, or `killed by SIGKILL` (a signal leaves no exit code). */
export function endedHow(o: Pick<ChildOutcome, 'exit_code' | 'signal'>): string {
  if (o.exit_code === null && o.signal) return `killed by ${o.signal}`;
  return `exited ${o.exit_code ?? 'without an exit code'}`;
}
