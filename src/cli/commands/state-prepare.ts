/**
 * The CLI-only parts of some `state` commands: per-item flags from the raw argv, the `--batch` document
 * on stdin, and `state show --watch`.
 */
import { TugError } from '../../contract/errors.js';
import { MAX_INPUT_BYTES } from '../../contract/inputs/limits.js';
import type { CliEnv } from '../define.js';
import { itemFlags } from './state-update-flags.js';

type Raw = Record<string, unknown>;

export async function updateInput(raw: Raw, cli: CliEnv): Promise<Raw> {
  let items = itemFlags(cli.cmd);
  const bulk = ['all_tasks', 'all_tests', 'all_checkpoints', 'all'].some((k) => raw[k] !== undefined);
  const { task: _t, test: _s, checkpoint: _c, ...rest } = raw;
  // `--items <json>`: the --batch document given inline, alongside any per-item flags.
  if (raw.items !== undefined) {
    if (raw.batch) throw new TugError('InvalidArgument', { reason: '--items cannot be combined with --batch' });
    const { parseBatch } = await import('../../state/update-input.js');
    items = [...items, ...parseBatch(String(raw.items), '--items')];
  }
  if (raw.batch) {
    if (items.length > 0 || bulk)
      throw new TugError('InvalidArgument', { reason: '--batch cannot be combined with per-item or --all* flags' });
    const { readStdinBounded } = await import('../read-input.js');
    const { parseBatch } = await import('../../state/update-input.js');
    items = parseBatch(readStdinBounded('--batch', MAX_INPUT_BYTES, cli.stdinIsTTY));
  }
  return { ...rest, items };
}

/** `state import [FILE|-]`: the document from the file, stdin, or `--document` (bounded reads). */
export async function importInput(raw: Raw, cli: CliEnv): Promise<Raw> {
  if (raw.document !== undefined) {
    if (raw.file !== undefined)
      throw new TugError('InvalidArgument', { reason: 'give either a file or --document, not both' });
    return raw;
  }
  const file = typeof raw.file === 'string' ? raw.file : '-';
  const { resolve } = await import('node:path');
  const { readFileBounded } = await import('../read-input.js');
  const { MAX_EXPORT_DOCUMENT } = await import('../../contract/inputs/limits.js');
  const path = file === '-' ? '-' : resolve(cli.ctx.cwd, file);
  const document = readFileBounded('state import', path, MAX_EXPORT_DOCUMENT, cli.stdinIsTTY);
  if (document.trim() === '')
    throw new TugError(
      'InvalidArgument',
      { reason: `${file === '-' ? 'stdin' : file} is empty; nothing was changed` },
      {
        hint: 'tugcode state import <file>, the file tugcode state export <plan> --output <file> wrote (or pipe it in)',
      },
    );
  // `file` says where the document came from (`-`: stdin), so its errors name that, not --document.
  return { ...raw, file, document };
}

export async function showText(data: unknown, cli: CliEnv, maxLines?: number): Promise<string> {
  const { renderShow } = await import('../../state/show-text.js');
  const { deadDriverLines } = await import('./driver-text.js');
  const backend = (data as { backend?: { kind: string; location: string } }).backend;
  const pg = backend?.kind === 'postgres';
  // A plan whose run died: its steps still read as claimed, so say so under them, as status does.
  const dead = deadDriverLines((data as { plans: Parameters<typeof deadDriverLines>[0] }).plans, cli.now());
  const below = [...dead, ...(pg ? [`State: PostgreSQL ${backend.location}`] : [])];
  const fit = maxLines === undefined ? {} : { maxLines: Math.max(1, maxLines - below.length) };
  const text = renderShow(data as never, { now: cli.now(), color: cli.color, ...fit });
  return below.length ? `${text.replace(/\n*$/, '\n')}${below.join('\n')}\n` : text;
}

/** The terminal's height: the TTY's rows, else `$LINES` (a pipe, a test), else unknown. */
function terminalRows(cli: CliEnv): number | undefined {
  const rows = process.stdout.rows || Number(cli.env.LINES);
  return Number.isInteger(rows) && rows > 0 ? rows : undefined;
}

/** `updated 14:03:07` in local time, from the context's clock (TUGCODE_NOW in tests). */
function clockTime(iso: string): string {
  return new Date(iso).toTimeString().slice(0, 8);
}

/** `state show --watch [SECONDS]`: redraw until SIGINT, then exit 130 (docs/output.md §3). */
export async function watchShow(input: unknown, watchOpt: unknown, cli: CliEnv): Promise<number> {
  const watch = watchOpt === true ? 2 : Number(watchOpt);
  if (cli.globals.json)
    throw new TugError('InvalidArgument', {
      reason: '--watch redraws text and cannot be combined with --json',
      argument: '--watch',
    });
  if (!Number.isFinite(watch) || watch <= 0 || watch > 86400)
    throw new TugError('InvalidArgument', {
      reason: `--watch takes a number of seconds, got ${JSON.stringify(watchOpt)}`,
    });
  const { stateShow } = await import('../../ops/state-read.js');
  const { newCall } = await import('../../ops/context.js');
  // One line of header (when it was read), then the progress fitted below it, so a frame never scrolls its
  // top away: with the cursor's line after the frame, that is rows - 2 lines of progress.
  const frame = async () => {
    const data = await stateShow(cli.ctx, input as never, newCall('state show'));
    const rows = terminalRows(cli);
    const header = `updated ${clockTime(cli.now())} · every ${watch}s · Ctrl-C to stop`;
    return `${header}\n${await showText(data, cli, rows === undefined ? undefined : Math.max(1, rows - 2))}`;
  };
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
      process.stdout.write('\u001b[2J\u001b[H' + (await frame()));
      if (stop) break;
      await new Promise<void>((res) => {
        wake = res;
        timer = setTimeout(res, watch * 1000);
      });
    }
  } finally {
    process.removeListener('SIGINT', onSignal);
  }
  return 130;
}
