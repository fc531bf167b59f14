/**
 * The storage seam of the state library (docs/state.md §8): every query and transaction goes through these
 * two interfaces, so the domain rules are written once and run on SQLite (sql/sqlite.ts, the embedded
 * default) and on PostgreSQL (sql/postgres.ts). Statements use `?` (positional) or `@name` (named)
 * parameters; the PostgreSQL connection rewrites them to `$n`.
 */

import { TugError } from '../../contract/errors.js';

export type Dialect = 'sqlite' | 'postgres';
export type Params = readonly unknown[] | object;

/** One connection (or one open transaction on it). */
export interface Conn {
  readonly dialect: Dialect;
  /** The first row, or undefined. */
  get<T>(sql: string, params?: Params): Promise<T | undefined>;
  all<T>(sql: string, params?: Params): Promise<T[]>;
  /** Runs a statement; returns the number of rows it changed. */
  run(sql: string, params?: Params): Promise<number>;
  /**
   * Runs a statement whose result nobody reads (an event's append, say). SQLite runs it now and throws at
   * once. PostgreSQL sends it without waiting for its answer (the connection is pipelined): it travels with
   * the next statement or the COMMIT, and a failure fails the transaction there. Statements still run in the
   * order they were issued.
   */
  later(sql: string, params?: Params): void;
}

export interface TxOptions {
  /**
   * A transaction that may run beside other shared ones (a claim: it picks its row with
   * `FOR UPDATE SKIP LOCKED` on PostgreSQL). Every other write transaction runs alone, as on SQLite.
   */
  shared?: boolean;
  /**
   * Claims of one owner run one at a time (PostgreSQL: an advisory lock on the owner, taken with the
   * project's lock; SQLite's writer is alone anyway), so two claims by one worktree never take two steps.
   */
  owner?: string;
}

/** An open state database. Statements on it directly run outside any transaction. */
export interface Database extends Conn {
  /** What errors name: the state.db path, or the PostgreSQL URL without its password. */
  readonly path: string;
  readonly readonly: boolean;
  readonly open: boolean;
  /** Schema version found on open (after migration for writers). */
  readonly version: number;
  /** How long a writer waits for the write lock before `Busy`. */
  readonly timeoutMs: number;
  /** One write transaction (IMMEDIATE on SQLite): all of `fn` or nothing. `fn` runs at most once. */
  write<T>(fn: (c: Conn) => Promise<T>, opts?: TxOptions): Promise<T>;
  /** One consistent read (a deferred transaction, or a read-only snapshot). */
  read<T>(fn: (c: Conn) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A transaction-scoped mutual exclusion: serializes transactions on one connection within a process. */
export class TxQueue {
  private tail: Promise<void> = Promise.resolve();
  /** Resolves when it is this caller's turn, with the function that ends the turn. */
  acquire(): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const prev = this.tail;
    this.tail = prev.then(() => mine);
    return prev.then(() => release);
  }
}

/**
 * A statement issued after its transaction committed or rolled back (a chain of it still running, its
 * statements issued side by side): refused, never run, since it would run on its own outside the
 * transaction, or inside the next one.
 */
export function afterEnd(): TugError {
  return new TugError('InternalError', { reason: 'a statement issued after its transaction ended' });
}
