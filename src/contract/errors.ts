/**
 * The one error type of tugcode and its catalogue (docs/output.md §3, §4).
 *
 * Core code throws `new TugError(code, details)`; the CLI and MCP layers turn it into an envelope and an
 * exit code. Each code has exactly one entry here: its exit code, a message built from the details, and a
 * hint naming the command that fixes it where one exists.
 */

import { shellArg } from '../util/shell-arg.js';
import { targetPlace } from './layout.js';
import { usdText } from './usage.js';

export type Details = Record<string, unknown>;

interface CatalogueEntry {
  exit: number;
  /** When the error is raised (documentation, docs/errors.md). */
  when: string;
  /** `store`: where the state lives when it is not the embedded state.db (PostgreSQL), named by messages. */
  message: (d: Details, store?: string) => string;
  hint?: (d: Details) => string | undefined;
}

const s = (v: unknown, fallback = '?'): string => (v === undefined || v === null ? fallback : String(v));

/** `host:port` of a PostgreSQL server as messages name it: an IPv6 address in brackets. */
export function pgAddress(host: string, port: number | string): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
const plan = (d: Details) => s(d.plan_path ?? d.plan, '<plan>');
/** A value as one argument of a hint's command (shell-quoted when it needs it); `fallback` when it is missing. */
const arg = (v: unknown, fallback = '?'): string => (v === undefined || v === null ? fallback : shellArg(String(v)));
/** Plans a hint names at most; a repository may hold hundreds, and the details keep them all. */
const KNOWN_PLANS_SHOWN = 10;
function knownPlans(all: string[]): string {
  const shown = all.slice(0, KNOWN_PLANS_SHOWN).map((c) => arg(c));
  const more = all.length - shown.length;
  return `known plans: ${shown.join(', ')}${more > 0 ? ` and ${more} more (ls .tugtool/tugplan-*.md)` : ''}`;
}
/** The plan as one argument of a hint's command. */
const planArg = (d: Details) => arg(d.plan_path ?? d.plan, '<plan>');

/**
 * What clears open items and substeps of a strict completion (docs/state.md §3.8–§3.9): the step's plan,
 * anchor and the caller's worktree filled in (`<wt>` when the details lack it).
 */
const completeRemaining = (d: Details) =>
  `tugcode state update ${planArg(d)} ${arg(d.step_anchor)} --worktree ${arg(d.worktree, '<wt>')} --complete-remaining`;
/** `then_run`: what finishes the step once its blocker is cleared (`tugcode commit` adds it, docs/git.md §4). */
const thenRun = (d: Details) => (typeof d.then_run === 'string' ? ` && ${d.then_run}` : '');

/**
 * The PlanDrift of a run's catch-up with the base (docs/run.md §1.1 item 2): the integration branch's copy
 * of the plan differs from the base's. When its newer plan came from the remote's base (`newer:
 * "remote_base"`: another host took in a newer base), the fix is bringing this clone's base up to date;
 * otherwise the branch changed the plan itself, and the base's copy is restored on it (on a remote, after
 * bringing the remote tip into the clone's branch), the update of the base named last while it is not known
 * which (`newer` absent).
 */
function catchUpDriftHint(d: Details): string {
  const integ = arg(d.integration_branch);
  const base = arg(d.base_branch);
  const remote = d.remote === undefined ? undefined : arg(d.remote);
  const into = remote ? `${remote}/${integ}` : integ;
  const sw = remote ? `git switch ${integ} && git merge --ff-only ${into} && ` : `git switch ${integ} && `;
  const restore = `${sw}git checkout ${base} -- ${planArg(d)} && git commit, then run again`;
  if (remote && d.newer === 'remote_base')
    return `git switch ${base} && git pull ${remote} ${base}, then run again   (${into} took in the newer plan of ${remote}/${base})`;
  if (!remote || d.newer === 'integration') return restore;
  return `${restore}; or, when ${into} took in a newer ${base} from another host, update ${base} first`;
}

/**
 * `tugcode run <plan>` with the flags of the run that stopped (`run_flags`, src/run/run-flags.ts), so
 * following a hint runs the plan the same way: the one place a "run it again" command is written (the
 * hints here, the run's text summary). `drop`: flags (with their value) left out, for the hint to replace.
 */
export function runAgain(d: Details, drop: string[] = []): string {
  const all = (d.run_flags as string[] | undefined) ?? [];
  const words = all[0] === '-C' ? all.slice(2) : all;
  const kept: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const takesValue = i + 1 < words.length && !words[i + 1]!.startsWith('--');
    if (drop.includes(w)) {
      if (takesValue) i++;
      continue;
    }
    kept.push(shellArg(w));
  }
  return [`${tugcodeIn(d)} run ${planArg(d)}`, ...kept].join(' ');
}

/**
 * The run again after failed steps (docs/run.md §7.3): when one failed `Stalled`, the same stall_seconds
 * would end the same silent command again, so the run again doubles it (a `--stall-seconds` it already gives
 * that is at least as large is kept), saying why. The setting and the silence are read from the reason the
 * driver writes (src/run/step.ts: `… for <silent> s (stall_seconds <N>)`); else it is `runAgain`.
 */
export function runAgainAfterFailures(d: Details): string {
  const failed = (d.failed_steps as { step_anchor?: unknown; reason?: unknown }[] | undefined) ?? [];
  let worst: { step: string; silent: number; setting: number } | null = null;
  for (const f of failed) {
    const m = /^Stalled: .* for (\d+) s \(stall_seconds (\d+(?:\.\d+)?)\)/.exec(
      typeof f.reason === 'string' ? f.reason : '',
    );
    if (m && (!worst || Number(m[2]) > worst.setting))
      worst = { step: s(f.step_anchor), silent: Number(m[1]), setting: Number(m[2]) };
  }
  if (!worst) return runAgain(d);
  const words = (d.run_flags as string[] | undefined) ?? [];
  const i = words.indexOf('--stall-seconds');
  const given = i >= 0 ? Number(words[i + 1]) : NaN;
  const raised = Math.ceil(worst.setting * 2);
  if (Number.isFinite(given) && given >= raised) return runAgain(d);
  return (
    `${runAgain(d, ['--stall-seconds'])} --stall-seconds ${raised} ` +
    `(stall_seconds doubled: ${worst.step} was silent for ${worst.silent} s)`
  );
}

/** The run again once a budget is spent: the flag it was given, with `<more>` (docs/run.md §7.2). */
export function raisedBudgetRun(d: Details): string {
  return d.budget_usd !== undefined && d.budget_usd !== null
    ? `${runAgain(d, ['--budget-usd'])} --budget-usd <more>`
    : `${runAgain(d, ['--budget-tokens'])} --budget-tokens <more>`;
}

/**
 * A run that stopped for another reason beside steps waiting for a human (`needs_human_steps`): their
 * decision comes first, else the run again leaves them waiting (docs/run.md §6.3). `<decide>; ` or ''.
 */
