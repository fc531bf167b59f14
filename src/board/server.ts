/**
 * The board's HTTP server (docs/board.md §2, §5, §6): the page, one server-sent-event stream per page, the
 * step detail, the graph and, with `--allow-actions`, the actions. Every request is checked by guard.ts
 * first; every input is bounded (URL, headers, body, connections, streams); nothing here blocks: reads go
 * through the operations layer (src/ops/board.ts), files through fs/promises.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fail } from '../contract/envelope.js';
import { CATALOGUE, TugError, type ErrorCode } from '../contract/errors.js';
import { runLogDir } from '../contract/layout.js';
import { MAX_ANCHOR, MAX_PLAN, MAX_REASON } from '../contract/inputs/limits.js';
import { newCall, type OpsContext } from '../ops/context.js';
import { readTail, stepLogs, type Tail } from './files.js';
import { allowedHosts, refusal } from './guard.js';
import { attemptsOf, eventLine, rolesOf, slugOf, sumUsage, topOf, usageOf } from './model.js';
import { pageResponse } from './page.js';
import type { BoardSource, Published, SourceMessage } from './source.js';

/**
 * The HTTP status of a tugcode error, by its exit code (docs/output.md §3, docs/board.md §6): invalid input
 * (exit 2) is 400, a plan or step that does not resolve (3) 404, a refusal of the state (4) 409, anything
 * else (the state unreadable, a bug) 503.
 */
export function httpStatusOf(exit: number): number {
  return exit === 2 ? 400 : exit === 3 ? 404 : exit === 4 || exit === 5 ? 409 : 503;
}

export const LIMITS = {
  /** The longest request URL (the page's longest is a step detail's: well under 1 KiB). */
  url: 4096,
  /** Request headers, in bytes (node's own limit). */
  headers: 16 * 1024,
  /** A POST body: an action with its notes or reason. */
  body: 16 * 1024,
  /** Open sockets at once (pages, their requests, keep-alive). */
  connections: 64,
  /** Event streams at once (one per open page). */
  streams: 16,
  /** An event stream whose client reads slower than this much buffered output gets the next snapshot only. */
  backlog: 4 * 1024 * 1024,
} as const;

export interface ServerOptions {
  source: BoardSource;
  ctx: OpsContext;
  host: string;
  port: number;
  token: string;
  allowActions: boolean;
  /** Where the run's logs are (the main checkout). */
  mainRoot: string;
}

export interface BoardServer {
  server: Server;
  host: string;
  port: number;
  /** Event streams open now. */
  streams(): number;
  /** Resolves when a page connected (true) or after `ms` (false). */
  waitForPage(ms: number): Promise<boolean>;
  close(): Promise<void>;
}

interface Stream {
  id: string;
  res: ServerResponse;
  /** A snapshot waits for the socket to drain. */
  behind: boolean;
  /** The hash of the snapshot the page has (null: none yet): a `plans` frame applies only on top of it. */
  has: string | null;
  watch: { dir: string; name: string; plan: string; step: string; offset: number } | null;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  // The URL carries the token: no page this one links to may learn it.
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { status: 'error', error: { code, message } });
}

/** A bounded text parameter; `required` refuses a missing or empty one. */
function param(q: URLSearchParams, name: string, max: number, required = true): string {
  const v = q.get(name);
  if (v === null || v === '') {
    if (required) throw new HttpError(400, 'InvalidArgument', `${name} is required`);
    return '';
  }
  if (v.length > max || v.includes('\0'))
    throw new HttpError(400, 'InvalidArgument', `${name} is too long or holds a NUL`);
  return v;
}

