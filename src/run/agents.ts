/**
 * Agent implementer presets (docs/run.md §2.1), confined to their worktree (docs/agents.md §1): `--agent
 * claude` and `--agent codex` run that agent's non-interactive mode in the worker's worktree, with the
 * step's prompt on stdin, and extract the agent's final message (recorded as the `coder_report` artifact).
 * Every flag comes from the CLI's own `--help`; docs/agents.md quotes what each relies on, and the
 * README documents the exact command lines.
 *
 * - claude: `claude -p --output-format stream-json --verbose --permission-mode acceptEdits --setting-sources
 *   user --allowedTools … --disallowedTools …`. Print mode reads the prompt from stdin; the stream's final
 *   result's `result` is the final message, `is_error` an error the exit code may not show; the driver
 *   writes the stream to the log as text and counts its usage, also of a run killed before its result
 *   (usage.ts ClaudeTranscript). acceptEdits lets it edit
 *   inside its working directory (the worktree) and nowhere else; the allow rules add exactly its own
 *   step's `tugcode state update|artifact|heartbeat`, the step's checkpoint commands and `[run]
 *   agent_allow` (print mode cannot prompt, so anything else is refused); the deny rules (which beat any
 *   settings file's allow) name the git commands that change history or other branches. Settings come
 *   from the user's own file only, never from a repository's `.claude/` (confine.ts).
 * - codex: `codex exec --cd W --sandbox workspace-write --ignore-rules -c approval_policy="never"
 *   -c allow_login_shell=false -c sandbox_workspace_write.…` with the worktree the only writable root
 *   (no /tmp, no $TMPDIR, no network), no login shell (a profile may reset PATH), execpolicy rules
 *   ignored (they could run a command outside the sandbox), the final message written to F. `--json`:
 *   its events are the only place its token counts are split by kind; the driver writes them to the log
 *   as the text codex prints without it (usage.ts CodexTranscript).
 *
 * Both get the `tugcode` launcher first on PATH, TMPDIR inside the worktree, and the state relay
 * (state-relay.ts): their state commands reach the state through the driver.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { invalidArgument } from '../contract/errors.js';
import { agentPrompt } from './agent-prompt.js';
import { conflictPrompt } from './resolve-prompt.js';
import { runChild } from './child.js';
import {
  agentEnvAdditions,
  agentProcessEnv,
  AGENT_STATE_COMMANDS,
  checkpointCommands,
  claudeReviewerRules,
  claudeRules,
  prepareAgentSpace,
  REVIEWER_TOOLS,
  type StepOwner,
} from './confine.js';
import { serveRelay } from './state-relay.js';
import {
  implementerEnv,
  runImplementer,
  throwIfNotStarted,
  type ImplementerOptions,
  type UsageReport,
} from './implementer.js';
import type { ChildOutcome } from './types.js';
import { ClaudeTranscript, CodexTranscript } from './usage.js';

export const AGENTS = ['claude', 'codex'] as const;
export type AgentName = (typeof AGENTS)[number];

export function isAgentName(s: string): s is AgentName {
  return (AGENTS as readonly string[]).includes(s);
}

/** What an agent's argv depends on, besides the preset. */
export interface AgentPaths {
  /** The step the agent works on: its plan, anchor, worktree (its working root) and attempt. */
  owner: StepOwner;
  /** Where codex writes its final message. */
  lastMessage: string;
  /** The step's checkpoint commands and `[run] agent_allow` (claude's allow rules). */
  checkpoints: string[];
  allow: string[];
}

/** The argv a preset runs (its prompt goes to stdin). */
export function agentArgv(agent: AgentName, p: AgentPaths): string[] {
  if (agent === 'claude') {
    const rules = claudeRules(p.owner, { checkpoints: p.checkpoints, allow: p.allow });
    return [
      'claude',
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'acceptEdits',
      '--setting-sources',
      'user',
      '--allowedTools',
      ...rules.allowed,
      '--disallowedTools',
      ...rules.disallowed,
    ];
  }
  return [
    'codex',
    'exec',
    '--json',
    '--cd',
    p.owner.worktree,
    '--sandbox',
    'workspace-write',
    '--ignore-rules',
    '-c',
    'approval_policy="never"',
    '-c',
    'allow_login_shell=false',
    '-c',
    'sandbox_workspace_write.writable_roots=[]',
    '-c',
    'sandbox_workspace_write.exclude_tmpdir_env_var=true',
    '-c',
    'sandbox_workspace_write.exclude_slash_tmp=true',
    '-c',
    'sandbox_workspace_write.network_access=false',
    '--output-last-message',
    p.lastMessage,
    '-',
  ];
}