function decisionsFirst(d: Details): string {
  const steps = (d.needs_human_steps as unknown[] | undefined) ?? [];
  return steps
    .map((a) => `${decideCommands(d.plan_path, a, d)[0]} (or --revise "<notes>", or --reject "<reason>"); `)
    .join('');
}

/**
 * `tugcode`, with the `-C DIR` the run was given (the first words of its `run_flags`, src/run/run-flags.ts):
 * a command a hint suggests then works pasted in the shell tugcode ran from (docs/run.md §1.2).
 */
export function tugcodeIn(d: Details): string {
  const words = (d.run_flags as string[] | undefined) ?? [];
  return words[0] === '-C' && words[1] !== undefined ? `tugcode -C ${shellArg(words[1])}` : 'tugcode';
}

/** What a command that runs a plan names when neither the run nor the configuration gives an implementer. */
const IMPLEMENTER_PLACEHOLDER = '--implementer <your implementer>';

/**
 * The `tugcode run <plan>` a hint of another command (merge, commit) suggests: with the run's flags when the
 * details carry them (`run_flags`), else plain when the configuration names an implementer
 * (`implementer_configured`), else with a placeholder for one: run as written, a bare `tugcode run <plan>`
 * would run with no implementer, every item marked completed (docs/run.md §2). The run's flags are those of
 * a live run's lock or of the plan's last run that ended (docs/state.md §2); `drop` as for `runAgain`.
 */
export function runPlanCommand(d: Details, drop: string[] = []): string {
  if (d.run_flags) return runAgain(d, drop);
  const plain = runAgain({ plan_path: d.plan_path, plan: d.plan });
  return d.implementer_configured ? plain : `${plain} ${IMPLEMENTER_PLACEHOLDER}`;
}

/** The path of a clone's owner name (`<host>:<path>` on PostgreSQL, a plain path on SQLite, docs/state.md §8.1). */
function clonePath(owner: unknown): string {
  const o = s(owner);
  const i = o.indexOf(':/');
  return o.startsWith('/') || i < 0 ? o : o.slice(i + 1);
}

/** An integration target of a message's details, named as layout.ts names one. */
function placeOf(kind: unknown, where: unknown, d: Details): string {
  return targetPlace({ kind, where: s(where) }, s(d.integration_branch, 'tugplan/<slug>'));
}

/**
 * CommitNotIntegrated of `merge` (docs/run.md §1.11): where the commit is (`found_on`, the branches holding
 * it) and where the plan integrates (`integration_kind`/`integration_where`) say how it gets into the branch.
 */
function notIntegratedHint(d: Details): string {
  const branch = s(d.branch);
  const on = (d.found_on as string[] | undefined) ?? [];
  const remote = d.integration_kind === 'remote' ? s(d.integration_where) : null;
  if (remote !== null && on.includes(`${remote}/${branch}`))
    return `${fetchBranch(remote, branch)}, then merge again   (the plan integrates on ${remote}/${branch}, which this clone's ${branch} is behind)`;
  // The commit is in no object of this clone (`commit_unfetched`): the same fetch brings it.
  if (remote !== null && d.commit_unfetched === true)
    return `${fetchBranch(remote, branch)}, then merge again   (the plan integrates on ${remote}/${branch}; this clone has not fetched the step's commit)`;
  const where = remote !== null ? ` (the plan integrates on ${remote}/${branch}: git fetch ${arg(remote)} first)` : '';
  if (on.length > 0)
    return `the commit is on ${on.join(', ')}: the step was integrated elsewhere${where}; bring it into ${branch} (git switch ${arg(branch)} && git merge ${arg(on[0])}), then merge again; tugcode doctor shows where the plan integrates`;
  return `no branch of this clone holds it: it was integrated in another clone or on a remote not fetched yet${where}; fetch it and bring it into ${branch}, then merge again; tugcode doctor shows where the plan integrates`;
}

/** The fetch that brings a plan's integration branch from its remote into this clone (docs/run.md §1.11). */
function fetchBranch(remote: string, branch: string): string {
  return `git fetch ${arg(remote)} ${arg(branch)}:${arg(branch)}`;
}

/**
 * IntegrationTargetMismatch (docs/run.md §1.11): the command that integrates where the plan does — the run
 * with the recorded `--remote` (or without one, `--remote ''` when the config names a remote), or the run
 * in the recorded clone — and, for a run, how to move the plan on purpose.
 */
function targetHint(d: Details): string {
  const remote = d.recorded_kind === 'remote' ? s(d.recorded_where) : null;
  const again = runAgain(d, ['--remote', '--move-integration']);
  const move = `; to move the plan's integration to where this run integrates, on purpose: add --move-integration (docs/run.md §1.11)`;
  if (remote !== null) {
    if (d.command !== 'run')
      return `${runPlanCommand(d, ['--remote'])} --remote ${arg(remote)}   (tugcode commit integrates into this clone's own branch only; the plan's steps integrate through ${remote})`;
    return `${again} --remote ${arg(remote)}   (or set remote = ${JSON.stringify(remote)} under [run] in .tugtool/config.toml)${move}`;
  }
  const here = (d.clone ?? d.where) === d.recorded_where;
  const local = `${again}${d.remote_from === 'config' ? ` --remote ''` : ''}`;
  if (here) return `${local}   (this clone's own branch; without --remote)${d.command === 'run' ? move : ''}`;
  const there = `cd ${arg(clonePath(d.recorded_where))} && ${d.command === 'run' ? local : runPlanCommand(d, ['--remote'])}`;
  return `${there}   (on the host of that clone)${d.command === 'run' ? move : ''}`;
}

