/**
 * What the PostgreSQL connection needs besides the driver: `?` / `@name` parameters rewritten to `$n`,
 * the URL without its password for every message, the server named in errors, and the mapping of
 * connection failures to `DatabaseUnavailable`. Nothing here loads `pg`.
 */
import { TugError } from '../../contract/errors.js';
import { parseStateUrl } from '../../config/state-url.js';
import type { Params } from './conn.js';
import { pgSsl, sslHint, tlsFailure, type PgSsl } from './pg-ssl.js';
import { shellArg } from '../../util/shell-arg.js';

interface Translated {
  text: string;
  /** The prepared statement's name (one per distinct text: parsed and planned once per connection). */
  name: string;
  /** Named parameters in `$n` order; null for positional `?` statements. */
  names: string[] | null;
}

const cache = new Map<string, Translated>();

/**
 * A string as a PostgreSQL literal, for the few statements sent as simple queries (no parameters): quotes
 * doubled, and backslashes doubled under `E''` so the text means the same whatever standard_conforming_strings
 * says. NUL bytes cannot be sent at all (the server refuses them).
 */
export function pgLiteral(s: string): string {
  const q = s.replace(/'/g, "''");
  return s.includes('\\') ? `E'${q.replace(/\\/g, '\\\\')}'` : `'${q}'`;
}

/**
 * `?` → `$1, $2, …` in order; `@name` → one `$n` per distinct name (so PostgreSQL infers its type from
 * every use). Quoted strings and identifiers are left alone.
 */
export function translate(sql: string): Translated {
  const hit = cache.get(sql);
  if (hit) return hit;
  let text = '';
  let positional = 0;
  const names: string[] = [];
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i]!;
    if (ch === "'" || ch === '"') {
      const end = sql.indexOf(ch, i + 1);
      const stop = end < 0 ? sql.length : end + 1;
      text += sql.slice(i, stop);
      i = stop - 1;
    } else if (ch === '?') {
      text += `$${++positional}`;
    } else if (ch === '@' && /[A-Za-z_]/.test(sql[i + 1] ?? '')) {
      const m = /^[A-Za-z_]\w*/.exec(sql.slice(i + 1))!;
      let n = names.indexOf(m[0]);
      if (n < 0) n = names.push(m[0]) - 1;
      text += `$${n + 1}`;
      i += m[0].length;
    } else text += ch;
  }
  const out = { text, name: `tug${cache.size}`, names: names.length > 0 ? names : null };
  cache.set(sql, out);
  return out;
}

function value(v: unknown): unknown {
  if (v === undefined) return null;
  if (v instanceof Uint8Array && !Buffer.isBuffer(v)) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return v;
}

/** The values of a translated statement, in `$n` order. */
export function values(t: Translated, params: Params | undefined): unknown[] {
  if (params === undefined) return [];
  if (t.names) {
    const named = params as Record<string, unknown>;
    return t.names.map((n) => value(named[n]));
  }
  return (params as readonly unknown[]).map(value);
}

/** Where a PostgreSQL URL points, for messages: never the password. */
export interface PgTarget {
  host: string;
  port: number;
  database: string;
  user: string | null;
  /** The URL with its password replaced by `***` (what errors and `state show` name). */
  label: string;
  /** The password, if the URL carries one: scrubbed from every message that could echo it. */
  secret: string | null;
  /** sslmode and certificate files as libpq reads them (pg-ssl.ts); absent: libpq's default, prefer. */
  ssl?: PgSsl;
}

