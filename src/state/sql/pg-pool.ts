/**
 * The `pg` pool of a process: loads pg cheaply, and gives each new connection the TLS setting its sslmode
 * calls for (pg-ssl.ts). For `allow` and `prefer` a connection that fails the first way is tried once the
 * other way; the way that worked is remembered for the pool's later connections, so a process pays a
 * fallback (one short refused handshake) at most once.
 */
import type { Duplex } from 'node:stream';
import type { ConnectionOptions } from 'node:tls';
import type { ClientConfig, Pool, PoolClient, PoolConfig } from 'pg';
import { fallBack, tlsFirst, tlsOptions, type PgSsl } from './pg-ssl.js';

type Pg = typeof import('pg').default;

/**
 * `import('pg')`. When it loads, pg asks whether it runs in Cloudflare Workers: without a global `navigator`
 * (Node 20) it constructs a `Response`, which loads Node's whole fetch implementation (~25 ms of every CLI
 * call on PostgreSQL). A `navigator` present while it loads answers the question; it is removed again.
 */
export async function loadPg(): Promise<Pg> {
  const g = globalThis as { navigator?: unknown };
  if (g.navigator !== undefined) return (await import('pg')).default;
  g.navigator = { userAgent: 'Node.js' };
  try {
    return (await import('pg')).default;
  } finally {
    delete g.navigator;
  }
}

type ConnectCallback = (err: Error | undefined, client?: PoolClient, done?: (release?: unknown) => void) => void;

/**
 * A pool over `config` (whose connectionString carries no SSL parameter: see withoutSslParams) with the
 * sslmode `ssl`. Reads the certificate files now: ConfigInvalid when one cannot be read.
 */
export function newPool(pg: Pg, config: PoolConfig, ssl: PgSsl): Pool {
  const tls: ConnectionOptions | false = ssl.mode === 'disable' ? false : tlsOptions(ssl);
  let useTls = tlsFirst(ssl.mode);
  class TugClient extends pg.Client {
    constructor(c?: ClientConfig) {
      super({ ...c, ssl: useTls ? tls : false });
      // A connection that failed on our side (no password to answer the server's SASL request) is closed at
      // once: pg leaves its socket open, and the process would wait for the server's authentication_timeout.
      const close = () => (this as unknown as { connection?: { stream?: Duplex } }).connection?.stream?.destroy();
      const connect = this.connect.bind(this) as (cb?: (err: Error | null) => void) => Promise<unknown> | undefined;
      this.connect = ((cb?: (err: Error | null) => void) =>
        cb
          ? connect((err) => {
              if (err) close();
              cb(err);
            })
          : connect()!.catch((e: unknown) => {
              close();
              throw e;
            })) as typeof this.connect;
    }
  }
  const pool = new pg.Pool({ ...config, ssl: false, Client: TugClient });
  if (ssl.mode !== 'allow' && ssl.mode !== 'prefer') return pool;

  const connect = pool.connect.bind(pool) as () => Promise<PoolClient>;
  const connectEitherWay = async (): Promise<PoolClient> => {
    const tried = useTls;
    try {
      return await connect();
    } catch (e) {
      if (!fallBack(ssl.mode, tried, e)) throw e;
      // The other way, once: a new connection (pg ends one the server answered "no SSL").
      useTls = !tried;
      try {
        return await connect();
      } catch (e2) {
        useTls = tried;
        throw e2;
      }
    }
  };
  // Every connection of the pool comes through here: pool.query() calls connect(callback) itself.
  (pool as unknown as { connect: (cb?: ConnectCallback) => Promise<PoolClient> | undefined }).connect = (cb) => {
    const p = connectEitherWay();
    if (!cb) return p;
    p.then(
      (c) => cb(undefined, c, (r?: unknown) => c.release(r as boolean | Error | undefined)),
      (e: Error) => cb(e),
    );
    return undefined;
  };
  return pool;
}