export const CATALOGUE = {
  InvalidArgument: {
    exit: 2,
    when: 'a flag, value or argument is invalid (unknown flag, bad number, NUL byte, ordinal out of range, stdin on a TTY, …)',
    message: (d) => s(d.reason, 'invalid argument'),
  },
  ProgramNotRunnable: {
    exit: 2,
    when: '`run`: the program of `--implementer`, `--reviewer`, `--resolver` or `[run] implementer|reviewer|resolver|notify`, or the CLI of an agent preset (`--agent`, `--review-agent`, `[run] agent|review_agent`), does not exist, is not executable, or is not on PATH (docs/run.md §2); checked before the first claim, and a program that cannot be started at a step stops the run',
    message: (d) =>
      `${s(d.argument, 'the command')} names ${s(d.program)}, which ${s(d.reason, 'cannot be run')}` +
      (d.path && d.path !== d.program ? ` (${s(d.path)})` : ''),
    hint: (d) =>
      d.reason === 'is not executable'
        ? `chmod +x ${arg(d.path ?? d.program)}`
        : d.reason === 'is not on PATH'
          ? d.preset === true
            ? `install ${arg(d.program)}: the agent preset runs it by that name, found on PATH`
            : `install ${arg(d.program)}, or name it by a path (./${s(d.program)} or an absolute one)`
          : `a program path with a slash is resolved against ${arg(d.base, 'the directory tugcode runs in')}` +
            (String(d.argument ?? '').startsWith('run.') ? ' (the repository root, for a config value)' : '') +
            `: check it (ls -l ${arg(d.path ?? d.program)}), or give an absolute path`,
  },
  InvalidStatus: {
    exit: 2,
    when: 'an item status that does not exist',
    message: (d) =>
      `invalid status ${JSON.stringify(d.value)}; expected one of ${s((d.allowed as string[] | undefined)?.join(', '))}`,
  },
  InvalidBatch: {
    exit: 2,
    when: '`--batch` input is not a JSON array of valid entries, or repeats a `(kind, ordinal)`',
    message: (d) => `${d.input === 'flags' ? 'invalid item changes' : 'invalid --batch input'}: ${s(d.reason)}`,
    hint: (d) =>
      d.input === 'flags'
        ? 'name each item once per call'
        : `pass a JSON array like [{"kind":"task","ordinal":0,"status":"completed"}] on stdin`,
  },
  UnknownCommand: {
    exit: 2,
    when: 'no such command',
    message: (d) => `unknown command ${JSON.stringify(d.command)}`,
    hint: () => 'tugcode --help',
  },
  ConfigInvalid: {
    exit: 2,
    when: 'malformed `config.toml`, a value of the wrong type, an invalid `TUGCODE_NOW`',
    message: (d) => `${s(d.source, 'configuration')}: ${s(d.reason)}`,
    hint: (d) => (d.hint as string | undefined) ?? 'fix the value, or delete the key to use its default',
  },
  NotAGitRepository: {
    exit: 3,
    when: 'not inside a git work tree (docs/git.md §1)',
    message: (d) =>
      `${s(d.path, 'the current directory')} is not inside a git work tree${d.reason ? ` (${s(d.reason)})` : ''}`,
    hint: () => 'run tugcode inside a git repository (git init), or pass -C <dir>',
  },
  NotInitialized: {
    exit: 3,
    when: 'the main root has no `.tugtool/` (docs/state.md §1)',
    message: (d) =>
      `${s(d.repo_root, 'the repository')} has no .tugtool/ directory${d.reason ? ` (${s(d.reason)})` : ''}`,
    hint: (d) => (d.reason ? `move ${arg(d.path, '.tugtool')} aside, then tugcode init` : 'tugcode init'),
  },
  PlanNotFound: {
    exit: 3,
    when: 'the plan argument names no plan, or the plan file is gone from the worktree',
    message: (d) => `no plan matches ${JSON.stringify(d.plan ?? d.plan_path)}${d.reason ? ` (${s(d.reason)})` : ''}`,
    hint: (d) =>
      Array.isArray(d.candidates) && d.candidates.length > 0
        ? knownPlans(d.candidates as string[])
        : 'tugcode validate   (lists the plans under .tugtool/)',
  },
  PlanNotInitialized: {
    exit: 3,
    when: 'the plan has no row in state.db',
    message: (d, store) => `${plan(d)} is not initialized in ${store ?? 'state.db'}`,
    hint: (d) => `tugcode state init ${planArg(d)}`,
  },
  PlanExists: {
    exit: 4,
    when: '`state import`: the plan already has rows or events in this state store (docs/state.md §8)',
    message: (d) =>
      `${plan(d)} already has state here (${s(d.steps, '0')} step row(s), ${s(d.events, '0')} event(s)); nothing was changed`,
    hint: () => 'pass --replace to delete its rows and events here and load the document instead',
  },
  StepNotFound: {
    exit: 3,
    when: 'the step is not a step of the plan',
    message: (d) => `${s(d.step_anchor)} is not a step of ${plan(d)}`,
    hint: (d) => `tugcode state show ${planArg(d)}`,
  },
  WorktreeNotFound: {
    exit: 3,
    when: '`--worktree` is not the main checkout or a linked worktree of this repository (docs/output.md §5)',
    message: (d) =>
      `${s(d.worktree)} is not the main checkout or a linked worktree of ${s(d.repo_root, 'this repository')}`,
    hint: () => 'git worktree list   (pass the root of one of these)',
  },
  BranchNotFound: {
    exit: 3,
    when: '`merge`: the plan has neither an integration branch nor a worktree branch (never run)',
    message: (d) => s(d.reason, `branch ${s(d.branch)} does not exist`),
    // A plan that integrates on a remote ran in another clone: its branch is there (merge.ts remoteBranchMissing).
    hint: (d) =>
      d.integration_kind === 'remote'
        ? `${fetchBranch(s(d.integration_where), s(d.branch))}, then merge again`
        : `implement the plan first: ${runPlanCommand(d)} (or tugcode worktree create ${planArg(d)})`,
  },
  AmbiguousPlan: {
    exit: 3,
    when: 'a plan argument matches more than one plan',
    message: (d) =>
      `${JSON.stringify(d.plan)} matches several plans: ${s((d.candidates as string[] | undefined)?.join(', '))}`,
    hint: () => 'pass the plan path instead of the slug',
  },
  NotOwner: {
    exit: 4,
    when: 'the caller does not own the step (docs/state.md §4)',
    message: (d) =>
      `${s(d.worktree)} does not own ${s(d.step_anchor)} of ${plan(d)}` +
      (d.claimed_by
        ? ` (claimed by ${s(d.claimed_by)}, lease until ${s(d.lease_expires_at)})`
        : ' (it is not claimed)'),
    hint: (d) => `tugcode state claim ${planArg(d)} --worktree <your worktree>`,
  },
  LeaseExpired: {
    exit: 4,
    when: "the caller's claim on the step has ended (docs/state.md §4)",
    message: (d) =>
      `the claim of ${s(d.worktree)} on ${s(d.step_anchor)} of ${plan(d)} has ended` +
      (d.claimed_by ? ` (now claimed by ${s(d.claimed_by)})` : ''),
    hint: (d) =>
      `drop this step and claim again: tugcode state claim ${planArg(d)} --worktree ${arg(d.worktree, '<wt>')}`,
  },
  AttemptMismatch: {
    exit: 4,
    when: "`--attempt` is not the step's current attempt",
    message: (d) =>
      `--attempt ${s(d.given)} is not the current attempt ${s(d.current)} of ${s(d.step_anchor)} in ${plan(d)}`,
    // An earlier attempt was discarded (taken over, released, failed, reset); any other number never was one.
    hint: (d) =>
      typeof d.given === 'number' && typeof d.current === 'number' && (d.given < 1 || d.given > d.current)
        ? `${d.given} was never an attempt of ${s(d.step_anchor)}; the current one is ${d.current}: pass the attempt your claim returned`
        : 'this attempt was discarded; claim again',
  },
  InvalidTransition: {
    exit: 4,
    when: "the step's or item's status forbids the change",
    message: (d) => s(d.reason, `${s(d.step_anchor)} of ${plan(d)}: status ${s(d.status)} forbids this change`),
    // Where a refusal has a command of its own, its site gives it; otherwise the step's status says why.
    hint: (d) =>
      d.step_anchor === undefined
        ? undefined
        : `tugcode state show ${planArg(d)} --step ${arg(d.step_anchor)}   (its status and who holds it)`,
  },
  PlanInvalid: {
    exit: 4,
    when: 'the plan has validator errors (docs/plan-format.md §3)',
    message: (d) => {
      const diags = (d.diagnostics as { code: string; line?: number; message: string }[] | undefined) ?? [];
      const first = diags[0];
      const others = ((d.invalid_plans as string[] | undefined) ?? []).filter((p) => p !== d.plan_path);
      return (
        `${plan(d)} has ${diags.length} validation error(s)` +
        (first ? `; first: ${first.code}${first.line ? ` line ${first.line}` : ''}: ${first.message}` : '') +
        (others.length ? `; ${others.length} other plan(s) invalid too: ${others.join(', ')}` : '')
      );
    },
    hint: (d) => `tugcode validate ${planArg(d)}`,
  },
  PlanDrift: {
    exit: 4,
    when: "the plan's structure changed since `state init` (docs/state.md §3), or changed on the base branch during `run`",
    message: (d) => `the structure of ${plan(d)} changed since state init${d.summary ? `: ${s(d.summary)}` : ''}`,
    // During a run (`during_run`): running again takes the new plan over, with the run's own flags.
    hint: (d) =>
      d.during_run === true
        ? `${runAgain(d)} (again: it takes the new plan over)`
        : d.base_branch !== undefined && d.integration_branch !== undefined
          ? catchUpDriftHint(d)
          : `tugcode${d.read_from === undefined ? '' : ` -C ${arg(d.read_from)}`} state init ${planArg(d)} --force`,
  },
  PlanNotCommitted: {
    exit: 4,
    when: "`worktree create`/`run`: the plan is not committed on the base branch, or the main checkout's copy differs (docs/git.md §3)",
    message: (d) =>
      `${plan(d)} is not committed on ${s(d.base_branch, 'the base branch')}${d.reason ? ` (${s(d.reason)})` : ''}`,
    hint: (d) => `git add ${planArg(d)} && git commit`,
  },
  ChecklistIncomplete: {
    exit: 4,
    when: 'strict `state complete` (docs/state.md §3): open checklist items',
    message: (d) =>
      `${s(d.step_anchor)} has ${(d.open_items as unknown[] | undefined)?.length ?? '?'} open checklist item(s); complete them, defer them, or use --force <reason>`,
    hint: (d) => {
      const first = (d.open_items as { kind?: unknown; ordinal?: unknown }[] | undefined)?.[0];
      const each = first ? `--${s(first.kind)} ${s(first.ordinal)} completed, or deferred --reason "<why>"` : '';
      return `${completeRemaining(d)}${thenRun(d)}` + (each ? `   (or mark each item: ${each})` : '');
    },
  },
  SubstepsIncomplete: {
    exit: 4,
    when: 'strict `state complete` (docs/state.md §3): substeps not completed',
    message: (d) =>
      `${s(d.step_anchor)} has ${(d.incomplete_substeps as unknown[] | undefined)?.length ?? '?'} substep(s) not completed`,
    hint: (d) => `${completeRemaining(d)}${thenRun(d)}`,
  },
  RefactorsIncomplete: {
    exit: 4,
    when: 'strict `state complete` (docs/state.md §3), and `tugcode commit` before it commits (docs/git.md §4): refactor rows neither applied nor skipped',
    message: (d) =>
      `${s(d.step_anchor)} has ${(d.open_refactors as unknown[] | undefined)?.length ?? '?'} refactor(s) neither applied nor skipped`,
    hint: (d) =>
      `tugcode refactor run-step ${planArg(d)} ${arg(d.step_anchor)} --worktree ${arg(d.worktree, '<wt>')}` +
      `${typeof d.attempt === 'number' ? ` --attempt ${d.attempt}` : ''}${thenRun(d)}`,
  },
  PlanIncomplete: {
    exit: 4,
    when: '`run` stopped with failed or blocked steps (docs/run.md §1); `merge` of a plan with steps not completed (docs/git.md §5)',
    message: (d) => `${plan(d)} is not complete${d.reason ? `: ${s(d.reason)}` : ''}`,
    hint: (d) => {
      // A step failed at its cap stays failed: re-running `run` does nothing until it is reset.
      const failed = ((d.failed_steps as { step_anchor?: unknown }[] | undefined) ?? []).map((f) => f.step_anchor);
      if (failed.length === 0) return `${tugcodeIn(d)} state show ${planArg(d)}`;
      const resets = failed.map((a) => `${tugcodeIn(d)} state reset ${planArg(d)} ${arg(a)}`);
      return [...resets, runAgainAfterFailures(d)].join(' && ');
    },
  },
  BudgetExhausted: {
    exit: 4,
    when: "`run`: the plan's usage reached `--budget-usd` or `--budget-tokens` (docs/run.md §7.2); no new step to implement was claimed (those a human approved still integrate), the running ones finished",
    message: (d) => {
      // `usage`: the plan's totals as `state show` gives them once the running steps finished; `reached_at`:
      // the totals the budget was judged by when it was reached (absent when they are the same).
      type T = { cost_usd?: number | null; tokens?: number };
      const u = (d.usage ?? {}) as T;
      const at = d.reached_at as T | undefined;
      const usd = (v: unknown) => (typeof v === 'number' ? usdText(v) : `$${s(v)}`);
      const toks = (v: unknown) => (typeof v === 'number' ? v.toLocaleString('en-US') : s(v));
      const spent: string[] = [];
      const was: string[] = [];
      if (d.budget_usd !== undefined && d.budget_usd !== null) {
        spent.push(`${usd(u.cost_usd ?? 0)} of ${usd(d.budget_usd)}`);
        if (at && (at.cost_usd ?? 0) !== (u.cost_usd ?? 0)) was.push(usd(at.cost_usd ?? 0));
      }
      if (d.budget_tokens !== undefined && d.budget_tokens !== null) {
        spent.push(`${toks(u.tokens ?? 0)} of ${toks(d.budget_tokens)} tokens`);
        if (at && (at.tokens ?? 0) !== (u.tokens ?? 0)) was.push(`${toks(at.tokens ?? 0)} tokens`);
      }
      const then = was.length ? ` (reached at ${was.join(', ')}; the steps running then finished)` : '';
      // Steps a human approved still integrate, with no agent run (docs/run.md §7.2).
      const approved = (d.approved_steps as unknown[] | undefined) ?? [];
      const claimed = approved.length
        ? `no step to implement was claimed; the approved ${approved.map((a) => s(a)).join(', ')} integrated`
        : 'no new step was claimed';
      return `the budget of ${plan(d)} is spent: ${spent.join(', ') || 'reached'}${then}; ${claimed}`;
    },
    hint: (d) =>
      `${decisionsFirst(d)}${tugcodeIn(d)} state show ${planArg(d)} (its usage), then raise the budget: ${raisedBudgetRun(d)}`,
  },
  CommitNotIntegrated: {
    exit: 4,
    when: "`merge`: a completed step's commit is not reachable from the branch to merge (docs/git.md §5); `state complete --commit C`: the plan's integration branch exists and lacks C (docs/git.md §4.2)",
    message: (d) => `the commit of ${s(d.step_anchor)} (${s(d.commit_hash)}) is not reachable from ${s(d.branch)}`,
    hint: notIntegratedHint,
  },
  Busy: {
    exit: 4,
    when: 'state.db stayed locked past the busy timeout (docs/state.md §1)',
    message: (d, store) => `${s(d.db_path, store ?? 'state.db')} stayed locked for more than ${s(d.timeout_ms)} ms`,
    // The holder of an SQLite lock may be any process with state.db open (a tugcode command, a sqlite3
    // shell, a script): named when the host could tell (`holders`, src/util/file-openers.ts).
    hint: (d) => {
      const holders = (d.holders as { pid?: unknown; command?: unknown }[] | undefined) ?? [];
      const db = arg(d.db_path, '.tugtool/state.db');
      const named = holders.map((h) => `pid ${s(h.pid)} (${s(h.command)})`).join(', ');
      const finish = 'let it finish (in a sqlite3 shell: COMMIT or ROLLBACK) or stop it, then retry';
      if (holders.length === 1) return `${named} has ${db} open and holds a write transaction on it: ${finish}`;
      if (holders.length > 1)
        return `one of the processes with ${db} open holds a write transaction on it: ${named}; ${finish}`;
      // PostgreSQL's advisory locks are taken by tugcode alone (src/state/sql/postgres.ts).
      if (/advisory lock/.test(s(d.reason, '')))
        return 'another tugcode command holds the lock; retry in a moment (tugcode status shows what runs)';
      return `another process (a tugcode command, a sqlite3 shell, a script, …) holds a write transaction on ${db}: retry when it ends; if it persists, find it (fuser -v ${db}) and let it finish or stop it`;
    },
  },
  SchemaTooNew: {
    exit: 4,
    when: 'state.db was written by a newer tugcode',
    message: (d, store) =>
      `${s(d.db_path, store ?? 'state.db')} has schema version ${s(d.found)}, newer than this tugcode supports (${s(d.supported)})`,
    hint: () => 'upgrade tugcode (npm install tugcode@latest)',
  },
  WorktreeExists: {
    exit: 4,
    when: '`worktree create`: a live worktree for the plan exists, or its branch or directory name is taken; `run`: a worker branch `tugplan/<slug>--w<k>` it did not make exists, its worker directory holds another branch, or a branch named `tugplan` leaves no room for its branches (docs/git.md §3, §9)',
    message: (d) =>
      `${s(d.reason, 'a worktree for this plan already exists')}${d.worktree_path && !d.branches ? `: ${s(d.worktree_path)}` : ''}`,
    hint: (d) => (d.hint as string | undefined) ?? 'pass --reuse to continue in it, or --new to make another',
  },
  WorktreeDirty: {
    exit: 4,
    when: '`worktree remove` of a tree with uncommitted changes; `merge` (and its `--dry-run`) into a checkout whose changes or untracked files are in the way',
    message: (d) => `${s(d.worktree_path)} has uncommitted changes`,
    hint: () => 'commit or stash them, or pass --force',
  },
  WorktreeUnmerged: {
    exit: 4,
    when: '`worktree remove` of a tree whose branch has commits in neither the integration branch nor the base',
    message: (d) => `branch ${s(d.branch)} of ${s(d.worktree_path)} has ${s(d.count)} commit(s) merged nowhere`,
    hint: () => 'tugcode merge <plan>, or pass --force',
  },
  WorktreeHasClaims: {
    exit: 4,
    when: '`worktree remove` of a tree that holds a live claim',
    message: (d) => `${s(d.worktree_path)} holds live claims: ${s((d.claims as string[] | undefined)?.join(', '))}`,
    hint: () => 'tugcode state release <plan> <step> --worktree <wt>, or pass --force',
  },
  MainCheckoutRefused: {
    exit: 4,
    when: '`commit` in the main checkout without `--allow-main` (docs/git.md §4)',
    message: (d) => `refusing to auto-stage and commit in the main checkout ${s(d.worktree)}`,
    hint: () => 'run it in a worktree (tugcode worktree create), or pass --allow-main',
  },
  GitOperationInProgress: {
    exit: 4,
    when: '`commit` in a worktree in the middle of a rebase, `git am`, merge, cherry-pick or revert (stopped on a conflict or an `edit`, or its process killed; docs/git.md §4.3)',
    message: (d) =>
      `${s(d.worktree)} is in the middle of git ${s(d.operation, 'operation')}; a step commit would land in it`,
    hint: (d) => {
      const op = arg(d.operation, 'rebase');
      const W = arg(d.worktree, '<wt>');
      return `finish it (resolve, git add, then git -C ${W} ${op} --continue) or undo it (git -C ${W} ${op} --abort), then run the same tugcode commit again`;
    },
  },
  CommitFailed: {
    exit: 4,
    when: '`commit`: git refused the commit: a hook failed, signing failed, a sparse-checkout or a held index.lock stopped it, or git has no identity (details.cause)',
    message: (d) => {
      const what: Record<string, string> = {
        hook: 'a git hook refused the commit',
        signing: 'git could not sign the commit',
        sparse_checkout: 'git refused paths outside the sparse-checkout definition',
        index_lock: 'the index is locked by another git process (index.lock)',
        identity: 'git has no user.name/user.email for the commit',
        other: 'git refused the commit',
      };
      const first = s(d.stderr, '')
        .split('\n')
        .find((l) => l.trim() !== '');
      return `${what[s(d.cause, 'other')] ?? what.other} in ${s(d.worktree)}${first ? `: ${first.trim()}` : ''}`;
    },
  },
  IntegrationUnrelated: {
    exit: 4,
    when: "`run`: the plan's integration branch exists but shares no history with the base branch",
    message: (d) =>
      `the integration branch ${s(d.branch)} shares no history with ${s(d.base_branch)}: it was not made from ${s(d.base_branch)}, and the run will not build on it`,
    hint: (d) => `rename it (git branch -m ${arg(d.branch)} <new-name>), then run again`,
  },
  IntegrationTargetMismatch: {
    exit: 4,
    when: "`run`, `commit`: the plan integrates elsewhere (docs/run.md §1.11): its recorded target is a git remote and this would integrate into the clone's own branch, or the reverse, or another remote, or another clone's branch; nothing was changed",
    message: (d) =>
      `${plan(d)} integrates into ${placeOf(d.recorded_kind, d.recorded_where, d)} (as the state records); ` +
      `this ${s(d.command, 'command')} would integrate into ${placeOf(d.kind, d.where, d)}`,
    hint: targetHint,
  },
  SubmodulesUnsupported: {
    exit: 4,
    when: '`run`: the base branch has `.gitmodules`; worker worktrees have no submodules checked out, so edits under one would be lost',
    message: (d) =>
      `${s(d.base_branch)} has submodules (.gitmodules); tugcode run does not check submodules out in its worker worktrees, and edits under one would be in no commit`,
  },
  NothingToCommit: {
    exit: 4,
    when: '`commit` with no changes and no `--allow-empty`',
    message: (d) => `nothing to commit in ${s(d.worktree)}`,
    hint: () => 'pass --allow-empty to record the step without changes',
  },
  MergeConflict: {
    exit: 4,
    when: '`merge` hit a conflict and was aborted cleanly; `commit --integrate` and `run` rebasing a step onto the integration branch hit one (`details.rebase`: `aborted`, or `stopped` for the resolver)',
    // The integration rebases a step's branch, not merges it (docs/git.md §4.2): the words follow `rebase`.
    message: (d) => {
      const files = s((d.files as string[] | undefined)?.join(', '));
      if (d.rebase === 'stopped')
        return `rebasing ${s(d.branch)} onto ${s(d.into)} conflicts in ${files}; the rebase is stopped there for the resolver`;
      if (d.rebase === 'aborted')
        return `rebasing ${s(d.branch)} onto ${s(d.into)} conflicts in ${files}; the rebase was aborted and the commit stays on ${s(d.branch)}`;
      return `merging ${s(d.branch)} into ${s(d.into)} conflicts in ${files}; the merge was aborted`;
    },
    // `merge`'s conflict (docs/git.md §5) is resolved on the plan's branch; merging again then finds the
    // target in it. The rebases' own ways out are given where they happen.
    hint: (d) =>
      d.rebase === undefined && d.branch !== undefined && d.into !== undefined
        ? `resolve it on ${arg(d.branch)}: in a checkout of it (its worktree, or git switch ${arg(d.branch)}) run git merge ${arg(d.into)}, fix the conflicted files, git add them and git commit; then tugcode merge ${arg(d.plan_path, '<plan>')} again from ${arg(d.into)}`
        : undefined,
  },
  Interrupted: {
    exit: 130,
    when: '`run` stopped by SIGINT (130), SIGTERM (143), SIGHUP (129) or a closed stdout (SIGPIPE, 141) before the plan was done (docs/run.md §1 item 5)',
    message: (d) =>
      `the run of ${plan(d)} was interrupted${d.signal ? ` by ${s(d.signal)}` : ''}` +
      `${d.stdout_closed ? ' (its stdout was closed)' : ''}; ` +
      (d.forced
        ? 'a second signal stopped it at once: its running commands were killed; held claims stay until their leases expire or the next run of the plan takes them over'
        : 'held claims were released'),
    hint: (d) => {
      const first = decisionsFirst(d);
      return `${first}${first ? 'then ' : ''}${runAgain(d)} (it resumes where this run stopped)`;
    },
  },
  RunInProgress: {
    exit: 4,
    when: 'another `run` of the plan holds its lock (docs/run.md §1); `merge` of a plan whose run holds it (docs/git.md §5.1)',
    message: (d) =>
      `another tugcode run of ${plan(d)} is in progress` +
      (d.holder_pid !== undefined
        ? ` (pid ${s(d.holder_pid)} on ${s(d.holder_host, '?')}, since ${s(d.started_at, '?')})`
        : '') +
      (d.reason ? `: ${s(d.reason)}` : ''),
    // Its workers and claims show in status; its lock is taken over on its own once that process is gone.
    hint: (d) => `tugcode status; wait for that run to end, or stop it (kill -INT ${s(d.holder_pid, '<pid>')})`,
  },
  DoctorFailed: {
    exit: 4,
    when: 'a `doctor` check failed (docs/git.md §7)',
    message: (d) => `${s(d.failed, 'some')} doctor check(s) failed`,
    hint: () => "apply each failed check's fix",
  },
  InternalError: {
    exit: 10,
    when: 'a bug (docs/output.md §4)',
    message: (d) => `internal error: ${s(d.reason, 'unexpected exception')}`,
    hint: () => 'this is a bug in tugcode; rerun with --verbose and report it',
  },
  DatabaseUnavailable: {
    exit: 10,
    when: 'the PostgreSQL state server cannot be reached or refuses the connection ([state] url)',
    message: (d) =>
      `PostgreSQL at ${pgAddress(s(d.host), s(d.port, '5432'))} (database ${s(d.database, '?')}) is unavailable: ${s(d.reason, 'no connection')}`,
    // The host and port are in the details (never the password: docs/state.md §8), so the command is literal.
    hint: (d) =>
      `check that the server runs and accepts connections (pg_isready -h ${arg(d.host, '<host>')} -p ${arg(d.port, '<port>')}), then the user, password (PGPASSWORD or ~/.pgpass) and sslmode of [state] url or TUGCODE_STATE_URL; unset both to use the embedded .tugtool/state.db`,
  },
  DatabaseError: {
    exit: 10,
    when: 'state.db is corrupt, unreadable or has no `schema_version`; PostgreSQL refused a statement',
    message: (d, store) => `${s(d.db_path, store ?? 'state.db')}: ${s(d.reason, 'database error')}`,
    hint: (d) =>
      d.pg_code !== undefined
        ? 'PostgreSQL refused a statement (its SQLSTATE is in the message): check the server log and the rights of the user on the database, then tugcode doctor'
        : sqlitePermission(s(d.sqlite_code, ''))
          ? `a permissions problem, not a damaged database: keep ${arg(d.db_path, 'state.db')} (it holds the live claims); make it, its -wal and -shm files and its directory writable by this user (ls -l, then chown or chmod u+w), and retry`
          : `move ${arg(d.db_path, 'state.db')} aside, then tugcode state init <plan> and tugcode state reconcile <plan> (see tugcode doctor)`,
  },
  DiskFull: {
    exit: 10,
    when: 'the disk holding state.db or the repository is full (SQLITE_FULL, ENOSPC); the write was rolled back',
    message: (d) =>
      `no space left on the filesystem holding ${s(d.path, 'the repository')}${d.reason ? `: ${s(d.reason)}` : ''}`,
    // `worker_trees`: a run that could not start names where the previous run's worker trees are, which an
    // attempt that filled the disk left there and the run would reset only once started.
    hint: (d) =>
      `free space on the filesystem holding ${arg(d.dir ?? d.path, '.')} (df -h ${arg(d.dir ?? d.path, '.')})` +
      (typeof d.worker_trees === 'string'
        ? `; the previous run's worker trees may hold it (du -sh ${arg(d.worker_trees)}/*)`
        : '') +
      ', then retry',
  },
  GitError: {
    exit: 10,
    when: 'a git command failed unexpectedly',
    message: (d) => {
      const said = s(d.stderr ?? d.reason, '').trim();
      const head = `git ${s((d.args as string[] | undefined)?.join(' '), '')} failed`;
      if (typeof d.hook !== 'string') return `${head}: ${said}`;
      return `${head}: its ${s(d.hook_name, 'git')} hook ${d.hook} exited ${s(d.exit_code)}${said ? `: ${said}` : ' without a word'}`;
    },
    // Two failures git has before it does anything, whatever the command: no git to start, and a
    // configuration it cannot read (from a file, or from variables a shell or a hook set). A hook of the
    // repository's that refused (`hook`, its path) is named with the way past it.
    hint: (d) => {
      if (typeof d.hook === 'string') {
        const again = typeof d.then_run === 'string' ? d.then_run : 'the same tugcode command';
        return `fix what ${arg(d.hook)} reports (git runs it from .git/hooks or core.hooksPath), or set it aside while you do this (chmod -x ${arg(d.hook)}; chmod +x it after), then run ${again} again; nothing was made`;
      }
      const why = s(d.stderr ?? d.reason, '');
      if (/spawn git ENOENT|git is not installed/.test(why)) return 'install git and put it on PATH, then try again';
      if (/bad config|config(uration)? files?|GIT_CONFIG_|command-line config/.test(why))
        return 'fix the git configuration git names (a config file, or the GIT_CONFIG_* variables of this shell: unset them), then try again';
      // The driver's own worktrees (docs/run.md §1): git ran the repository's post-checkout hook, and
      // says nothing of its own when that refuses, so the hook is named as the likely cause.
      const args = (d.args as string[] | undefined) ?? [];
      if (args[0] === 'worktree' && args[1] === 'add' && d.hook !== null)
        return "git worktree add runs the repository's post-checkout hook (.git/hooks/post-checkout, or the one under core.hooksPath): if that printed the message, fix it or set it aside (chmod -x it), then run again";
      return undefined;
    },
  },
  NotWritable: {
    exit: 4,
    when: 'a file or directory tugcode must write (`.tugtool/`, state.db and its -wal/-shm files, the run lock) refuses this user or is on a read-only filesystem',
    message: (d) =>
      `${s(d.path, '.tugtool')} is not writable (${s(d.errno, 'refused')}): ${s(d.reason, 'cannot write')}`,
    // Each cause has its own way out: a mount, an attribute, or the mode and owner.
    hint: (d) => {
      const p = arg(d.path, '.tugtool');
      if (d.errno === 'EROFS')
        return `${p} is on a read-only filesystem: remount it read-write (findmnt -T ${p}), and retry`;
      if (d.errno === 'EPERM')
        return `${p} refuses even its owner: an immutable or append-only attribute (lsattr -d ${p}; chattr -i -a), and retry`;
      return `make ${p} writable by this user (ls -ld, then chmod u+w or chown), and retry`;
    },
  },
  ClaimLostRepeatedly: {
    exit: 4,
    when: '`run`: a worker lost its claim on the same step 5 times in a row (docs/run.md §1.4)',
    message: (d) =>
      `${s(d.worker, 'a worker')} lost its claim on ${s(d.step_anchor)} of ${plan(d)} ${s(d.losses)} times in a row ` +
      `(last refusal: ${s(d.refusal_code)}: ${s(d.refusal)}); the run stopped claiming`,
    // The log names who ended each claim; the reset frees the step once that is dealt with.
    hint: (d) =>
      `tugcode state log ${planArg(d)} --step ${arg(d.step_anchor)}, then tugcode state reset ${planArg(d)} ${arg(d.step_anchor)} --force`,
  },
  OutsideWrite: {
    exit: 4,
    when: "`run`: something outside a worktree changed while its implementer, reviewer or resolver, a checkpoint command, the setup command or the refactors' verification ran — the main checkout, `.tugtool/`, another worktree, a ref, the git directory's hooks, info or config (docs/agents.md §1.6); the attempt failed and nothing was undone",
    message: (d) =>
      outsideWriteText({
        who: `${s(d.by, 'the implementer')} of ${s(d.step_anchor)} (attempt ${s(d.attempt)})`,
        what: 'things outside its worktree',
        shown: s((d.changed as string[] | undefined)?.join(', '), '?'),
        beside: typeof d.beside === 'number' ? d.beside : 0,
        during: typeof d.command === 'string',
      }),
    // The driver cannot tell an agent's write from the user's own edit made meanwhile (docs/agents.md §1.6).
    // A setup that writes git config or hooks on every run (husky's `prepare`) changes nothing the second time.
    hint: (d) =>
      (d.command === 'setup'
        ? 'a setup that sets git config or hooks (husky, pre-commit, git lfs install): run it once in the main ' +
          'checkout, then run again; otherwise '
        : '') +
      "inspect those paths and refs (git status, git reflog, the git directory's hooks and config) and undo what " +
      'should not have changed; if you made those changes yourself during the run, nothing needs undoing (the ' +
      'attempt is redone, unless the git directory changed: then the run claimed no further step): edit in ' +
      'another clone or worktree while a run goes',
  },
  StepCompletedElsewhere: {
    exit: 4,
    when: "`run`: a step was completed behind the driver's back while a worker held it (docs/agents.md §1.7); the work was kept",
    message: (d) =>
      (d.own_worktree
        ? `${s(d.step_anchor)} was completed from its own worktree while attempt ${s(d.attempt)} ran (its implementer ran tugcode commit or state complete itself)`
        : `${s(d.step_anchor)} was completed by someone else while attempt ${s(d.attempt)} ran`) +
      (d.kept_integrated
        ? `; its commit ${s(d.kept_commit)} is on ${s(d.integration_branch)}`
        : d.kept_commit
          ? `; its work is kept as ${s(d.kept_commit)} (${s(d.kept_ref)})`
          : '; its worktree held no work'),
    hint: (d) =>
      d.own_worktree
        ? 'the driver commits, integrates and completes each step; an implementer only edits files (docs/run.md §2): take tugcode commit and state complete out of it' +
          (d.kept_ref && !d.kept_integrated ? `; its work: git show ${arg(d.kept_ref)}` : '')
        : d.kept_ref
          ? `git show ${arg(d.kept_ref)} (cherry-pick it if the completed step lacks it)`
          : 'tugcode state show <plan>',
  },
  NeedsHuman: {
    exit: 4,
    when: '`run` ended with steps a reviewer escalated (`needs_human`), waiting for `tugcode state decide` (docs/run.md §6.3)',
    message: (d) => {
      const steps = (d.steps as { step_anchor?: unknown; reason?: unknown }[] | undefined) ?? [];
      const named = steps.map((x) => `${s(x.step_anchor)} (${s(x.reason, 'escalated')})`).join('; ');
      return `${plan(d)} waits for a human decision on ${steps.length} step(s): ${named}`;
    },
    hint: (d) => {
      const steps = (d.steps as { step_anchor?: unknown }[] | undefined) ?? [];
      const anchors = steps.length ? steps.map((x) => x.step_anchor) : ['<step>'];
      const each = anchors.map(
        (a) => `${decideCommands(d.plan_path, a, d)[0]} (or --revise "<notes>", or --reject "<reason>")`,
      );
      // A step failed at its cap beside them stays failed through the decision: its reset is named too.
      const failed = ((d.failed_steps as { step_anchor?: unknown }[] | undefined) ?? []).map((f) => f.step_anchor);
      const resets = failed.map((a) => resetCommand(d.plan_path, a, d));
      return `${[...each, ...resets].join('; ')}; then ${runAgainAfterFailures(d)}`;
    },
  },
} satisfies Record<string, CatalogueEntry>;

