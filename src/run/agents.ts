/**
 * Agent implementer presets (06-run.md §2.1): `--agent claude` and `--agent codex` run that agent's
 * non-interactive mode in the worker's worktree, with the step's prompt on stdin and the permissions a
 * worktree-confined edit needs, and extract the agent's final message (recorded as the `coder_report`
 * artifact). Every flag comes from the CLI's own `--help`; docs/agents-notes.md quotes what each relies on,
 * and the README documents the exact command lines.
 *
 * - claude: `claude -p --output-format json --permission-mode acceptEdits --allowedTools "…"`. Print mode
 *   reads the prompt from stdin; the JSON result object's `result` is the final message, `is_error` an
 *   error the exit code may not show. acceptEdits lets it edit inside its working directory (the worktree)
 *   without prompting (reading needs no permission); the one allow rule adds `tugcode state …`, so any
 *   other command, and any edit outside the worktree, is denied (print mode cannot prompt).
 * - codex: `codex exec --cd W --sandbox workspace-write -c approval_policy="never" --add-dir D
 *   --output-last-message F -`. `-` reads the prompt from stdin; workspace-write confines its commands'
 *   writes to the worktree (plus D, the state.db directory, so `tugcode state update` works); approvals
 *   `never` (exec has no `--ask-for-approval`, so the config key) means no prompt ever waits; F receives
 *   the final message.
 */
