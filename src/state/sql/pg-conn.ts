/**
 * One PostgreSQL connection of the storage seam (sql/conn.ts), or one transaction on it. The client is
 * pipelined: statements that do not wait for each other (Conn.later, or reads sent together) go out at once,
 * in one socket write when sent in the same turn, and run on the server in the order they were issued.
 */
import type { Duplex } from 'node:stream';
import { TugError } from '../../contract/errors.js';
import type { Conn, Params } from './conn.js';
import { pgToTugError, translate, values, type PgTarget } from './pg-sql.js';

export type Query = (q: { name?: string; text: string; values: unknown[] }) => Promise<{
  rows: unknown[];
  rowCount: number | null;
}>;

export class PgConn implements Conn {
  readonly dialect = 'postgres' as const;
  /** Statements sent with `later` whose answers nobody has checked yet. */
  private pending: Promise<unknown>[] = [];
  private corked = false;
  /** Set once the transaction sent COMMIT or failed: a statement from a chain still running is refused. */
  private ended = false;
  constructor(
    private readonly q: Query,
    private readonly target: PgTarget,
    /** The transaction's socket: statements sent in one turn of the event loop leave in one write. */
    private readonly socket?: Duplex,
  ) {}

  /**
   * Holds the socket's writes until the current turn's promise callbacks have run (a tick queued now runs
   * after them), so a batch (BEGIN with the first reads, the last writes with COMMIT) is one write and
   * reaches the server at once.
   */
  private batch(): void {
    const s = this.socket;
    if (!s || this.corked) return;
    this.corked = true;
    s.cork();
    process.nextTick(() => {
      this.corked = false;
      s.uncork();
    });
  }

  /**
   * Sends the statement now, behind any still in flight (the client pipelines them); resolves with its
   * answer. Statements with parameters are prepared once per connection (named); the rest go as simple
   * queries (BEGIN and its lock are two statements in one text, which cannot be prepared).
   */
  private send(sql: string, params: Params | undefined) {
    if (this.ended)
      // Never sent: behind the COMMIT or ROLLBACK it would run on its own, outside the transaction.
      return Promise.reject(
        new TugError('InternalError', { reason: 'a statement issued after its transaction ended' }),
      );
    const t = translate(sql);
    try {
      const vals = values(t, params);
      this.batch();
      return this.q(
        vals.length > 0 ? { name: t.name, text: t.text, values: vals } : { text: t.text, values: vals },
      ).catch((e: unknown) => {
        throw pgToTugError(e, this.target);
      });
    } catch (e) {
      return Promise.reject(pgToTugError(e, this.target));
    }
  }

  /** One statement's answer; a failure of an earlier `later` statement is reported first (it caused this one's). */
  private async exec(sql: string, params: Params | undefined) {
    const answer = this.send(sql, params);
    if (this.pending.length > 0) {
      answer.catch(() => undefined);
      await this.settle();
    }
    return await answer;
  }

  /** Waits for the statements sent with `later`; throws the first failure among them. */
  private async settle(): Promise<void> {
    const sent = this.pending;
    this.pending = [];
    for (const r of await Promise.allSettled(sent)) if (r.status === 'rejected') throw r.reason;
  }

  async get<T>(sql: string, params?: Params): Promise<T | undefined> {
    return (await this.exec(sql, params)).rows[0] as T | undefined;
  }
  async all<T>(sql: string, params?: Params): Promise<T[]> {
    return (await this.exec(sql, params)).rows as T[];
  }
  async run(sql: string, params?: Params): Promise<number> {
    return (await this.exec(sql, params)).rowCount ?? 0;
  }
  later(sql: string, params?: Params): void {
    const answer = this.send(sql, params);
    answer.catch(() => undefined);
    this.pending.push(answer);
  }

  /** The transaction's last statement: COMMIT (its answer, after the deferred ones'), or nothing after a failure. */
  async end(commit: boolean): Promise<void> {
    const answer = commit ? this.exec('COMMIT', undefined) : null;
    this.ended = true;
    if (answer) await answer;
  }
}