/**
 * The OutsideWrite wording, one for an attempt's reason (src/run/outside-check.ts) and the run's error
 * (docs/agents.md §1.6): an agent is named as the maker of the change (`the implementer changed …`); a
 * command of the step's own (`during`: a checkpoint, the setup, the refactors' verification), whose code
 * an agent may have written, by when the change came (`… changed during the checkpoint …`); beside other
 * runs of this run, by when only, since the check cannot say whose change it saw.
 */
export function outsideWriteText(o: {
  who: string;
  what: string;
  shown: string;
  beside: number;
  during: boolean;
}): string {
  const when = o.during ? `during ${o.who}` : `while ${o.who} ran`;
  if (o.beside > 0)
    return `${o.what} changed ${when}, beside ${o.beside} other agent or command run(s) of this run that may have made them: ${o.shown}`;
  return o.during ? `${o.what} changed ${when}: ${o.shown}` : `${o.who} changed ${o.what}: ${o.shown}`;
}

/**
 * What a human runs for a step that waits for them (docs/run.md §6.3): approve, revise with notes, reject
 * with a reason. The one place these command lines are written (the run's error hint, summary, live view).
 */
export function decideCommands(planPath: unknown, step: unknown, d: Details = {}): [string, string, string] {
  const head = decideHead(planPath, step, d);
  return [`${head} --approve`, `${head} --revise "<notes>"`, `${head} --reject "<reason>"`];
}

