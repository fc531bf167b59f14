/**
 * The streaming part of `tugcode run` / `demo`: signals (the first SIGINT/SIGTERM/SIGHUP stops the run and
 * releases held claims, a second exits at once; SIGHUP is a closed terminal or ssh session; a closed stdout
 * stops it as a signal does), the renderer, the final summary, and the exit code.
 */
import { fstatSync } from 'node:fs';
import { CATALOGUE, TugError, toTugError } from '../../contract/errors.js';
import { budgetReachedBy, runBudgets } from '../../contract/usage.js';
import { warningLines } from '../../contract/envelope.js';
import { emptySummary, renderError, renderOk } from '../output.js';
import { onStdoutClosed } from '../stdout-closed.js';
import { shellArg } from '../../util/shell-arg.js';
import type { CliEnv } from '../define.js';
import type { RunInput } from '../../run/driver.js';
import type { Call } from '../../ops/context.js';
import type { FileId } from '../../run/context.js';
import type { RunEvent, RunSummary } from '../../run/types.js';
import type { Board } from '../../board/start.js';

// SIGPIPE: stdout's reader went away (EPIPE; Node ignores the signal itself), 128+13 as a shell reports it.
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129, SIGPIPE: 141 } as const;
type StopSignal = keyof typeof SIGNAL_EXIT;
const LISTENED: StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function onSignals(
  stop: AbortController,
  words: { first: (sig: StopSignal) => void; last: (sig: StopSignal) => void },
): { which: () => StopSignal | null; off: () => void; raise: (sig: StopSignal) => void } {
  let got: StopSignal | null = null;
  let on = true;
  const handler = (sig: StopSignal) => () => {
    if (!on) return;
    if (got) {
      // A second signal: out at once (held leases then expire normally), the summary still the last line.
      words.last(sig);
      process.exit(SIGNAL_EXIT[sig]);
    }
    got = sig;
    words.first(sig);
    stop.abort();
  };
  const handlers = LISTENED.map((sig) => [sig, handler(sig)] as const);
  for (const [sig, h] of handlers) process.on(sig, h);
  return {
    which: () => got,
    off: () => {
      on = false;
      for (const [sig, h] of handlers) process.removeListener(sig, h);
    },
    // A closed stdout is never the second signal: a Ctrl-C in `tugcode run … | head` ends head as well, and
    // the run's next line then meets the closed pipe while the first stop is still under way.
    raise: (sig) => {
      if (!got) handler(sig)();
    },
  };
}

/**
 * The line a first stop prints (text mode): what the run does now, and what a second signal does instead
 * (docs/run.md §1.1 item 5).
 */
function stoppingLine(sig: StopSignal, running: number): string {
  const what =
    running > 0
      ? `ending ${running} running command${running === 1 ? '' : 's'} and releasing the claims held`
      : 'releasing the claims held';
  const why = sig === 'SIGPIPE' ? ' (stdout was closed)' : '';
  const again = sig === 'SIGTERM' ? 'SIGTERM again' : sig === 'SIGPIPE' ? 'Ctrl-C' : 'Ctrl-C again';
  return `stopping${why}: ${what} (${again} to exit at once: running commands killed, held claims kept until their leases expire)`;
}

/**
 * The files stdout and stderr are redirected to (`tugcode run --json > out.jsonl`, maybe inside the
 * repository): the run's own output, which grows while agents run, never their outside write (docs/agents.md §1.6).
 */
function ownOutputFiles(): FileId[] {
  const files: FileId[] = [];
  for (const fd of [1, 2]) {
    try {
      const s = fstatSync(fd);
      if (s.isFile()) files.push({ dev: s.dev, ino: s.ino });
    } catch {
      // a closed descriptor: nothing of the run's written there
    }
  }
  return files;
}

/** Whether stdout's reader went away: nothing more is written there (docs/run.md §1.1 item 5). */
let stdoutGone = false;