/** Reads host, port, database and user from the URL, then the usual PG* variables, then libpq's defaults. */
export function pgTarget(url: string, env: NodeJS.ProcessEnv): PgTarget {
  // The URL's checks (scheme, percent-encoding, a raw @ or # of the password) are the configuration's.
  const p = parseStateUrl(url);
  const u = p.url;
  // Query parameters override the authority as in pg (`?host=` is how a Unix socket directory is named:
  // `postgresql:///db?host=/run/postgresql`); a password may come either way and is masked both ways.
  const q = (k: string) => u.searchParams.get(k) || null;
  const secret = q('password') ?? p.password;
  const user = q('user') ?? p.user ?? env.PGUSER ?? null;
  const host = q('host') ?? p.hostname ?? env.PGHOST ?? 'localhost';
  const port = Number(q('port') ?? (u.port || env.PGPORT || 5432));
  const database = q('dbname') ?? (p.database || env.PGDATABASE || user || 'postgres');
  if (u.password) u.password = '***';
  if (u.searchParams.has('password')) u.searchParams.set('password', '***');
  const target = { host, port, database, user, label: u.toString(), secret };
  try {
    return { ...target, ssl: pgSsl(u, env) };
  } catch (e) {
    throw e instanceof TugError && typeof e.details.reason === 'string'
      ? new TugError(e.code, { ...e.details, reason: scrub(e.details.reason, target) })
      : e;
  }
}

/** Removes the password (URL-encoded or not) from a message. */
function scrub(text: string, t: PgTarget): string {
  if (!t.secret) return text;
  let out = text.split(t.secret).join('***');
  const enc = encodeURIComponent(t.secret);
  if (enc !== t.secret) out = out.split(enc).join('***');
  return out;
}

const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

/**
 * A failure of the connection rather than of a statement: the network, the server going away
 * (08*, 57P01–57P03), too many connections (53300), authentication (28*), a missing database (3D000).
 */
export function isUnavailable(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  if (typeof code === 'string' && (NETWORK.has(code) || /^(08|28|57P0[123]|53300|3D000)/.test(code))) return true;
  // A Unix-domain socket path where no server listens (not any missing file: a missing sslrootcert is not).
  if (code === 'ENOENT' && (e as { syscall?: unknown }).syscall === 'connect') return true;
  if (tlsFailure(e) || noPassword(e)) return true;
  const msg = e instanceof Error ? e.message : '';
  return /Connection terminated|connection timeout|timeout expired|Client has encountered a connection error/i.test(
    msg,
  );
}

/** The server asked for a password and there was none (pg fails inside its SASL or password exchange). */
function noPassword(e: unknown): boolean {
  return e instanceof Error && /client password must be a string|^Password must be a string/.test(e.message);
}

/** Maps a pg failure to the catalogue (`DatabaseUnavailable`, or `DatabaseError` naming the SQLSTATE). */
export function pgToTugError(e: unknown, t: PgTarget): unknown {
  if (e instanceof TugError) return e;
  const code = (e as { code?: unknown })?.code;
  const raw = e instanceof Error ? e.message : String(e);
  const reason = scrub(raw || (typeof code === 'string' ? code : 'connection failed'), t);
  if (isUnavailable(e)) {
    const nopw = noPassword(e);
    const details = {
      host: t.host,
      port: t.port,
      database: t.database,
      reason: nopw ? `the server asks ${t.user ?? 'the user'} for a password and none was given` : reason,
      ...(typeof code === 'string' ? { pg_code: code } : {}),
    };
    const hint = nopw
      ? 'give the password in [state] url (postgres://user:password@host/db), in PGPASSWORD or in ~/.pgpass'
      : code === '3D000'
        ? // The server answered: it runs, and the login worked; the database is what is missing.
          `create it: createdb -h ${shellArg(t.host)} -p ${t.port}${t.user ? ` -U ${shellArg(t.user)}` : ''} ${shellArg(t.database)} ` +
          '(or CREATE DATABASE as a user allowed to), or name an existing database in [state] url or TUGCODE_STATE_URL'
        : sslHint(e, t.ssl);
    return new TugError('DatabaseUnavailable', details, hint ? { hint } : {});
  }
  return new TugError('DatabaseError', {
    db_path: t.label,
    reason: typeof code === 'string' ? `${reason} (SQLSTATE ${code})` : reason,
    ...(typeof code === 'string' ? { pg_code: code } : {}),
  });
}