/** The three decisions on one line, as `state show` and `state claim` print a step waiting for a human. */
export function decideLine(planPath: unknown, step: unknown): string {
  return `${decideHead(planPath, step, {})} --approve | --revise "<notes>" | --reject "<reason>"`;
}

function decideHead(planPath: unknown, step: unknown, d: Details): string {
  return `${tugcodeIn(d)} state decide ${arg(planPath, '<plan>')} ${step === '<step>' ? step : arg(step)}`;
}

/** The reset that lets a run implement a failed step again (docs/run.md §1.2): the run's hints and summary. */
export function resetCommand(planPath: unknown, step: unknown, d: Details = {}): string {
  return `${tugcodeIn(d)} state reset ${arg(planPath, '<plan>')} ${arg(step)}`;
}

export type ErrorCode = keyof typeof CATALOGUE;

export const ERROR_CODES = Object.keys(CATALOGUE) as ErrorCode[];

export class TugError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: number;
  readonly details: Details;
  readonly hint: string | undefined;
  /** Optional human text for stdout in text mode (e.g. every validator issue); JSON carries it in details. */
  readonly text: string | undefined;

  constructor(
    code: ErrorCode,
    details: Details = {},
    opts: { message?: string; hint?: string; cause?: unknown; text?: string } = {},
  ) {
    const entry: CatalogueEntry = CATALOGUE[code];
    super(opts.message ?? entry.message(details), opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'TugError';
    this.code = code;
    this.exitCode = entry.exit;
    this.details = details;
    this.hint = opts.hint ?? entry.hint?.(details);
    this.text = opts.text;
  }

  toJSON(): { code: string; message: string; details: Details; hint?: string } {
    return { code: this.code, message: this.message, details: this.details, ...(this.hint ? { hint: this.hint } : {}) };
  }
}

