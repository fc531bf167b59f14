/**
 * Helpers of the board's tests: a `tugcode board` child and its `board` line, plain HTTP requests with any
 * Host and Origin (fetch would refuse to set Host), and a server-sent-events reader.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { expect } from 'vitest';
import { boardLineSchema, type BoardLine } from '../../src/contract/schemas/board.js';
import type { ShownStep } from '../../src/board/model.js';
import { CLI } from '../helpers/cli.js';

export const testEnv = (env: Record<string, string> = {}) => ({
  ...process.env,
  NODE_ENV: 'test',
  NO_COLOR: '1',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.invalid',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.invalid',
  ...env,
});

export interface Where {
  url: string;
  port: number;
  token: string;
  /** `http://127.0.0.1:<port>` */
  base: string;
  line: BoardLine;
}

export function whereOf(line: BoardLine): Where {
  const u = new URL(line.url);
  return { url: line.url, port: line.port, token: u.searchParams.get('token')!, base: u.origin, line };
}

/** Reads a child's stdout until its first JSON line of `type: board` (or it exits). */
export function boardLineOf(child: ChildProcess, ms = 30_000): Promise<Where> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const t = setTimeout(() => reject(new Error(`no board line in ${ms} ms:\n${out}\n${err}`)), ms);
    child.stderr!.on('data', (d) => (err += d));
    const onData = (d: Buffer) => {
      out += d;
      for (const l of out.split('\n').slice(0, -1)) {
        let v: unknown;
        try {
          v = JSON.parse(l);
        } catch {
          continue;
        }
        if ((v as { type?: unknown }).type !== 'board') continue;
        clearTimeout(t);
        child.stdout!.off('data', onData);
        const parsed = boardLineSchema.safeParse(v);
        if (!parsed.success) return reject(new Error(`bad board line ${l}: ${parsed.error.message}`));
        return resolve(whereOf(parsed.data));
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`exited ${code} before its board line:\n${out}\n${err}`));
    });
  });
}

export interface BoardChild extends Where {
  child: ChildProcess;
  stderr: () => string;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `tugcode board --json …args` in `cwd`, once it listens. */
export async function startBoardCli(
  cwd: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<BoardChild> {
  const child = spawn(process.execPath, [CLI, 'board', '--json', ...args], { cwd, env: testEnv(env) });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((res) => child.once('exit', (c) => res(c)));
  const where = await boardLineOf(child);
  return {
    ...where,
    child,
    stderr: () => err,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: any;
}

/** One HTTP request to the board with exactly these headers (Host included). */
export function http(
  base: string,
  path: string,
  o: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  const u = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: o.method ?? 'GET',
        headers: o.headers ?? {},
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(body);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json });
        });
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

export interface SseEvent {
  event: string;
  id: string | undefined;
  data: any;
  /**
   * After a `snapshot` or `plans` frame: the whole snapshot the page has then, rebuilt from the frames as
   * docs/board.md §5 says (undefined when a `plans` frame did not apply on top of the one before).
   */
  state?: any;
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 20);

/**
 * The snapshot after a `plans` frame on top of `prev` (docs/board.md §5), in the server's key order, so that
 * its hash is the frame's: null when the frame is not on top of `prev` or the result's hash is not the frame's.
 */
export function applyPlans(prev: { hash: string; snapshot: any } | null, m: any): any | null {
  if (!prev || m.base !== prev.hash) return null;
  const byPath = new Map<string, any>(prev.snapshot.plans.map((p: any) => [p.plan_path, p]));
  for (const u of m.plans) {
    const old = byPath.get(u.plan_path);
    const cards = new Map<string, any>(old ? old.cards.map((c: any) => [c.anchor, c]) : []);
    for (const c of u.cards) cards.set(c.anchor, c);
    const anchors: string[] = u.anchors ?? (old ? old.cards.map((c: any) => c.anchor) : []);
    const { anchors: _, ...plan } = u;
    byPath.set(u.plan_path, { ...plan, cards: anchors.map((a) => cards.get(a)) });
  }
  for (const path of m.removed) byPath.delete(path);
  const order: string[] = m.order ?? prev.snapshot.plans.map((p: any) => p.plan_path);
  const { plans: __, ...board } = m.board ?? prev.snapshot;
  const snapshot = { ...board, plans: order.filter((p) => byPath.has(p)).map((p) => byPath.get(p)) };
  return sha(JSON.stringify(snapshot)) === m.hash ? snapshot : null;
}