import { mkdir, readFile, rm, stat, writeFile, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { invalidArgument } from '../contract/errors.js';
import { agentPrompt } from './agent-prompt.js';
import { runChild } from './child.js';
import { implementerEnv, runImplementer, type ImplementerOptions } from './implementer.js';
import type { ChildOutcome } from './types.js';

export const AGENTS = ['claude', 'codex'] as const;
export type AgentName = (typeof AGENTS)[number];

export function isAgentName(s: string): s is AgentName {
  return (AGENTS as readonly string[]).includes(s);
}

/** What an agent's argv depends on, besides the preset. */
export interface AgentPaths {
  /** The worktree (absolute): the agent's working root. */
  worktree: string;
  /** The directory of state.db (writable for codex's sandbox so `tugcode state …` works). */
  stateDir: string;
  /** Where codex writes its final message. */
  lastMessage: string;
}

/**
 * The one rule claude gets beyond its permission mode: `tugcode state …` may run. Edit and Write are not
 * listed on purpose: an unscoped allow rule would approve edits anywhere, while acceptEdits approves them
 * only inside the working directory.
 */
export const CLAUDE_ALLOWED = 'Bash(tugcode state *)';

/** The argv a preset runs (its prompt goes to stdin). */
export function agentArgv(agent: AgentName, p: AgentPaths): string[] {
  if (agent === 'claude')
    return [
      'claude',
      '-p',
      '--output-format',
      'json',
      '--permission-mode',
      'acceptEdits',
      '--allowedTools',
      CLAUDE_ALLOWED,
    ];
  return [
    'codex',
    'exec',
    '--cd',
    p.worktree,
    '--sandbox',
    'workspace-write',
    '-c',
    'approval_policy="never"',
    '--add-dir',
    p.stateDir,
    '--output-last-message',
    p.lastMessage,
    '-',
  ];
}

/** The command line of a preset with its paths as placeholders, as the README and `--dry-run` show it. */
export function agentCommandLine(agent: AgentName): string {
  const q = (s: string) => (/^[A-Za-z0-9_./:<>=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const argv = agentArgv(agent, {
    worktree: '<worktree>',
    stateDir: '<repo>/.tugtool',
    lastMessage: '<repo>/.tugtool/logs/<slug>/<step>-attempt<N>.final.md',
  });
  return `${argv.map(q).join(' ')} < prompt`;
}

/** Which implementer a run uses: an explicit flag beats config; both explicit flags → InvalidArgument. */
export function resolveImplementer(
  input: { implementer?: string | undefined; agent?: string | undefined },
  config: { implementer: string; agent: string },
): { implementer: string | null; agent: AgentName | null } {
  if (input.implementer !== undefined && input.agent !== undefined)
    throw invalidArgument('--implementer and --agent cannot be used together: choose one implementer', {
      implementer: input.implementer,
      agent: input.agent,
    });
  const pick = (agent: string | undefined, implementer: string | undefined) => {
    if (agent) {
      if (!isAgentName(agent))
        throw invalidArgument(`unknown agent ${JSON.stringify(agent)}; expected one of ${AGENTS.join(', ')}`, {
          agent,
        });
      return { implementer: null, agent };
    }
    return { implementer: implementer || null, agent: null };
  };
  if (input.agent !== undefined) return pick(input.agent, undefined);
  if (input.implementer !== undefined) return pick(undefined, input.implementer);
  if (config.agent && config.implementer)
    throw invalidArgument('config sets both run.implementer and run.agent: keep one', {
      implementer: config.implementer,
      agent: config.agent,
    });
  return pick(config.agent, config.implementer);
}

/** A child's outcome plus the agent's final message (null when there is none, or for a plain command). */
export type AgentOutcome = ChildOutcome & { final_message: string | null };

/** How much of this run's log is searched for claude's JSON result. */
const RESULT_SCAN_BYTES = 8 * 1024 * 1024;

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

async function readFrom(path: string, start: number): Promise<string> {
  const f = await open(path, 'r');
  try {
    const end = (await f.stat()).size;
    const from = Math.max(start, end - RESULT_SCAN_BYTES);
    const buf = Buffer.alloc(Math.max(0, end - from));
    if (buf.length) await f.read(buf, 0, buf.length, from);
    return buf.toString('utf8');
  } finally {
    await f.close();
  }
}

/** claude's `--output-format json` result: the last line of the output that is a JSON result object. */
export function parseClaudeResult(
  output: string,
): { message: string | null; is_error: boolean; subtype: string } | null {
  const lines = output.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i]!.trim();
    if (!l.startsWith('{')) continue;
    let v: unknown;
    try {
      v = JSON.parse(l);
    } catch {
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    const o = v as Record<string, unknown>;
    if (o.type !== 'result' && !('result' in o)) continue;
    return {
      message: typeof o.result === 'string' ? o.result : null,
      is_error: o.is_error === true,
      subtype: typeof o.subtype === 'string' ? o.subtype : '',
    };
  }
  return null;
}

/** The `coder_report` artifact of a final message: first non-empty line as summary, the message as content. */
export function coderReport(out: { final_message: string | null }): { summary: string; content: string } | null {
  const m = out.final_message?.trim();
  if (!m) return null;
  return {
    summary: m
      .split('\n')
      .find((l) => l.trim() !== '')!
      .trim(),
    content: m,
  };
}

/** Runs a preset once for a step: the brief file and TUG_* environment as for any implementer (§2). */
export async function runAgent(agent: AgentName, o: Omit<ImplementerOptions, 'argv'>): Promise<AgentOutcome> {
  const json = JSON.stringify(o.brief, null, 2) + '\n';
  await mkdir(dirname(o.briefPath), { recursive: true });
  await writeFile(o.briefPath, json);
  const lastMessage = o.logPath.replace(/\.log$/, '') + '.final.md';
  await rm(lastMessage, { force: true });
  const start = await sizeOf(o.logPath);
  const out = await runChild({
    argv: agentArgv(agent, { worktree: o.vars.worktree, stateDir: dirname(o.vars.state_db), lastMessage }),
    cwd: o.cwd,
    env: implementerEnv(o.baseEnv, o.vars, o.brief, o.briefPath),
    input: agentPrompt(o.brief, { worktree: o.vars.worktree }),
    timeoutMs: o.timeoutMs,
    logPath: o.logPath,
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.onSpawn ? { onSpawn: o.onSpawn } : {}),
  });
  if (agent === 'codex') {
    const text = await readFile(lastMessage, 'utf8').catch(() => null);
    return { ...out, final_message: text };
  }
  const r = parseClaudeResult(await readFrom(o.logPath, start).catch(() => ''));
  if (out.ok && r?.is_error)
    return {
      ...out,
      ok: false,
      last_line: `claude reported an error (${r.subtype || 'is_error'})`,
      final_message: r.message,
    };
  return { ...out, final_message: r?.message ?? null };
}

/**
 * The implementer phase of one unit (06-run.md §2, §2.1): the preset when `agent` is set, else the
 * configured command (whose outcome has no final message).
 */
export async function runStepImplementer(
  which: { implementer: string | null; agent: AgentName | null },
  o: Omit<ImplementerOptions, 'argv'>,
): Promise<AgentOutcome> {
  if (which.agent) return runAgent(which.agent, o);
  return { ...(await runImplementer({ ...o, argv: which.implementer ?? '' })), final_message: null };
}
