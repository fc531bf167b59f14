/**
 * `sslmode` as libpq (and so psql) understands it (docs/state.md §8). pg 8 reads `prefer`, `require` and
 * `verify-ca` as `verify-full` (and warns on stderr); we resolve the mode ourselves and hand pg a TLS
 * configuration per connection, with no SSL setting left in the URL it parses:
 *
 * - `disable`: no TLS. `allow`: plain first, TLS (unverified) when the server refuses plain connections.
 * - `prefer` (the default): TLS without verification first, plain when the server has no SSL.
 * - `require`: TLS without verification (with `sslrootcert`: the certificate chain is checked, as verify-ca).
 * - `verify-ca`: TLS, the chain checked against `sslrootcert` (else ~/.postgresql/root.crt, else Node's CAs),
 *   not the host name. `verify-full`: the chain and the host name.
 *
 * The mode comes from the URL's `sslmode`, else PGSSLMODE, else `prefer`; the files from `sslrootcert`,
 * `sslcert`, `sslkey`, else PGSSLROOTCERT, PGSSLCERT, PGSSLKEY. Nothing here loads `pg`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import { TugError } from '../../contract/errors.js';

import { SSL_MODES } from '../../config/state-url.js';

export { SSL_MODES };
export type SslMode = (typeof SSL_MODES)[number];

export interface PgSsl {
  mode: SslMode;
  /** Where the mode came from, for messages: `sslmode in state.url`, `PGSSLMODE`, or `the default`. */
  from: string;
  /** `sslrootcert` (`system`: Node's own CAs), or null. */
  rootcert: string | null;
  cert: string | null;
  key: string | null;
}

/** libpq's default: prefer, no certificate files. */
export const DEFAULT_SSL: PgSsl = { mode: 'prefer', from: 'the default', rootcert: null, cert: null, key: null };

/** SSL parameters of the URL: ours to apply, never passed on to pg (which would read them its own way). */
const SSL_PARAMS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'ssl', 'uselibpqcompat'];

function isMode(v: string): v is SslMode {
  return (SSL_MODES as readonly string[]).includes(v);
}

/** The SSL settings of a URL and the environment; an invalid sslmode is ConfigInvalid naming its source. */
export function pgSsl(u: URL, env: NodeJS.ProcessEnv): PgSsl {
  const q = (k: string) => u.searchParams.get(k) || null;
  let mode = q('sslmode');
  let from = 'sslmode in state.url';
  // pg's own `ssl=true|1|0|false` (no sslmode): what pg made of it (verify-full / disable).
  const ssl = q('ssl');
  if (mode === null && ssl !== null)
    mode = ssl === 'no-verify' ? 'require' : /^(true|1)$/.test(ssl) ? 'verify-full' : 'disable';
  if (mode === null && env.PGSSLMODE) [mode, from] = [env.PGSSLMODE, 'PGSSLMODE'];
  if (mode === null) [mode, from] = ['prefer', 'the default'];
  if (!isMode(mode)) {
    throw new TugError('ConfigInvalid', {
      source: from === 'PGSSLMODE' ? 'PGSSLMODE' : 'state.url',
      reason: `invalid sslmode ${JSON.stringify(mode)}: expected one of ${SSL_MODES.join(', ')}`,
      hint: `set sslmode to one of ${SSL_MODES.join(', ')} (prefer, libpq's default, when it is left out)`,
    });
  }
  let rootcert = q('sslrootcert') ?? (env.PGSSLROOTCERT || null);
  if (rootcert === null && (mode === 'require' || mode.startsWith('verify-')) && env.HOME) {
    const dflt = join(env.HOME, '.postgresql', 'root.crt');
    if (existsSync(dflt)) rootcert = dflt;
  }
  return {
    mode,
    from,
    rootcert,
    cert: q('sslcert') ?? (env.PGSSLCERT || null),
    key: q('sslkey') ?? (env.PGSSLKEY || null),
  };
}