function write(s: string): void {
  if (!stdoutGone) process.stdout.write(s);
}

/** Exit code of a finished run (docs/run.md §1 "Exit codes"). */
function exitOf(summary: RunSummary, signal: StopSignal | null): number {
  if (signal) return SIGNAL_EXIT[signal];
  if (summary.status === 'ok') return 0;
  const code = summary.error?.code as keyof typeof CATALOGUE | undefined;
  return (code && CATALOGUE[code]?.exit) || 10;
}

/**
 * Flags refused before anything runs: an --implementer or --resolver whose quotes do not balance, and `--lease-duration`
 * with `--heartbeat` (each or the config's value) when the lease would lapse before its first heartbeat
 * (the config alone is checked when it loads).
 */
async function checkRunFlags(input: RunInput, cli: CliEnv, call: Call): Promise<void> {
  // An --implementer (or --reviewer, --resolver) that cannot be split would fail every step it is given (and fail them at
  // their cap).
  for (const [flag, text] of [
    ['--implementer', input.implementer],
    ['--reviewer', input.reviewer],
    ['--resolver', input.resolver],
  ] as const) {
    if (text === undefined) continue;
    const { tokenizeShell } = await import('../../kernel/light.js');
    const tok = tokenizeShell(text);
    if (!tok.ok)
      throw new TugError(
        'InvalidArgument',
        { reason: `${flag} cannot be split shell-style: ${tok.reason} in ${JSON.stringify(text)}`, argument: flag },
        {
          hint: `${flag} takes one command line, split as sh splits it: close each quote, e.g. ${flag} './agent.sh --model "big one"'`,
        },
      );
  }
  if (input.lease_seconds === undefined && input.heartbeat_seconds === undefined) return;
  const { config } = await cli.ctx.load(call);
  const { leaseLapsesFirst } = await import('../../config/config.js');
  const reason = leaseLapsesFirst(
    input.lease_seconds !== undefined
      ? { seconds: input.lease_seconds, name: '--lease-duration' }
      : { seconds: config.state.lease_seconds, name: 'state.lease_seconds in config' },
    input.heartbeat_seconds !== undefined
      ? { seconds: input.heartbeat_seconds, name: '--heartbeat' }
      : { seconds: config.run.heartbeat_seconds, name: 'run.heartbeat_seconds in config' },
  );
  if (reason)
    throw new TugError(
      'InvalidArgument',
      { reason, argument: input.heartbeat_seconds !== undefined ? '--heartbeat' : '--lease-duration' },
      {
        hint: 'lower --heartbeat or raise --lease-duration (the defaults, run.heartbeat_seconds and state.lease_seconds, are 60 and 7200)',
      },
    );
}

/**
 * `beside`: a board the caller started (`demo --board`), told every event; without it `--board` starts one
 * for the run's length (docs/board.md §1).
 */
