/**
 * One PostgreSQL connection of the storage seam (sql/conn.ts), or one transaction on it. The client is
 * pipelined: statements that do not wait for each other (Conn.later, or reads sent together) go out at once,
 * in one socket write when sent in the same turn, and run on the server in the order they were issued.
 */
import type { Duplex } from 'node:stream';
import { TugError } from '../../contract/errors.js';
import { afterEnd, type Conn, type Params } from './conn.js';
import { pgToTugError, translate, values, type PgTarget } from './pg-sql.js';

export type Query = (q: { name?: string; text: string; values: unknown[] }) => Promise<{
  rows: unknown[];
  rowCount: number | null;
  command: string;
}>;

export class PgConn implements Conn {
  readonly dialect = 'postgres' as const;
  private corked = false;
  /** Set once the transaction sent COMMIT or failed: a statement from a chain still running is refused. */
  private ended = false;
  /** A transaction's first failure. */
  private failure: unknown;
  constructor(
    private readonly q: Query,
    private readonly target: PgTarget,
    /**
     * Given for a transaction only, its socket: statements sent in one turn of the event loop leave in one
     * write, and the transaction's first failure is the one reported.
     */
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
   * In a transaction the first failure is the one every failing statement reports. Answers come in the order
   * the statements were sent, so it is the cause; those behind it fail because of it ("transaction aborted",
   * or a prepared statement whose Parse never ran), and a deadlock stays a deadlock, which is retried.
   */
  private failed(e: unknown): unknown {
    if (!this.socket) return e;
    if (this.failure === undefined) this.failure = e;
    return this.failure;
  }

  /**
   * Sends the statement now, behind any still in flight (the client pipelines them); resolves with its
   * answer. Statements with parameters are prepared once per connection (named); the rest go as simple
   * queries (BEGIN and its lock are two statements in one text, which cannot be prepared).
   */
  private send(sql: string, params: Params | undefined) {
    if (this.ended) return Promise.reject(afterEnd());
    const t = translate(sql);
    try {
      const vals = values(t, params);
      this.batch();
      return this.q(
        vals.length > 0 ? { name: t.name, text: t.text, values: vals } : { text: t.text, values: vals },
      ).catch((e: unknown) => {
        throw this.failed(pgToTugError(e, this.target));
      });
    } catch (e) {
      return Promise.reject(this.failed(pgToTugError(e, this.target)));
    }
  }

  async get<T>(sql: string, params?: Params): Promise<T | undefined> {
    return (await this.send(sql, params)).rows[0] as T | undefined;
  }
  async all<T>(sql: string, params?: Params): Promise<T[]> {
    return (await this.send(sql, params)).rows as T[];
  }
  async run(sql: string, params?: Params): Promise<number> {
    return (await this.send(sql, params)).rowCount ?? 0;
  }
  /** Sent without waiting: a failure fails every statement behind it, the COMMIT included, and is reported there. */
  later(sql: string, params?: Params): void {
    if (this.ended) throw afterEnd();
    this.send(sql, params).catch(() => undefined);
  }

  /** The transaction's last statement: its answer comes after every earlier one. */
  async commit(): Promise<void> {
    const answer = this.send('COMMIT', undefined);
    this.ended = true;
    const r = await answer;
    // PostgreSQL answers the COMMIT of a failed transaction with ROLLBACK: a deferred statement failed.
    if (r.command === 'ROLLBACK')
      throw (
        this.failure ??
        new TugError('DatabaseError', {
          db_path: this.target.label,
          reason: 'the transaction was rolled back at COMMIT',
        })
      );
  }

  /** The transaction failed: nothing more is sent on it (the caller rolls back). */
  abandon(): void {
    this.ended = true;
  }
}