/**
 * The argv of a preset as a read-only reviewer (docs/agents.md §1.8; its prompt goes to stdin). claude: no
 * editing tool at all (`--tools`), the editing tools also denied, default permission mode (print mode cannot
 * ask, so a command no rule allows is refused; read-only commands need none), `state artifact` of its own
 * step, the checkpoints and `[run] agent_allow` allowed. codex: the read-only sandbox (nothing writable, no
 * network), so it writes no state at all.
 */
export function reviewerArgv(agent: AgentName, p: AgentPaths): string[] {
  if (agent === 'claude') {
    const rules = claudeReviewerRules(p.owner, { checkpoints: p.checkpoints, allow: p.allow });
    return [
      'claude',
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'default',
      '--setting-sources',
      'user',
      '--tools',
      REVIEWER_TOOLS.join(','),
      '--allowedTools',
      ...rules.allowed,
      '--disallowedTools',
      ...rules.disallowed,
    ];
  }
  return [
    'codex',
    'exec',
    '--cd',
    p.owner.worktree,
    '--sandbox',
    'read-only',
    '--ignore-rules',
    '-c',
    'approval_policy="never"',
    '-c',
    'allow_login_shell=false',
    '--output-last-message',
    p.lastMessage,
    '-',
  ];
}

/** The command line of a preset with its paths as placeholders, as the README and `--dry-run` show it. */
export function agentCommandLine(agent: AgentName, role: 'implementer' | 'reviewer' = 'implementer'): string {
  const q = (s: string) => (/^[A-Za-z0-9_./:<>=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const argvOf = role === 'reviewer' ? reviewerArgv : agentArgv;
  const final = role === 'reviewer' ? '<step>-review<R>-attempt<N>.final.md' : '<step>-attempt<N>.final.md';
  const argv = argvOf(agent, {
    owner: { plan: '<plan>', step: '<step>', worktree: '<worktree>', attempt: '<N>' as unknown as number },
    lastMessage: `<repo>/.tugtool/logs/<slug>/${final}`,
    checkpoints: ['<checkpoint command>'],
    allow: ['<agent_allow pattern>'],
  });
  // The placeholders stand unquoted (ownerArgs quotes them like any value with `<`).
  return `${argv.map(q).join(' ')} < prompt`.replace(/'\\''(<[^>']+>)'\\''/g, '$1');
}

/** How to run without each command, for the refusal of a blank flag. */
const WITHOUT = {
  implementer: 'an implementer, leave the flag out',
  reviewer: 'a reviewer, leave the flag out and run.reviewer unset',
  resolver: 'a resolver (the implementer resolves), leave the flag out',
} as const;

/**
 * A blank command flag is most often an unset variable (`--implementer "$IMPL"`); taken as "none", it would
 * mark every item of the plan completed unattended, or turn a review gate off unseen, even one set in config
 * (docs/run.md §2): InvalidArgument instead.
 */
export function refuseBlankFlag(flag: keyof typeof WITHOUT, value: string | undefined): void {
  if (value !== undefined && value.trim() === '')
    throw invalidArgument(`--${flag} is empty (an unset variable?); to run without ${WITHOUT[flag]}`, {
      [flag]: value,
    });
}

/** Which implementer a run uses: an explicit flag beats config; both explicit flags → InvalidArgument. */
export function resolveImplementer(
  input: { implementer?: string | undefined; agent?: string | undefined },
  config: { implementer: string; agent: string },
): { implementer: string | null; agent: AgentName | null } {
  refuseBlankFlag('implementer', input.implementer);
  const r = resolveCommandOrAgent(
    { command: input.implementer, agent: input.agent },
    { command: config.implementer, agent: config.agent },
    { command: 'implementer', agent: 'agent', role: 'implementer' },
  );
  return { implementer: r.command, agent: r.agent };
}

/**
 * Which reviewer a run uses (docs/run.md §6), by the same rules as the implementer: `--reviewer` and
 * `--review-agent` exclude each other, an explicit flag beats config; none → no review gate.
 */
export function resolveReviewer(
  input: { reviewer?: string | undefined; review_agent?: string | undefined },
  config: { reviewer: string; review_agent: string },
): { reviewer: string | null; reviewAgent: AgentName | null } {
  const r = resolveCommandOrAgent(
    { command: input.reviewer, agent: input.review_agent },
    { command: config.reviewer, agent: config.review_agent },
    { command: 'reviewer', agent: 'review_agent', role: 'reviewer' },
  );
  return { reviewer: r.command, reviewAgent: r.agent };
}

/** A command string or an agent preset, from flags then config (`names`: their flag and config key names). */
function resolveCommandOrAgent(
  input: { command?: string | undefined; agent?: string | undefined },
  config: { command: string; agent: string },
  names: { command: string; agent: string; role: string },
): { command: string | null; agent: AgentName | null } {
  const flag = (n: string) => `--${n.replace(/_/g, '-')}`;
  if (input.command !== undefined && input.agent !== undefined)
    throw invalidArgument(
      `${flag(names.command)} and ${flag(names.agent)} cannot be used together: choose one ${names.role}`,
      { [names.command]: input.command, [names.agent]: input.agent },
    );
  const pick = (agent: string | undefined, command: string | undefined) => {
    if (agent) {
      if (!isAgentName(agent))
        throw invalidArgument(`unknown agent ${JSON.stringify(agent)}; expected one of ${AGENTS.join(', ')}`, {
          [names.agent]: agent,
        });
      return { command: null, agent };
    }
    return { command: command || null, agent: null };
  };
  if (input.agent !== undefined) return pick(input.agent, undefined);
  if (input.command !== undefined) return pick(undefined, input.command);
  if (config.agent && config.command)
    throw invalidArgument(`config sets both run.${names.command} and run.${names.agent}: keep one`, {
      [names.command]: config.command,
      [names.agent]: config.agent,
    });
  return pick(config.agent, config.command);
}

/**
 * A child's outcome plus the agent's final message (null when there is none, or for a plain command) and
 * what it used (docs/run.md §7.1).
 */
export type AgentOutcome = ChildOutcome & { final_message: string | null } & UsageReport;

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

/** One line of a failure reason: at most 500 characters. */
function reasonLine(s: string): string {
  const l =
    s
      .trim()
      .split('\n')
      .find((x) => x.trim() !== '') ?? '';
  return l.length > 500 ? `${l.slice(0, 499)}…` : l;
}

/**
 * codex's last error line: `ERROR: …` is what it prints when a turn fails (docs/agents.md).
 */
export function codexErrorLine(tail: string): string | null {
  // Upper case only: `error: …` lines in the tail are usually the output of the agent's own commands.
  const lines = tail.split(/\r?\n/).filter((l) => /^(\[[^\]]*\]\s*)?ERROR:\s/.test(l));
  return lines.length ? reasonLine(lines[lines.length - 1]!) : null;
}