/** The URL for pg: the same connection without its SSL parameters. */
export function withoutSslParams(url: string): string {
  const u = new URL(url);
  if (!SSL_PARAMS.some((p) => u.searchParams.has(p))) return url;
  for (const p of SSL_PARAMS) u.searchParams.delete(p);
  return u.toString();
}

function readPem(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new TugError('ConfigInvalid', {
      source: 'state.url',
      reason: `${what} ${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
      hint: `give a readable file as ${what} in [state] url (or unset it)`,
    });
  }
}

/** Whether the mode starts with TLS: prefer and stronger. */
export function tlsFirst(mode: SslMode): boolean {
  return mode !== 'disable' && mode !== 'allow';
}

/**
 * Node's TLS options for a TLS connection in this mode (reads the certificate files: ConfigInvalid when one
 * cannot be read). pg adds the socket and the server name.
 */
export function tlsOptions(s: PgSsl): ConnectionOptions {
  const o: ConnectionOptions = {};
  if (s.cert) o.cert = readPem(s.cert, 'sslcert');
  if (s.key) o.key = readPem(s.key, 'sslkey');
  const ca = s.rootcert && s.rootcert !== 'system' ? readPem(s.rootcert, 'sslrootcert') : undefined;
  if (ca !== undefined) o.ca = ca;
  const verify = s.mode === 'verify-ca' || s.mode === 'verify-full' || (s.mode === 'require' && s.rootcert !== null);
  if (!verify) o.rejectUnauthorized = false;
  // verify-ca (and require with a root certificate): the chain, not the host name.
  else if (s.mode !== 'verify-full') o.checkServerIdentity = () => undefined;
  return o;
}

const NO_SSL = 'The server does not support SSL connections';

/** The server answered the SSL request with "no" (pg ends that connection). */
function serverHasNoSsl(e: unknown): boolean {
  return e instanceof Error && e.message === NO_SSL;
}

/** A failure of the TLS layer: the certificate, the host name, the handshake. */
export function tlsFailure(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  if (
    typeof code === 'string' &&
    /^(ERR_TLS_|ERR_SSL_|EPROTO$|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_|CERT_|HOSTNAME_MISMATCH|ERR_OSSL_)/.test(code)
  )
    return true;
  return e instanceof Error && (e.message === NO_SSL || /error establishing an SSL connection/.test(e.message));
}

/** The server's pg_hba.conf refused the connection (28000): libpq then tries the other encryption. */
function hbaRefused(e: unknown): boolean {
  return (e as { code?: unknown })?.code === '28000';
}

/**
 * What libpq's `allow` and `prefer` do after a failed connection made with (`tls`) or without TLS: try once
 * more the other way. `prefer` falls back to plain when the server has no SSL, the handshake failed or
 * pg_hba.conf refused the TLS connection; `allow` goes to TLS when pg_hba.conf refused the plain one.
 */
export function fallBack(mode: SslMode, tls: boolean, e: unknown): boolean {
  if (mode === 'prefer') return tls && (serverHasNoSsl(e) || tlsFailure(e) || hbaRefused(e));
  if (mode === 'allow') return tls ? serverHasNoSsl(e) : hbaRefused(e);
  return false;
}

/**
 * A hint for a connection that failed because of SSL, or undefined: a certificate that does not verify, a
 * server without SSL asked for it, a server that accepts only SSL connections.
 */
export function sslHint(e: unknown, s: PgSsl | undefined): string | undefined {
  const mode = s ? `sslmode=${s.mode} (${s.from})` : 'the sslmode';
  if (serverHasNoSsl(e))
    return `the server does not accept SSL connections but ${mode} requires SSL: use sslmode=prefer (the default) or turn ssl on in the server`;
  if (tlsFailure(e))
    return `the server's certificate did not pass ${mode}: give its CA with sslrootcert=<file> in [state] url (PGSSLROOTCERT), or use sslmode=require to encrypt without verifying it`;
  const msg = e instanceof Error ? e.message : '';
  if (hbaRefused(e) && /no encryption|SSL off/i.test(msg))
    return `the server accepts only SSL connections and ${mode} does not use SSL: use sslmode=prefer (the default) or require`;
  return undefined;
}
