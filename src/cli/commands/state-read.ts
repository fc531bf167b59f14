/**
 * Bodies of the read-only `tugcode state` commands (02-state.md §4–§5): they open state.db read-only,
 * never create or migrate it, and without a DB report nothing (a plan argument is still resolved).
 */
import { TugError } from '../../contract/errors.js';
import { formatTimestamp, parseInstant } from '../../clock.js';
import type { CliContext } from '../context.js';
import type { CommandResult } from '../action.js';
import { intOpt, useColor, withState } from './state-support.js';

type O = Record<string, unknown>;
const str = (v: unknown): string | undefined => (v === undefined ? undefined : String(v));

export async function show(cli: CliContext, args: string[], opts: O): Promise<CommandResult> {
  const items = str(opts.items) ?? 'active';
  if (items !== 'active' && items !== 'all' && items !== 'none') {
    throw new TugError('InvalidArgument', {
      reason: `--items must be active, all or none, got ${JSON.stringify(items)}`,
      argument: '--items',
    });
  }
  const watch = opts.watch === undefined ? undefined : opts.watch === true ? 2 : Number(opts.watch);
  if (watch !== undefined) {
    if (cli.globals.json)
      throw new TugError('InvalidArgument', {
        reason: '--watch redraws text and cannot be combined with --json',
        argument: '--watch',
      });
    if (!Number.isFinite(watch) || watch <= 0 || watch > 86400)
      throw new TugError('InvalidArgument', {
        reason: `--watch takes a number of seconds, got ${JSON.stringify(opts.watch)}`,
      });
  }
  const { show } = await import('../../state/show.js');
  const { renderShow } = await import('../../state/show-text.js');
  const input = { plan: args[0], items: items as 'active' | 'all' | 'none', step: str(opts.step) };
  const frame = () => withState(cli, 'state show', 'read', (ctx) => show(ctx, input));
  const text = (r: Awaited<ReturnType<typeof frame>>) =>
    renderShow(r, { now: cli.clock.now(), color: useColor(cli.env) });
  if (watch === undefined) {
    const r = await frame();
    return { data: r, text: text(r) };
  }
  return watchLoop(async () => text(await frame()), watch);
}

async function watchLoop(render: () => Promise<string>, seconds: number): Promise<CommandResult> {
  let stop = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const onSignal = () => {
    stop = true;
    if (timer) clearTimeout(timer);
    wake?.();
  };
  process.once('SIGINT', onSignal);
  try {
    while (!stop) {
      process.stdout.write('\u001b[2J\u001b[H' + (await render()));
      if (stop) break;
      await new Promise<void>((res) => {
        wake = res;
        timer = setTimeout(res, seconds * 1000);
      });
    }
  } finally {
    process.removeListener('SIGINT', onSignal);
  }
  // Interrupted by SIGINT (03-contract.md §3): exit 130, nothing more to print.
  return { data: {}, text: '', exitCode: 130 };
}

export async function ready(cli: CliContext, args: string[]): Promise<CommandResult> {
  const { ready } = await import('../../state/ready.js');
  const r = await withState(cli, 'state ready', 'read', (ctx) => ready(ctx, { plan: args[0]! }));
  const line = (name: string, l: string[]) => `${name.padEnd(10)} ${l.length ? l.join(', ') : '-'}`;
  const text = [
    line('ready:', r.ready_steps),
    line('claimed:', r.claimed_steps),
    line('blocked:', r.blocked_steps),
    line('completed:', r.completed_steps),
    line('failed:', r.failed_steps),
    ...(r.expired_claims.length ? [line('expired:', r.expired_claims)] : []),
  ].join('\n');
  return { data: r, text };
}

export async function log(cli: CliContext, args: string[], opts: O): Promise<CommandResult> {
  const limit = intOpt('--limit', opts.limit, 1, 1000);
  const after_id = intOpt('--after-id', opts.afterId, 0, Number.MAX_SAFE_INTEGER);
  let since: string | undefined;
  if (opts.since !== undefined) {
    const ms = parseInstant(String(opts.since));
    if (ms === null)
      throw new TugError('InvalidArgument', {
        reason: `--since must be an ISO 8601 instant, got ${JSON.stringify(opts.since)}`,
        argument: '--since',
      });
    since = formatTimestamp(ms);
  }
  const { log } = await import('../../state/log.js');
  const r = await withState(cli, 'state log', 'read', (ctx) =>
    log(ctx, { plan: args[0], step: str(opts.step), limit, after_id, since }),
  );
  const text = r.events.length
    ? r.events
        .map(
          (e) =>
            `${String(e.id).padStart(5)}  ${e.at}  ${e.command.padEnd(16)} ${e.plan_path ?? '-'} ${e.step_anchor ?? ''}  ${e.actor}`,
        )
        .join('\n')
    : 'No events';
  return { data: r, text };
}

export async function list(cli: CliContext): Promise<CommandResult> {
  const { list } = await import('../../state/list.js');
  const r = await withState(cli, 'state list', 'read', (ctx) => list(ctx));
  const text = r.plans.length
    ? r.plans
        .map(
          (p) =>
            `${p.plan_path} [${p.status}] steps ${p.steps_completed}/${p.steps_total}, items ${p.items_completed}/${p.items_total}${p.claimed_steps.length ? `, claimed: ${p.claimed_steps.join(', ')}` : ''}`,
        )
        .join('\n')
    : 'No plans in state.db';
  return { data: r, text };
}

export async function graph(cli: CliContext, args: string[], opts: O): Promise<CommandResult> {
  const format = str(opts.format) ?? 'mermaid';
  if (format !== 'mermaid' && format !== 'dot')
    throw new TugError('InvalidArgument', {
      reason: `--format must be mermaid or dot, got ${JSON.stringify(format)}`,
      argument: '--format',
    });
  const { graph } = await import('../../state/graph.js');
  const r = await withState(cli, 'state graph', 'read', (ctx) => graph(ctx, { plan: args[0]!, format }));
  return { data: r, text: r.text };
}
