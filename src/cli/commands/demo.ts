/**
 * `tugcode demo [DIR] [--workers N] [--keep]` (docs/run.md §4): a fresh repository with a small TypeScript
 * project and a plan, run with parallel workers and the live view, then the plan's state and the
 * integration branch's log with its trailers. Needs only Node and git.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { integrationBranch } from '../../contract/layout.js';
import { trailersFormat, TUG_TRAILER_KEYS } from '../../git/trailers.js';
import type { CliEnv } from '../define.js';
import type { RunInput } from '../../run/driver.js';
import type { Board } from '../../board/start.js';

type RunCommand = (
  input: RunInput & { no_next?: boolean; again_hint?: string },
  cli: CliEnv,
  beside?: Board,
) => Promise<number>;

/** With --board, each step's implementer waits this long: a run a person can follow on the page. */
const BOARD_PACE_MS = 1500;

const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

/**
 * Removes the demo's temporary repository however the process ends (docs/run.md §4): at the end, on an
 * exit (a second signal during the run, a closed stdout before it, a crash), and on a signal no one else
 * handles (the repository being made, the run starting or ending, the epilogue, a SIGHUP beside the board):
 * then it ends the process as the signal would have. While the run (or the board) listens for the signal
 * too, the signal is theirs: the run stops gracefully first (docs/run.md §1.1) and the exit removes it.
 */
function removedAtExit(dir: string): { remove: () => void; off: () => void } {
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // a child still writing there as the process dies: nothing more can be done
    }
  };
  const handlers = (Object.keys(SIGNAL_EXIT) as (keyof typeof SIGNAL_EXIT)[]).map((sig) => {
    const h = () => {
      if (process.listenerCount(sig) > 1) return;
      remove();
      process.exit(SIGNAL_EXIT[sig]);
    };
    process.on(sig, h);
    return [sig, h] as const;
  });
  process.on('exit', remove);
  return {
    remove,
    off: () => {
      for (const [sig, h] of handlers) process.removeListener(sig, h);
      process.removeListener('exit', remove);
    },
  };
}

export async function runDemo(
  input: { dir?: string; workers?: number; keep?: boolean; board?: boolean },
  cli: CliEnv,
  runCommand: RunCommand,
): Promise<number> {
  const out = (s: string) => {
    if (!cli.globals.json) process.stdout.write(s);
  };
  const temp = input.dir === undefined;
  const dir = temp ? realpathSync(mkdtempSync(join(tmpdir(), 'tugcode-demo-'))) : resolve(cli.ctx.cwd, input.dir!);
  const removal = temp && !input.keep ? removedAtExit(dir) : null;
  const { createDemoRepo } = await import('../../demo/project.js');
  const { OpsContext } = await import('../../ops/context.js');
  const { workersText } = await import('../../run/render-text.js');
  let code = 10;
  let created = false;
  try {
    const demo = await createDemoRepo(dir, { env: cli.env });
    created = true;
    out(
      `demo repository: ${demo.root}\nplan: ${demo.plan_path} — running it with up to ${workersText(input.workers ?? 3)}\n\n`,
    );
    if (cli.globals.json) {
      const line = {
        type: 'demo',
        at: cli.now(),
        repo_root: demo.root,
        plan_path: demo.plan_path,
        kept: !temp || Boolean(input.keep),
      };
      process.stdout.write(JSON.stringify(line) + '\n');
    }
    // `dir`: the hints of a stopped or failed run name the repository (`tugcode -C <dir> run …`), which the
    // user's shell is not in (docs/run.md §1.2).
    const ctx = new OpsContext({ cwd: demo.root, dir: demo.root, env: cli.env });
    const here: CliEnv = { ...cli, ctx };
    try {
      // No `next: tugcode merge` line: the demo's repository is a throwaway, and its epilogue follows. A
      // repository removed at the end cannot be resumed: the hint says to run the demo again instead.
      const run = {
        plan: demo.slug,
        workers: input.workers ?? 3,
        implementer: demo.implementer,
        no_next: true,
        again_hint: removal
          ? 'the temporary repository is removed: run `tugcode demo` again (--keep keeps it)'
          : undefined,
      };
      const after = async () => {
        if (!cli.globals.json) out(await epilogue(here, demo.slug).catch(() => ''));
      };
      if (input.board) code = await withBoard(here, run, runCommand, { out, after });
      else {
        code = await runCommand(run, here);
        await after();
      }
    } finally {
      await ctx.close();
    }
  } finally {
    if (removal) {
      removal.remove();
      removal.off();
      out(`\n(removed ${dir}; pass --keep to look around)\n`);
    } else if (created) out(`\nthe demo repository is at ${dir}\n`);
  }
  return code;
}

/**
 * `demo --board` (docs/board.md §1): the board first; the run once a page is open (or after 60 s), its
 * implementer paced so the cards can be followed; then the board stays up until SIGINT or SIGTERM. A signal
 * before or during the run ends both. The exit code is the run's.
 */
async function withBoard(
  cli: CliEnv,
  run: RunInput & { implementer: string },
  runCommand: RunCommand,
  how: { out: (s: string) => void; after: () => Promise<void> },
): Promise<number> {
  const { out } = how;
  const { announcedBoard, untilSignal } = await import('./board.js');
  const listening = untilSignal();
  let signalled: number | null = null;
  const signal = listening.signalled.then((c) => (signalled = c));
  let board: Board | undefined;
  try {
    board = await announcedBoard(cli, {}, { out: (s) => process.stdout.write(s) });
    out('  the run starts when the page is open (or in 60 s)\n\n');
    await Promise.race([board.waitForPage(60_000), signal]);
    if (signalled !== null) return signalled;
    const code = await runCommand(
      { ...run, implementer: `${run.implementer} --delay-ms ${BOARD_PACE_MS}` },
      cli,
      board,
    );
    if (signalled !== null) return code;
    await how.after();
    out(`\nthe board stays up: ${board.url}\nCtrl-C stops it\n`);
    await signal;
    return code;
  } finally {
    listening.off();
    await board?.stop();
  }
}

/** `state show` of the plan and the integration branch's log with its trailers. */
async function epilogue(cli: CliEnv, slug: string): Promise<string> {
  const { newCall } = await import('../../ops/context.js');
  const { stateShow } = await import('../../ops/state-read.js');
  const { renderShow } = await import('../../state/show-text.js');
  const { gitRunner } = await import('../../git/exec.js');
  const show = await stateShow(cli.ctx, { plan: slug, items: 'none' }, newCall('state show'));
  const log = await gitRunner(cli.env).run(
    ['log', `--format=%h %s%n${trailersFormat(TUG_TRAILER_KEYS, { separator: '%x0a' })}`, integrationBranch(slug)],
    cli.ctx.cwd,
  );
  const indented = log
    .split('\n')
    .map((l) => (/^[0-9a-f]{7,} /.test(l) ? l : l ? `    ${l}` : l))
    .join('\n');
  return `\n$ tugcode state show ${slug}\n${renderShow(show, { now: cli.now(), color: cli.color })}\n\n$ git log --oneline ${integrationBranch(slug)} (with trailers)\n${indented}\n`;
}