export interface SseReader {
  status: Promise<number>;
  events: SseEvent[];
  /** Resolves with the first event (from `from` on) that `pred` accepts. */
  next(pred: (e: SseEvent) => boolean, from?: number, ms?: number): Promise<SseEvent>;
  close(): void;
}

/** An event-stream reader (what EventSource does, without the browser). */
export function sse(base: string, path: string, headers: Record<string, string> = {}): SseReader {
  const u = new URL(path, base);
  const events: SseEvent[] = [];
  const waiters: (() => void)[] = [];
  let buf = '';
  let held: { hash: string; snapshot: any } | null = null;
  let req: ReturnType<typeof request>;
  const status = new Promise<number>((resolve, reject) => {
    req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, headers }, (res) => {
      resolve(res.statusCode ?? 0);
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        buf += d;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const e: SseEvent = { event: 'message', id: undefined, data: undefined };
          let data: string | undefined;
          for (const l of frame.split('\n')) {
            if (l.startsWith('event: ')) e.event = l.slice(7);
            else if (l.startsWith('id: ')) e.id = l.slice(4);
            else if (l.startsWith('data: ')) data = l.slice(6);
          }
          if (data === undefined) continue; // a comment or a retry line
          e.data = JSON.parse(data);
          if (e.event === 'snapshot') {
            held = { hash: e.data.hash, snapshot: e.data.snapshot };
            e.state = e.data.snapshot;
          } else if (e.event === 'plans') {
            e.state = applyPlans(held, e.data) ?? undefined;
            held = e.state ? { hash: e.data.hash, snapshot: e.state } : null;
          }
          events.push(e);
          for (const w of waiters.splice(0)) w();
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
  return {
    status,
    events,
    next: (pred, from = 0, ms = 30_000) =>
      new Promise((resolve, reject) => {
        const t = setTimeout(
          () => reject(new Error(`no matching event in ${ms} ms; got ${events.map((e) => e.event).join(', ')}`)),
          ms,
        );
        const look = () => {
          const hit = events.slice(from).find(pred);
          if (hit) {
            clearTimeout(t);
            resolve(hit);
          } else waiters.push(look);
        };
        look();
      }),
    close: () => req.destroy(),
  };
}

/**
 * The board's first snapshot: its first full read is under way while it starts, so `/api/snapshot` answers
 * 200 once it has one (polled, at most 10 s).
 */
export async function firstSnapshot(w: Where): Promise<any> {
  for (let n = 0; n < 200; n++) {
    const r = await http(w.base, `/api/snapshot?token=${w.token}`, { headers: own(w) });
    if (r.status === 200) return r.json.snapshot;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('the board had no snapshot after 10 s');
}

/** Headers a same-origin browser request carries. */
export function own(w: Where, extra: Record<string, string> = {}): Record<string, string> {
  return { Host: `127.0.0.1:${w.port}`, ...extra };
}

export function expectRefused(r: Reply, status: number, code: string): void {
  expect(r.status, r.body).toBe(status);
  expect(r.json?.error?.code).toBe(code);
}

/** A step as the board's model gets it from `state show`, pending and unclaimed unless `o` says otherwise. */
export function shownStep(anchor: string, o: Partial<ShownStep> = {}): ShownStep {
  return {
    anchor,
    id: anchor.replace(/^step-/, '').replace(/-/g, '.'),
    title: `Title ${anchor}`,
    parent_anchor: null,
    step_index: Number(anchor.replace(/\D/g, '')) || 0,
    status: 'pending',
    attempt: 0,
    failures: 0,
    claimed_by: null,
    lease_expires_at: null,
    lease_expired: false,
    heartbeat_at: null,
    started_at: null,
    completed_at: null,
    commit_hash: null,
    completed_via: null,
    fail_reason: null,
    depends_on: [],
    blocked_by: [],
    counts: {
      tasks: { open: 1, in_progress: 0, completed: 1, deferred: 0 },
      tests: { open: 0, in_progress: 0, completed: 0, deferred: 1 },
      checkpoints: { open: 0, in_progress: 0, completed: 0, deferred: 0 },
      refactors: { open: 0, applied: 0, failed: 0, skipped: 0 },
      artifacts: 0,
    },
    review_commit: null,
    human_decision: null,
    usage: null,
    ...o,
  };
}