export function isTugError(e: unknown): e is TugError {
  return e instanceof TugError;
}

/**
 * The refusals that mean "the claim is lost": the caller no longer owns the step (another worktree took
 * it, the lease lapsed, a newer attempt fenced this one, the step moved on, or it left the plan). Whoever
 * gets one stops working on the step and claims again: the heartbeat, both integrations and the driver.
 */
export const CLAIM_LOST_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'NotOwner',
  'LeaseExpired',
  'AttemptMismatch',
  'InvalidTransition',
  'StepNotFound',
]);

/** Whether `e` is a refusal that means the claim is lost (CLAIM_LOST_CODES). */
export function isClaimLost(e: unknown): e is TugError {
  return e instanceof TugError && CLAIM_LOST_CODES.has(e.code);
}

/**
 * An error raised on a state store other than the embedded state.db: a catalogue message that names
 * "state.db" names `store` instead (PostgreSQL: its schema and server, never a password). The code, exit
 * code, details and hint are unchanged; anything else is returned as it is.
 */
export function inStore(e: unknown, store: string): unknown {
  if (!(e instanceof TugError)) return e;
  const entry: CatalogueEntry = CATALOGUE[e.code];
  if (e.message !== entry.message(e.details)) return e; // a message of its own, not the catalogue's
  const message = entry.message(e.details, store);
  if (message === e.message) return e;
  return new TugError(e.code, e.details, {
    message,
    ...(e.hint !== undefined ? { hint: e.hint } : {}),
    ...(e.text !== undefined ? { text: e.text } : {}),
    ...(e.cause !== undefined ? { cause: e.cause } : {}),
  });
}

