/**
 * `tugcode board` (docs/board.md §1) and the board beside `run --board` / `demo --board`: it serves until
 * SIGINT or SIGTERM. Prints its URL (with --json, one `board` line), warns when it listens beyond this machine.
 */
import type { Command } from 'commander';
import { board as boardTable } from '../../contract/inputs/board.js';
import type { Board } from '../../board/start.js';
import type { CliApp, CliEnv } from '../define.js';
import { warning } from '../../contract/warnings.js';

export function registerBoard(program: Command, app: CliApp): void {
  app.register(program, {
    table: boardTable,
    longLived: true,
    loop: (input, cli) => boardCommand(input as BoardInput, cli),
  });
}

interface BoardInput {
  port?: number;
  host?: string;
  open?: boolean;
  allow_actions?: boolean;
}

/** Starts a board for the repository of `cli` and tells where it is (the `board` line under --json). */
export async function announcedBoard(cli: CliEnv, o: BoardInput, how: { out: (s: string) => void }): Promise<Board> {
  const { startBoard, openInBrowser } = await import('../../board/start.js');
  const board = await startBoard({
    cwd: cli.ctx.cwd,
    env: cli.env,
    host: o.host,
    port: o.port,
    allowActions: o.allow_actions,
  });
  const warnings = [...board.warnings];
  if (o.open) {
    const why = await openInBrowser(board.url, cli.env);
    if (why) warnings.push(warning('BoardNotOpened', why));
  }
  if (cli.globals.json) {
    const line = {
      type: 'board',
      at: cli.now(),
      url: board.url,
      host: board.host,
      port: board.port,
      allow_actions: board.allowActions,
      warnings,
    };
    how.out(JSON.stringify(line) + '\n');
  } else {
    how.out(
      `board: ${board.url}\n  ${board.allowActions ? 'actions allowed (each asks for confirmation)' : 'read-only'} · open it in a browser\n`,
    );
    for (const w of warnings) process.stderr.write(`tugcode: warning: ${w.code}: ${w.message}\n`);
  }
  return board;
}

/**
 * The exit code of the first SIGINT (130) or SIGTERM (143) from now on; `off` stops listening. Listening
 * starts before the board does, so a signal while it starts still stops it cleanly. The listeners stay until
 * `off`, never removing themselves while the signal is delivered: execa's exit handler, which runs after
 * them, re-raises a signal that finds no other listener, and that would kill the process.
 */
export function untilSignal(): { signalled: Promise<number>; off: () => void } {
  let resolve!: (code: number) => void;
  const signalled = new Promise<number>((r) => (resolve = r));
  const onInt = () => resolve(130);
  const onTerm = () => resolve(143);
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return {
    signalled,
    off: () => {
      process.removeListener('SIGINT', onInt);
      process.removeListener('SIGTERM', onTerm);
    },
  };
}

async function boardCommand(input: BoardInput, cli: CliEnv): Promise<number> {
  const signal = untilSignal();
  try {
    const board = await announcedBoard(cli, input, { out: (s) => process.stdout.write(s) });
    if (!cli.globals.json) process.stdout.write('  Ctrl-C stops it\n');
    const code = await signal.signalled;
    await board.stop();
    return code;
  } finally {
    signal.off();
  }
}