/** The request body, at most LIMITS.body bytes, as JSON. */
async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = req.headers['content-type'] ?? '';
  // A page on another site cannot send this type without a preflight, which nothing here answers.
  if (!/^application\/json\b/i.test(type))
    throw new HttpError(415, 'InvalidArgument', 'the body must be application/json');
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > LIMITS.body)
    throw new HttpError(413, 'InvalidArgument', `the body is longer than ${LIMITS.body} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > LIMITS.body) throw new HttpError(413, 'InvalidArgument', `the body is longer than ${LIMITS.body} bytes`);
    chunks.push(c);
  }
  try {
    const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // below
  }
  throw new HttpError(400, 'InvalidArgument', 'the body is not a JSON object');
}

export async function startServer(o: ServerOptions): Promise<BoardServer> {
  const streams = new Map<string, Stream>();
  let nextId = 1;
  let pageWaiters: (() => void)[] = [];
  let hosts = allowedHosts(o.host, o.port);

  const server = createServer(
    { maxHeaderSize: LIMITS.headers, requestTimeout: 30_000, headersTimeout: 10_000 },
    (req, res) => {
      handle(req, res).catch((e: unknown) => {
        if (res.headersSent) return res.destroy();
        if (e instanceof HttpError) refuse(res, e.status, e.code, e.message);
        else if (e instanceof TugError)
          // A state error (no such plan or step, the database unreachable): its envelope, as the CLI prints it.
          sendJson(res, httpStatusOf(e.exitCode), fail('board', e));
        else refuse(res, 500, 'InternalError', e instanceof Error ? e.message : String(e));
      });
    },
  );
  server.maxConnections = LIMITS.connections;
  server.keepAliveTimeout = 5_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawUrl = req.url ?? '/';
    if (rawUrl.length > LIMITS.url)
      return refuse(res, 414, 'InvalidArgument', `the URL is longer than ${LIMITS.url} characters`);
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'POST')
      return refuse(res, 405, 'InvalidArgument', `method ${req.method} is not allowed`);
    const url = new URL(rawUrl, 'http://board.invalid');
    const given = url.searchParams.get('token') ?? (req.headers['x-tug-token'] as string | undefined);
    const no = refusal(req.headers, given, { hosts, token: o.token });
    if (no) return refuse(res, no.status, no.code, no.message);
    const q = url.searchParams;
    if (req.method === 'POST') {
      if (url.pathname !== '/api/action') return refuse(res, 404, 'NotFound', `no ${url.pathname}`);
      // The token in a header, never only in the URL: a POST the page makes on purpose.
      if (!req.headers['x-tug-token'])
        return refuse(res, 401, 'Unauthorized', 'an action needs the X-Tug-Token header');
      return action(req, res);
    }
    switch (url.pathname) {
      case '/': {
        const { body, csp } = await pageResponse();
        res.writeHead(200, {
          ...SECURITY_HEADERS,
          'Content-Type': 'text/html; charset=utf-8',
          'Content-Security-Policy': csp,
          'Content-Length': Buffer.byteLength(body),
        });
        return void res.end(req.method === 'HEAD' ? undefined : body);
      }
      case '/events':
        return events(req, res);
      case '/api/snapshot': {
        const s = await o.source.now();
        if (!s) return refuse(res, 503, 'NotReady', 'the first read of the state has not finished');
        res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=utf-8' });
        return void res.end(s.json);
      }
      case '/api/step':
        return sendJson(res, 200, await detail(q));
      case '/api/graph': {
        const { boardGraph } = await import('../ops/board.js');
        return sendJson(
          res,
          200,
          await boardGraph(o.ctx, { plan: param(q, 'plan', MAX_PLAN) }, newCall('state graph')),
        );
      }
      default:
        return refuse(res, 404, 'NotFound', `no ${url.pathname}`);
    }
  }

  /**
   * The page's one event stream: `hello`, the whole snapshot, then `plans` frames of what changed (id: the
   * snapshot's hash), `status`, and `log` lines of the watched log.
   */
  function events(req: IncomingMessage, res: ServerResponse): void {
    if (streams.size >= LIMITS.streams)
      return refuse(res, 503, 'TooManyStreams', `at most ${LIMITS.streams} pages at once`);
    const id = String(nextId++);
    const stream: Stream = { id, res, behind: false, has: null, watch: null };
    streams.set(id, stream);
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.socket?.setNoDelay(true);
    res.write(
      `retry: 1000\n\nevent: hello\ndata: ${JSON.stringify({ conn: id, allow_actions: o.allowActions, now: o.ctx.clock.now() })}\n\n`,
    );
    const last = req.headers['last-event-id'];
    const current = o.source.snapshot;
    // Last-Event-ID is the hash of the snapshot the page has (docs/board.md §5): the same one is not sent
    // again, an older one (or none) gets the whole current snapshot; after that, only what changed.
    if (current && current.hash === last) stream.has = current.hash;
    else if (current) sendWhole(stream, current);
    if (o.source.status) write(stream, `event: status\ndata: ${o.source.status}\n\n`);
    const off = o.source.subscribe((m) => deliver(stream, m));
    const ping = setInterval(() => res.write(': ping\n\n'), 25_000);
    ping.unref();
    res.on('drain', () => {
      const s = o.source.snapshot;
      if (stream.behind && s) {
        stream.behind = false;
        if (stream.has !== s.hash) sendWhole(stream, s);
      }
    });
    res.on('close', () => {
      clearInterval(ping);
      off();
      streams.delete(id);
    });
    for (const w of pageWaiters) w();
    pageWaiters = [];
  }

  /** The whole state: on connect, after a page fell behind, or when a page lacks the base of a change. */
  function sendWhole(s: Stream, p: Published): void {
    s.has = p.hash;
    write(s, `id: ${p.hash}\nevent: snapshot\ndata: ${p.json}\n\n`);
  }

  function deliver(s: Stream, m: SourceMessage): void {
    if (m.kind === 'status') return write(s, `event: status\ndata: ${m.json}\n\n`);
    if (s.res.writableLength > LIMITS.backlog) {
      s.behind = true; // the newest snapshot follows once the socket drains
      return;
    }
    // Only the plans that changed, on top of the snapshot the page has (docs/board.md §5).
    if (m.delta.base !== null && m.delta.base === s.has) {
      s.has = m.published.hash;
      write(s, `id: ${m.published.hash}\nevent: plans\ndata: ${m.delta.json}\n\n`);
    } else sendWhole(s, m.published);
  }

  function write(s: Stream, frame: string): void {
    if (!s.res.destroyed) s.res.write(frame);
  }

  /** The watched logs' new lines, every half second while a page watches one. */
  const logTimer = setInterval(() => {
    for (const s of streams.values()) {
      const w = s.watch;
      if (!w || s.res.writableLength > LIMITS.backlog) continue;
      void readTail(w.dir, w.name, w.offset).then((t) => {
        if (!t || s.watch !== w || t.size === w.offset) return;
        w.offset = t.size;
        write(
          s,
          `event: log\ndata: ${JSON.stringify({ plan: w.plan, step: w.step, name: w.name, text: t.text, cut: t.cut })}\n\n`,
        );
      });
    }
  }, 500);
  logTimer.unref();

  /** One step's detail; with `conn`, that page's stream then carries the new lines of the log shown. */
  async function detail(q: URLSearchParams) {
    const plan = param(q, 'plan', MAX_PLAN);
    const step = param(q, 'step', MAX_ANCHOR);
    const { boardStep } = await import('../ops/board.js');
    const d = await boardStep(o.ctx, { plan, step }, newCall('state show'));
    const shown = d.plan;
    const slug = slugOf(shown.plan_path);
    const anchors = shown.steps.map((s) => s.anchor);
    const logs = slug ? await stepLogs(o.mainRoot, slug, anchors) : [];
    const wanted = param(q, 'log', 256, false);
    const chosen = logs.find((l) => l.name === wanted) ?? logs[0];
    let tail: Tail | null = null;
    if (chosen && slug) tail = await readTail(runLogDir(o.mainRoot, slug), chosen.name);
    const conn = streams.get(param(q, 'conn', 32, false));
    if (conn)
      conn.watch =
        chosen && slug && tail
          ? { dir: runLogDir(o.mainRoot, slug), name: chosen.name, plan: shown.plan_path, step, offset: tail.size }
          : null;
    const events = d.events;
    return {
      plan_path: shown.plan_path,
      step,
      units: shown.steps.map((s) => ({
        anchor: s.anchor,
        id: s.id,
        title: s.title,
        parent_anchor: s.parent_anchor,
        status: s.status,
        commit: s.commit_hash,
        fail_reason: s.fail_reason,
        items: s.items ?? [],
        usage: s.usage,
      })),
      // The step's usage over its units, per role (state show's ledger sums), and per attempt (their events).
      usage: {
        total: sumUsage(shown.steps.map((s) => usageOf(s.usage))),
        by_role: rolesOf(shown.steps.map((s) => s.usage)),
      },
      attempts: attemptsOf([...events, ...d.usage_events], topOf(shown.steps) ?? step),
      events: events.map(eventLine).reverse(),
      artifacts: d.artifacts.map((a) => ({ ...a, truncated: (a.content_length ?? 0) > (a.content?.length ?? 0) })),
      logs: logs.map((l) => ({
        name: l.name,
        anchor: l.anchor,
        attempt: l.attempt,
        kind: l.kind,
        size: l.size,
        mtime: l.mtime,
      })),
      log: tail ? { name: tail.name, text: tail.text, size: tail.size, cut: tail.cut } : null,
    };
  }

  /** POST /api/action: one allowed command, run as the CLI runs it; the answer is its envelope. */
  async function action(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!o.allowActions)
      return refuse(res, 403, 'ActionsNotAllowed', 'this board is read-only (start it with --allow-actions)');
    const b = await jsonBody(req);
    const text = (name: string, max: number, required: boolean): string | undefined => {
      const v = b[name];
      if (v === undefined || v === null || v === '') {
        if (required) throw new HttpError(400, 'InvalidArgument', `${name} is required`);
        return undefined;
      }
      if (typeof v !== 'string' || v.length > max || v.includes('\0'))
        throw new HttpError(400, 'InvalidArgument', `${name} must be a string of at most ${max} characters`);
      return v;
    };
    const plan = text('plan', MAX_PLAN, true)!;
    const step = text('step', MAX_ANCHOR, true)!;
    const { boardAction } = await import('../ops/board.js');
    let envelope;
    if (b.action === 'reset') envelope = await boardAction(o.ctx, { action: 'reset', plan, step });
    else if (b.action === 'decide') {
      const decision = b.decision;
      if (decision !== 'approve' && decision !== 'revise' && decision !== 'reject')
        throw new HttpError(400, 'InvalidArgument', 'decision must be approve, revise or reject');
      // As the CLI refuses `--approve --revise …`: a field of another decision is a mistake, not ignored.
      const own = decision === 'revise' ? 'notes' : decision === 'reject' ? 'reason' : null;
      const stray = (['notes', 'reason'] as const).find(
        (f) => f !== own && ![undefined, null, ''].includes(b[f] as never),
      );
      if (stray) throw new HttpError(400, 'InvalidArgument', `${stray} does not go with decision ${decision}`);
      envelope = await boardAction(o.ctx, {
        action: 'decide',
        plan,
        step,
        decision,
        notes: text('notes', MAX_REASON, decision === 'revise'),
        reason: text('reason', MAX_REASON, decision === 'reject'),
      });
    } else throw new HttpError(400, 'InvalidArgument', 'action must be reset or decide');
    o.source.refreshSoon();
    sendJson(
      res,
      envelope.status === 'ok' ? 200 : httpStatusOf(CATALOGUE[envelope.error.code as ErrorCode]?.exit ?? 10),
      envelope,
    );
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  const port = (server.address() as { port: number }).port;
  hosts = allowedHosts(o.host, port);
  return {
    server,
    host: o.host,
    port,
    streams: () => streams.size,
    waitForPage: (ms) =>
      streams.size > 0
        ? Promise.resolve(true)
        : new Promise((resolve) => {
            const t = setTimeout(() => resolve(false), ms);
            pageWaiters.push(() => {
              clearTimeout(t);
              resolve(true);
            });
          }),
    close: async () => {
      clearInterval(logTimer);
      // The page says the board stopped rather than "reconnecting…" for as long as none runs (docs/board.md §5).
      for (const s of streams.values()) {
        write(s, 'event: stopped\ndata: {}\n\n');
        s.res.end();
      }
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