/** What an agent is asked to be: its argv, its prompt, the state commands its relay serves. */
export interface AgentRole {
  argv: (agent: AgentName, p: AgentPaths) => string[];
  prompt: string;
  relay: readonly string[];
}

/**
 * Runs a preset once for a step: the brief file and TUG_* environment as for any implementer (§2), plus the
 * agent's confinement (docs/agents.md §1): launcher and TMPDIR in the worktree's `.tug/`, the state relay
 * served for the run's duration. `role`: the implementer's (default) or another (a reviewer, review.ts).
 */
export async function runAgent(
  agent: AgentName,
  o: Omit<ImplementerOptions, 'argv'>,
  role?: AgentRole,
): Promise<AgentOutcome> {
  const json = JSON.stringify(o.brief, null, 2) + '\n';
  await mkdir(dirname(o.briefPath), { recursive: true });
  await writeFile(o.briefPath, json);
  const lastMessage = o.logPath.replace(/\.log$/, '') + '.final.md';
  await rm(lastMessage, { force: true });
  const owner: StepOwner = {
    plan: o.brief.plan_path,
    step: o.brief.step_anchor,
    worktree: o.vars.worktree,
    attempt: o.brief.attempt,
  };
  // The launcher's directory sits beside the run's logs: the driver's, outside every worktree (confine.ts).
  const space = await prepareAgentSpace(o.vars.worktree, dirname(o.logPath));
  const base = implementerEnv(o.baseEnv, o.vars, o.brief, o.briefPath);
  const env = { ...base, ...agentEnvAdditions(base, space) };
  let out: ChildOutcome;
  let launcherChanged: string | null = null;
  // Both agents' JSON streams become a readable log on their way to it, and are counted (usage.ts).
  const transcript = agent === 'codex' ? new CodexTranscript() : new ClaudeTranscript();
  try {
    const relay = await serveRelay(space.relay, owner, env, role?.relay ?? AGENT_STATE_COMMANDS);
    try {
      out = await runChild({
        argv: codexJson(
          (role?.argv ?? agentArgv)(agent, {
            owner,
            lastMessage,
            checkpoints: checkpointCommands(o.brief),
            allow: o.agentAllow ?? [],
          }),
        ),
        cwd: o.cwd,
        env: agentProcessEnv(env),
        // A reviewer brings its own prompt; the resolver of a conflict gets its own (docs/run.md §1.9).
        input:
          role?.prompt ??
          (o.brief.conflict ? conflictPrompt : agentPrompt)(o.brief, {
            worktree: o.vars.worktree,
            briefPath: o.briefPath,
          }),
        timeoutMs: o.timeoutMs,
        logPath: o.logPath,
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.pidRecord ? { pidRecord: o.pidRecord } : {}),
        stdoutLines: (l: string) => transcript.line(l),
      });
    } finally {
      await relay.close();
    }
    launcherChanged = await space.changed();
  } finally {
    await space.release();
  }
  // An agent CLI that is not installed fails every step alike: the run stops (docs/run.md §2.1).
  throwIfNotStarted(out, agent, o.role ?? `the ${agent} agent`, { preset: true });
  const done = await agentOutcome(out, transcript, lastMessage);
  // Belt and braces: the launcher is out of the agent's reach; had it changed, what the agent's allowed
  // commands ran was not tugcode (docs/agents.md §1.2), so the attempt fails whatever it reported.
  if (!launcherChanged) return done;
  return { ...done, ok: false, last_line: `the tugcode launcher was changed while the agent ran: ${launcherChanged}` };
}