/** Shorthand for the most common error. */
export function invalidArgument(reason: string, details: Details = {}): TugError {
  return new TugError('InvalidArgument', { reason, ...details });
}

/** SQLite refused for a permission (a read-only file or filesystem), not for a damaged database: keep it. */
export function sqlitePermission(code: string): boolean {
  return /^SQLITE_(READONLY|PERM)/.test(code);
}

/** What git prints when a write fails for want of space (its own words vary by code path). */
const GIT_NO_SPACE = /No space left on device|Out of diskspace|Disk quota exceeded/i;

/** A GitError whose git said the disk is full → DiskFull (git tells it only in its stderr). */
function gitDiskFull(e: TugError): TugError | null {
  if (e.code !== 'GitError') return null;
  const d = e.details as Details;
  const said = s(d.stderr ?? d.reason, '');
  if (!GIT_NO_SPACE.test(said)) return null;
  const cwd = typeof d.cwd === 'string' ? d.cwd : undefined;
  return new TugError('DiskFull', {
    reason: `git ${s((d.args as string[] | undefined)?.[0], '')} could not write: ${said.trim().split('\n')[0]}`,
    ...(cwd ? { path: cwd, dir: cwd } : {}),
  });
}

/** Any thrown value → TugError; unexpected ones become InternalError (stack only with `verbose`, --verbose). */
export function toTugError(e: unknown, o: { verbose?: boolean } = {}): TugError {
  if (e instanceof TugError) return gitDiskFull(e) ?? e;
  const err = e instanceof Error ? e : new Error(String(e));
  const sqliteCode = (err as { code?: unknown }).code;
  if (typeof sqliteCode === 'string' && sqliteCode.startsWith('SQLITE_BUSY')) {
    return new TugError('Busy', { reason: err.message, sqlite_code: sqliteCode });
  }
  if (sqliteCode === 'ENOSPC') {
    const path = (err as { path?: unknown }).path;
    return new TugError('DiskFull', { reason: err.message, ...(typeof path === 'string' ? { path } : {}) });
  }
  return new TugError('InternalError', {
    reason: err.message,
    ...(o.verbose && err.stack ? { stack: err.stack } : {}),
  });
}