export async function runCommand(
  options: RunInput & { dry_run?: boolean; board?: boolean; no_next?: boolean; again_hint?: string },
  cli: CliEnv,
  beside?: Board,
): Promise<number> {
  const { board: wantBoard, no_next: noNext, again_hint: againHint, ...input } = options;
  const { newCall } = await import('../../ops/context.js');
  const call = newCall('run');
  const json = cli.globals.json;
  const t0 = Date.now();
  if (input.dry_run) return dryRun(input, cli);
  // The run's git thread (git-thread.ts) starts now, while the run's modules load: it takes ~35 ms to be up.
  const endGitThread = (await import('../../git/git-thread.js')).useGitThread(cli.ctx.env);
  let board: Board | null = beside ?? null;
  const stop = new AbortController();
  // The hints of a stopped run repeat these (docs/run.md §1.2); loaded before a second signal may need them.
  const { runFlags, hintRunsAgain } = await import('../../run/run-flags.js');
  const flags = runFlags(input, cli.ctx.cwd, cli.ctx.dir);
  const { killRunningGroups, runningGroupCount } = await import('../../run/child.js');
  // What the events said so far: the summary of a run cut short by a second signal.
  const done = { steps: [] as string[], commits: [] as string[] };
  const { createRenderer, summaryText } = await import('../../run/render.js');
  let renderer: ReturnType<typeof createRenderer> | null = null;
  const sig = onSignals(stop, {
    first: (which) => {
      // Ending the implementers can take the kill grace: say what is going on, and what a second signal does.
      if (json || which === 'SIGHUP') return; // SIGHUP: the terminal is gone, no one reads stderr
      const line = `tugcode: ${stoppingLine(which, runningGroupCount())}\n`;
      const print = () => process.stderr.write(line);
      if (renderer) renderer.aside(print);
      else print();
    },
    last: (which) => {
      // The implementers, checkpoints and reviewers it runs lead their own process groups: end them too, or
      // they would go on writing into worktrees whose claims nobody renews.
      killRunningGroups();
      const err = new TugError(
        'Interrupted',
        { plan_path: input.plan, signal: which, forced: true, run_flags: flags },
        { hint: againHint },
      );
      const summary = { ...emptySummary(err, Date.now() - t0), steps_completed: done.steps, commits: done.commits };
      if (json) write(JSON.stringify({ type: 'summary', at: cli.now(), ...summary }) + '\n');
      process.stderr.write(renderError('run', err, [], { json: false }).stderr);
    },
  });
  // A reader gone from stdout (`tugcode run … | head`) stops the run as a signal does: exiting at once
  // would leave the implementers running and their claims held for the whole lease. The handler stays after
  // the run, so an EPIPE of its last line does not turn its exit code into 0.
  onStdoutClosed(() => {
    stdoutGone = true;
    sig.raise('SIGPIPE');
  });
  let started = false as boolean; // set by onStart (a closure, which narrowing does not see)
  let planPath = '' as string; // the plan as the run resolved it, for the summary's `next:` line
  const pending: RunEvent[] = [];
  const emit = (e: RunEvent) => {
    if (e.type === 'step_completed') {
      done.steps.push(e.step_anchor);
      if (e.commit_hash) done.commits.push(e.commit_hash);
    }
    if (renderer) renderer.event(e);
    else pending.push(e);
    board?.runEvent(e);
  };
  let summary: RunSummary;
  // TUGCODE_RUN_TRACE=<file>: the workers' timed spans, one JSON line each, written when the run ends.
  const traceFile = cli.env.TUGCODE_RUN_TRACE || undefined;
  const spans: string[] = [];
  try {
    await checkRunFlags(input, cli, call);
    if (wantBoard && !board) {
      const { announcedBoard } = await import('./board.js');
      board = await announcedBoard(cli, {}, { out: write });
    }
    const { runPlan } = await import('../../run/driver.js');
    summary = await runPlan(cli.ctx, input, call, {
      signal: stop.signal,
      onEvent: emit,
      trace: traceFile ? (span) => spans.push(JSON.stringify(span)) : undefined,
      ownOutput: ownOutputFiles(),
      onStart: (info) => {
        started = true;
        planPath = info.plan_path;
        // The watchdog's last activity of each worker's implementer, for the running cards (docs/board.md §3).
        board?.runActivity(info.last_activity);
        // -q: no progress; the summary only of a failure (the event stream of --json is its protocol).
        const mode = json ? 'json' : cli.globals.quiet ? 'quiet' : cli.stdoutIsTTY ? 'live' : 'lines';
        renderer = createRenderer(mode, { write, color: cli.color, now: () => Date.now(), ...info });
        for (const e of pending.splice(0)) renderer.event(e);
      },
    });
  } catch (e) {
    summary = emptySummary(toTugError(e, { verbose: cli.globals.verbose }), Date.now() - t0);
  } finally {
    sig.off();
    await endGitThread();
    if (board && !beside) await (board as Board).stop({ flush: true });
    (renderer as ReturnType<typeof createRenderer> | null)?.close();
    if (traceFile) (await import('node:fs')).writeFileSync(traceFile, spans.map((l) => l + '\n').join(''));
  }
  // The driver does not know why it was stopped: a closed stdout is named, as nothing else would say it.
  if (sig.which() === 'SIGPIPE' && summary.error?.code === 'Interrupted')
    summary = {
      ...summary,
      error: new TugError('Interrupted', { ...summary.error.details, signal: 'SIGPIPE', stdout_closed: true }).toJSON(),
    };
  // A repository removed once the run returns (the demo's temporary one): a hint to run the plan again there
  // cannot work, so the caller's hint replaces it (docs/run.md §4).
  if (againHint !== undefined && summary.error && hintRunsAgain(summary.error))
    summary = { ...summary, error: { ...summary.error, hint: againHint } };
  const code = exitOf(summary, sig.which());
  const at = cli.now();
  if (json) write(JSON.stringify({ type: 'summary', at, ...summary }) + '\n');
  // A run that failed before its workers started did nothing to sum up: text mode prints only the error.
  // -q drops the text of a success (docs/output.md §1); a failed run still sums up what failed.
  else if ((started || !summary.error) && !(cli.globals.quiet && !summary.error)) {
    // A plan done and not merged yet: what brings it back (docs/git.md §5). Not after --merge, nor in the
    // demo, whose epilogue says what to look at.
    const merge =
      summary.status === 'ok' && summary.plan_done && !summary.nothing_to_merge && !input.merge && !noNext && planPath;
    const next = merge ? `tugcode merge ${shellArg(planPath)}` : undefined;
    write((await summaryText(summary, { color: cli.color, next })) + '\n');
  }
  // What the run noticed and handled (a stale index.lock removed, a lock release that failed, …): the
  // stream's summary has no place for it, so text mode says it on stderr, before the one error line.
  if (!json) for (const l of warningLines(call.warnings.items)) process.stderr.write(l + '\n');
  // The one diagnostic line on stderr, in both modes (docs/output.md §1).
  if (summary.error) {
    const err = new TugError(summary.error.code as never, summary.error.details, {
      message: summary.error.message,
      hint: summary.error.hint,
    });
    process.stderr.write(renderError('run', err, [], { json: false }).stderr);
  }
  return code;
}