/** The agent's outcome from its child's: its final message, its usage, the reason of a failure. */
async function agentOutcome(
  out: ChildOutcome,
  transcript: CodexTranscript | ClaudeTranscript,
  lastMessage: string,
): Promise<AgentOutcome> {
  const used = { usage: transcript.usage(), usage_warning: transcript.usageWarning() };
  if (transcript instanceof CodexTranscript) {
    const text = await readFile(lastMessage, 'utf8').catch(() => null);
    if (out.ok || out.timed_out || out.aborted) return { ...out, final_message: text, ...used };
    const err = codexErrorLine(out.tail);
    return { ...out, ...(err ? { last_line: err } : {}), final_message: text, ...used };
  }
  const r = transcript.result();
  // The reason is the result's text (an API error's message), never the raw JSON line.
  const why = r ? `claude: ${reasonLine(r.message ?? '') || r.subtype || 'error'}` : null;
  if (out.ok && r?.is_error) return { ...out, ok: false, last_line: why!, final_message: r.message, ...used };
  if (!out.ok && why && !out.timed_out && !out.aborted)
    return { ...out, last_line: why, final_message: r!.message, ...used };
  return { ...out, final_message: r?.message ?? null, ...used };
}

/**
 * codex always runs with `--json` under the driver, whichever argv a role builds (its events carry the
 * usage; the transcript keeps the log readable); claude's argv as it is.
 */
function codexJson(argv: string[]): string[] {
  if (argv[0] !== 'codex' || argv[1] !== 'exec' || argv.includes('--json')) return argv;
  return ['codex', 'exec', '--json', ...argv.slice(2)];
}

/**
 * The implementer phase of one unit (docs/run.md §2, §2.1): the preset when `agent` is set, else the
 * configured command (whose outcome has no final message).
 */
export async function runStepImplementer(
  which: { implementer: string | null; agent: AgentName | null },
  o: Omit<ImplementerOptions, 'argv'>,
): Promise<AgentOutcome> {
  if (which.agent) return runAgent(which.agent, o);
  return { ...(await runImplementer({ ...o, argv: which.implementer ?? '' })), final_message: null };
}
