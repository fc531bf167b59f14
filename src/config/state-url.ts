/**
 * `[state] url` read without connecting (docs/state.md §8): checked when the configuration loads, so a URL
 * that can never work is ConfigInvalid at once (and `doctor`'s config check, the MCP server's start-up
 * warning, every command say so), and read again by the PostgreSQL store for its target. No message here
 * ever quotes the URL: its user name and password may be in it, encoded or not.
 */
import { TugError } from '../contract/errors.js';

export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;

/** How the setting is named in messages: where it came from and the words for a fix. */
export interface UrlSource {
  /** `TUGCODE_STATE_URL`, `.tugtool/config.toml`, or `state.url` (a library caller). */
  source: string;
  /** The fix's subject: `TUGCODE_STATE_URL`, `[state] url in .tugtool/config.toml`, `state.url`. */
  setting: string;
  /** How to drop it: `unset it` / `delete the key`. */
  drop: string;
  /** What the reason calls it: `state.url` in a file, `the URL` where the source already names it. */
  subject: string;
}

export const URL_FROM_LIBRARY: UrlSource = {
  source: 'state.url',
  setting: 'state.url',
  drop: 'leave it empty',
  subject: 'the URL',
};

/** The parts of a PostgreSQL URL, percent-decoded (null: not in the URL). */
export interface StateUrl {
  url: URL;
  user: string | null;
  password: string | null;
  /** Without IPv6 brackets. */
  hostname: string | null;
  /** The path's database name ('' when the URL names none). */
  database: string;
}

const SHAPE = 'postgres://user:password@host:port/database';
const ENCODE =
  'percent-encode the special characters of the user name and password: @ as %40, # as %23, ? as %3F, / as %2F, % as %25';

/**
 * Parses and checks a PostgreSQL URL: the scheme, the percent-encoding of every part, no raw `@`, `#`, `?`
 * or `/` inside the user name or password (the parse would take the rest of the password for the host, the
 * port, the database or a fragment, and print it in messages), and the `sslmode` parameter.
 */
export function parseStateUrl(raw: string, from: UrlSource = URL_FROM_LIBRARY): StateUrl {
  const refuse = (reason: string, hint: string): never => {
    throw new TugError('ConfigInvalid', {
      source: from.source,
      key: 'state.url',
      reason: `${from.subject} ${reason}`,
      hint,
    });
  };
  const encode = `in ${from.setting}, ${ENCODE}`;
  const fix = `fix ${from.setting} (${SHAPE}), or ${from.drop} to use the embedded .tugtool/state.db`;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return refuse(`is not a valid URL (expected ${SHAPE})`, `${fix}; ${ENCODE}`);
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    return refuse(
      `has the unsupported scheme ${JSON.stringify(u.protocol)}: expected postgres:// or postgresql://`,
      fix,
    );
  }
  // What the parse made of the text, checked against the raw text: an `@` of the password left raw splits
  // the authority elsewhere than the writer meant (libpq takes the first `@`, the WHATWG parse the last).
  const rest = /^[a-z]+:\/\/(.*)$/is.exec(raw)?.[1];
  if (rest !== undefined) {
    const end = rest.search(/[/?#]/);
    const authority = end < 0 ? rest : rest.slice(0, end);
    const path = end < 0 ? '' : rest.slice(end).split(/[?#]/)[0]!;
    const keys = [...u.searchParams.keys()];
    if ((authority.match(/@/g) ?? []).length > 1 || path.includes('@') || keys.some((k) => /[@/]/.test(k))) {
      return refuse(
        'has an @ outside the one that ends the user name and password: percent-encode @ in the password as %40',
        `${encode}; or give the password in PGPASSWORD or ~/.pgpass`,
      );
    }
    if (raw.includes('#')) {
      return refuse(
        'has a # (a PostgreSQL URL has no fragment): percent-encode # in the password as %23',
        `${encode}; or give the password in PGPASSWORD or ~/.pgpass`,
      );
    }
  }
  const decode = (part: string, what: string): string => {
    try {
      return decodeURIComponent(part);
    } catch {
      return refuse(`has a % in ${what} that does not start a percent-encoded character: write % as %25`, encode);
    }
  };
  const password = u.password ? decode(u.password, 'the password') : null;
  const user = u.username ? decode(u.username, 'the user name') : null;
  const hostname = u.hostname ? decode(u.hostname, 'the host').replace(/^\[(.+)\]$/, '$1') : null;
  const database = decode(u.pathname.replace(/^\//, ''), 'the database name');
  const mode = u.searchParams.get('sslmode');
  if (mode && !(SSL_MODES as readonly string[]).includes(mode)) {
    refuse(
      `has an invalid sslmode ${JSON.stringify(mode)}: expected one of ${SSL_MODES.join(', ')}`,
      `set sslmode in ${from.setting} to one of ${SSL_MODES.join(', ')} (prefer, libpq's default, when it is left out)`,
    );
  }
  return { url: u, user, password, hostname, database };
}

/**
 * The URL with its password left out (the authority's and a `password=` parameter): the address for a process
 * that must not log in itself, an agent whose state commands go through the driver (docs/agents.md §1.5). Text
 * that is no URL gives the empty string: it could be anything, a password included.
 */
export function withoutPassword(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return '';
  }
  u.password = '';
  u.searchParams.delete('password');
  return u.toString();
}
