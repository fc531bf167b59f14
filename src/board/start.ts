/**
 * Starting and stopping a board (docs/board.md §1–§2): its own long-lived operations context, the source
 * that reads the state, the server on 127.0.0.1 (another interface only when asked, with a warning), and
 * the URL with its token. The token and the port are kept in `.tugtool/logs/board.json` (mode 0600, a
 * runtime file git ignores), so a board started again — a new `tugcode board` after `run --board` ended, a
 * restart — answers the page that is still open, which reconnects by itself.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TugError } from '../contract/errors.js';
import { BOARD_FILE, TUGTOOL_DIR } from '../contract/layout.js';
import { warning } from '../contract/warnings.js';
import { newCall, OpsContext } from '../ops/context.js';
import { hostPort, isLoopback } from './guard.js';
import { startServer, type BoardServer } from './server.js';
import { BoardSource, type RunEventLike } from './source.js';

export interface BoardOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The interface to listen on (default 127.0.0.1). */
  host?: string | undefined;
  /** The port (default: the one kept from the last board of this repository, else any free one). */
  port?: number | undefined;
  allowActions?: boolean | undefined;
}

export interface Board {
  url: string;
  host: string;
  port: number;
  allowActions: boolean;
  /** What the caller should tell the user (another interface than loopback). */
  warnings: { code: string; message: string }[];
  /** An event of the run beside the board (`run --board`). */
  runEvent(e: RunEventLike): void;
  /** The run's watchdog's last activity of a worker's implementer, in epoch ms (read, never called back). */
  runActivity(fn: (worker: string) => number | undefined): void;
  /** Resolves true when a page connects, false after `ms`. */
  waitForPage(ms: number): Promise<boolean>;
  /** Stops serving; `flush`: first one last read for the pages still open (the run beside it ended). */
  stop(o?: { flush?: boolean }): Promise<void>;
}

const TOKEN_RE = /^[A-Za-z0-9_-]{32,128}$/;
const HOST_RE = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[?[0-9A-Fa-f:.]+\]?)$/;

function kept(file: string): { token?: string; port?: number } {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as { token?: unknown; port?: unknown };
    return {
      ...(typeof v.token === 'string' && TOKEN_RE.test(v.token) ? { token: v.token } : {}),
      ...(typeof v.port === 'number' && Number.isInteger(v.port) && v.port > 0 && v.port < 65536
        ? { port: v.port }
        : {}),
    };
  } catch {
    return {};
  }
}

function keep(file: string, v: { token: string; port: number }): void {
  mkdirSync(join(file, '..'), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(v) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
}

export async function startBoard(o: BoardOptions): Promise<Board> {
  const host = o.host ?? '127.0.0.1';
  if (host.length > 253 || !HOST_RE.test(host))
    throw new TugError('InvalidArgument', {
      reason: `--host must be an address or a host name, got ${JSON.stringify(host)}`,
      argument: '--host',
    });
  const ctx = new OpsContext({ cwd: o.cwd, env: o.env, longLived: true });
  // Stopping ends a PostgreSQL read that is retrying a lost connection at once (docs/state.md §8).
  const stopping = new AbortController();
  let server: BoardServer | undefined;
  let source: BoardSource | undefined;
  try {
    const { repo } = await ctx.load(newCall('board'));
    if (!existsSync(join(repo.mainRoot, TUGTOOL_DIR)))
      throw new TugError('NotInitialized', { repo_root: repo.mainRoot });
    const file = join(repo.mainRoot, BOARD_FILE);
    const saved = kept(file);
    const token = saved.token ?? randomBytes(24).toString('base64url');
    const allowActions = Boolean(o.allowActions);
    source = new BoardSource({ ctx, allowActions });
    const listen = (port: number) =>
      startServer({ source: source!, ctx, host, port, token, allowActions, mainRoot: repo.mainRoot });
    try {
      server = await listen(o.port ?? saved.port ?? 0);
    } catch (e) {
      const code = (e as { code?: string }).code;
      // The port kept from last time is taken (another board): any free one.
      if (code === 'EADDRINUSE' && o.port === undefined) server = await listen(0);
      else if (code === 'EADDRINUSE')
        throw new TugError('InvalidArgument', { reason: `port ${o.port} on ${host} is in use`, argument: '--port' });
      else if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
        throw new TugError('InvalidArgument', {
          reason: `cannot listen on ${host}: no such local address (${code})`,
          argument: '--host',
        });
      else if (code === 'EACCES')
        throw new TugError('InvalidArgument', {
          reason: `port ${o.port} on ${host} needs privileges`,
          argument: '--port',
        });
      else throw e;
    }
    keep(file, { token, port: server.port });
    ctx.store(newCall('board')).then(
      (store) => store.stopOn?.(stopping.signal),
      () => {}, // unreadable now: the board reports it on the page and reads again
    );
    const wildcard = host === '0.0.0.0' || host === '::' || host === '[::]';
    const shown = wildcard ? '127.0.0.1' : host;
    const url = `http://${hostPort(shown, server.port)}/?token=${token}`;
    const warnings = isLoopback(host)
      ? []
      : [
          warning(
            'BoardNotLoopback',
            `the board listens on ${host}, not only on this machine: anyone who can reach ${wildcard ? 'it' : host} and has the URL can read the state${allowActions ? ' and act on it' : ''}`,
          ),
        ];
    const srv = server;
    const src = source;
    return {
      url,
      host,
      port: srv.port,
      allowActions,
      warnings,
      runEvent: (e) => src.runEvent(e),
      runActivity: (fn) => src.runActivity(fn),
      waitForPage: (ms) => srv.waitForPage(ms),
      stop: async (how = {}) => {
        // At most a few seconds: a store that does not answer (PostgreSQL down) must not hold the exit.
        if (how.flush) await Promise.race([src.flush(), new Promise((r) => setTimeout(r, 3000).unref())]);
        stopping.abort();
        await srv.close();
        await src.close();
        await ctx.close();
      },
    };
  } catch (e) {
    await server?.close();
    await source?.close();
    await ctx.close();
    throw e;
  }
}

/** Opens `url` in the desktop's browser; the reason when that cannot be done (no desktop), else null. */
export function openInBrowser(url: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const [cmd, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  return new Promise((resolve) => {
    try {
      const child = spawn(cmd, args as string[], { env, stdio: 'ignore', detached: true });
      child.once('error', (e) => resolve(`cannot open a browser (${cmd}: ${e.message}); open the URL yourself`));
      child.once('spawn', () => {
        child.unref();
        resolve(null);
      });
    } catch (e) {
      resolve(`cannot open a browser (${(e as Error).message}); open the URL yourself`);
    }
  });
}