async function dryRun(input: RunInput, cli: CliEnv): Promise<number> {
  const { newCall } = await import('../../ops/context.js');
  const call = newCall('run');
  try {
    await checkRunFlags(input, cli, call);
    const { prepareRun, planProgress, checkRunTarget } = await import('../../run/driver.js');
    const prepared = await prepareRun(cli.ctx, input, call, undefined, { preview: true });
    const { flow, prep } = prepared;
    input = prepared.input;
    // Refused as the run would be: a state.db written by a newer tugcode is SchemaTooNew at its first write.
    const { stateRefuseNewerSchema } = await import('../../ops/state-read.js');
    await stateRefuseNewerSchema(cli.ctx, call);
    // Refused as the run would be (docs/run.md §1.11): the plan integrates elsewhere.
    await checkRunTarget(cli.ctx, flow, prep, input, call);
    // A preview of the plan as the main checkout has it; the real run refuses it until it is committed
    // (docs/run.md §1.10).
    const notCommitted = prep.uncommitted;
    if (notCommitted)
      call.warnings.add(
        notCommitted.code,
        `${notCommitted.message}: this schedule is the main checkout's copy; the real run needs the plan ` +
          `committed first (${notCommitted.hint ?? 'commit it'})`,
        notCommitted.details,
      );
    const { schedule, scheduleText } = await import('../../run/schedule.js');
    const { agentCommandLine, resolveImplementer, resolveReviewer } = await import('../../run/agents.js');
    const which = resolveImplementer(input, flow.config.run);
    // Refused here as in a real run (both flags, an unknown agent); shown, so a user sees the gate is on.
    const rev = resolveReviewer(input, flow.config.run);
    const reviewer = rev.reviewAgent ? agentCommandLine(rev.reviewAgent, 'reviewer') : rev.reviewer;
    const review = reviewer
      ? {
          reviewer,
          review_agent: rev.reviewAgent,
          rounds: input.review_rounds ?? flow.config.run.review_rounds,
        }
      : null;
    const implementer = which.agent ? agentCommandLine(which.agent) : which.implementer;
    const progress = await planProgress(cli.ctx, prep, call);
    const { failed_steps, blocked_steps, blocked_reasons, needs_human, waiting_steps, waiting_reasons } = progress;
    // An edited structure: the real run re-initialises the state from it before any claim (docs/run.md §1.10).
    if (progress.structure_changed)
      call.warnings.add(
        'PlanReinitialized',
        `${prep.planPath}: the plan's structure changed since state init; the real run re-initialises the ` +
          `state from the edited plan as state init --force would (completed steps kept, and the decisions of ` +
          `people on steps whose work is unchanged; the others pending again), and this schedule is of that`,
        { plan_path: prep.planPath },
      );
    const scheduled = (waiting: string[]) =>
      schedule(prep.plan, {
        implementer,
        checkpoints: !input.no_checkpoints && flow.config.run.run_checkpoints,
        done: progress.completed,
        failed: new Set(failed_steps.map((f) => f.step_anchor)),
        waiting: new Set([...needs_human.map((n) => n.step_anchor), ...waiting]),
        approved: progress.approved,
      });
    let s = scheduled([]);
    const { runFlags } = await import('../../run/run-flags.js');
    // A budget the plan's usage already reached: the real run claims nothing and ends BudgetExhausted
    // (docs/run.md §7.2); the dry run says so, with its hint, and schedules nothing.
    const spent = await spentBudget(cli, input, flow.config.run, prep.planPath, call);
    if (spent && s.steps.length > 0) {
      const err = new TugError('BudgetExhausted', {
        plan_path: prep.planPath,
        ...spent,
        ...(needs_human.length ? { needs_human_steps: needs_human.map((n) => n.step_anchor) } : {}),
        run_flags: runFlags(input, cli.ctx.cwd, cli.ctx.dir),
      });
      // The steps a human approved still integrate, which costs nothing (docs/run.md §7.2): the schedule keeps
      // them (and nothing behind another step), as the real run claims them alone.
      const unapproved = s.steps.filter((st) => st.approved_commit === undefined).map((st) => st.step_anchor);
      s =
        unapproved.length === s.steps.length
          ? { ...s, waves: [], critical_path: [], steps: [], apart: [] }
          : scheduled(unapproved);
      const n = s.steps.length;
      const does =
        n === 0
          ? 'the real run claims no step'
          : `the real run integrates only the step${n === 1 ? '' : 's'} a human approved ` +
            `(${s.steps.map((st) => st.step_anchor).join(', ')}), which runs no agent, and claims no other step`;
      call.warnings.add(err.code, `${err.message}: ${does} (${err.hint})`, { plan_path: prep.planPath, ...spent });
    }
    const does = s.steps.length > 0 ? 'runs the other steps and ends' : 'does nothing and ends';
    // A step waiting for a human stays so until `state decide`: the real run claims none of it (nor of what
    // waits on it) and ends NeedsHuman, as it would with failed steps too (docs/run.md §6.3); the dry run
    // says so, with the real run's hint.
    if (needs_human.length > 0) {
      const err = new TugError('NeedsHuman', {
        plan_path: prep.planPath,
        steps: needs_human,
        failed_steps,
        blocked_steps,
        run_flags: runFlags(input, cli.ctx.cwd, cli.ctx.dir),
      });
      const n = needs_human.length;
      call.warnings.add(
        err.code,
        `${err.message}: the real run ${does} NeedsHuman until a human decides ${n === 1 ? 'it' : 'them'} (${err.hint})`,
        { plan_path: prep.planPath, steps: needs_human, waiting_steps },
      );
    }
    // A step failed at its cap stays failed: the real run claims none of it (nor of what waits on it) and
    // ends PlanIncomplete; the dry run says so, with the real run's hint (docs/run.md §1.10).
    else if (failed_steps.length > 0) {
      const details = {
        plan_path: prep.planPath,
        failed_steps,
        blocked_steps,
        run_flags: runFlags(input, cli.ctx.cwd, cli.ctx.dir),
      };
      const err = new TugError('PlanIncomplete', {
        ...details,
        reason: `${failed_steps.length} failed, ${blocked_steps.length} blocked`,
      });
      call.warnings.add(
        err.code,
        `${err.message}: the real run ${does} PlanIncomplete until the failed ` +
          `step${failed_steps.length === 1 ? ' is' : 's are'} reset (${err.hint})`,
        { plan_path: prep.planPath, failed_steps, blocked_steps },
      );
    }
    // As the run warns (docs/run.md §2): only when some step is left to run.
    if (!which.implementer && !which.agent && s.steps.length > 0) {
      const { NO_IMPLEMENTER } = await import('../../run/implementer.js');
      call.warnings.add(NO_IMPLEMENTER.code, NO_IMPLEMENTER.message);
    }
    // The workers the real run starts (docs/run.md §1 item 3): no more than the plan can keep busy at once.
    const { workersToStart } = await import('../../run/schedule.js');
    const requested = input.workers ?? flow.config.run.workers;
    const workers = workersToStart(prep.plan, requested, progress.completed);
    const data = {
      dry_run: true,
      plan_path: prep.planPath,
      plan_committed: !notCommitted,
      ...s,
      workers,
      ...(workers < requested ? { workers_requested: requested } : {}),
      failed_steps,
      blocked_steps,
      blocked_reasons,
      needs_human,
      waiting_steps,
      waiting_reasons,
      review,
    };
    const g = cli.globals;
    const text = g.json
      ? undefined
      : scheduleText(s, {
          failed_steps,
          blocked_reasons,
          needs_human,
          waiting_reasons,
          review,
          budget_spent: Boolean(spent),
          workers: { workers, requested },
        });
    const r = renderOk('run', data, call.warnings.items, { json: g.json, quiet: g.quiet, text });
    write(r.stdout);
    process.stderr.write(r.stderr);
    return 0;
  } catch (e) {
    const { json, verbose } = cli.globals;
    const r = renderError('run', toTugError(e, { verbose }), call.warnings.items, { json });
    write(r.stdout);
    process.stderr.write(r.stderr);
    return r.exitCode;
  }
}

/** The budget the plan's usage reached, with its totals, as the run judges it at its start; null if none. */
async function spentBudget(
  cli: CliEnv,
  input: RunInput,
  config: { budget_usd: number; budget_tokens: number },
  plan: string,
  call: import('../../ops/context.js').Call,
) {
  const budgets = runBudgets(input, config);
  if (budgets.budgetUsd === null && budgets.budgetTokens === null) return null;
  const { stateUsageTotals } = await import('../../ops/state-read.js');
  // No state yet: nothing spent.
  const usage = await stateUsageTotals(cli.ctx, { plan }, call).catch((e) => {
    if (e instanceof TugError) return null;
    throw e;
  });
  if (!usage) return null;
  return budgetReachedBy(usage, budgets)
    ? { budget_usd: budgets.budgetUsd, budget_tokens: budgets.budgetTokens, usage }
    : null;
}

export async function demoCommand(
  input: { dir?: string; workers?: number; keep?: boolean; board?: boolean },
  cli: CliEnv,
): Promise<number> {
  const { runDemo } = await import('./demo.js');
  return runDemo(input, cli, runCommand);
}
