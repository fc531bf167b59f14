/**
 * Who may talk to the board (docs/board.md §2): the URL's token on every request (401 without it), a `Host`
 * naming the board's own address and port (403 otherwise: a DNS-rebinding page names its own host), and no
 * foreign `Origin` (403: another site's page in the same browser). Pure functions over the request's
 * headers, so the rules are tested without a server.
 */
import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

/** Whether `host` (an address or name given to --host) is this machine's loopback. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** `host:port` as a `Host` header writes it (IPv6 in brackets). */
export function hostPort(host: string, port: number): string {
  const h = host.replace(/^\[|\]$/g, '');
  return `${isIP(h) === 6 ? `[${h}]` : h}:${port}`;
}

/**
 * The `Host` values the board answers to: its loopback names, and, bound elsewhere, the address it was
 * given (for a wildcard `0.0.0.0` / `::`, every address of this machine's interfaces).
 */
export function allowedHosts(bind: string, port: number): Set<string> {
  const names = new Set(['127.0.0.1', 'localhost', '::1']);
  const h = bind.replace(/^\[|\]$/g, '');
  if (h === '0.0.0.0' || h === '::') {
    for (const list of Object.values(networkInterfaces()))
      for (const a of list ?? []) if (!a.address.startsWith('fe80')) names.add(a.address);
  } else names.add(h);
  return new Set([...names].map((n) => hostPort(n, port).toLowerCase()));
}

export type Refusal = {
  status: 401 | 403;
  code: 'Unauthorized' | 'ForbiddenHost' | 'ForbiddenOrigin';
  message: string;
};

/** Equal tokens, compared in constant time. */
export function tokenMatches(given: string | null | undefined, token: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The refusal of a request, or null when it may go on. `given`: the token it carried (the `token` query
 * parameter or the `X-Tug-Token` header). Host and Origin come first: a page on another site learns nothing,
 * not even whether its guess of the token was wrong.
 */
export function refusal(
  headers: { host?: string | undefined; origin?: string | undefined; 'sec-fetch-site'?: string | undefined },
  given: string | null | undefined,
  o: { hosts: Set<string>; token: string },
): Refusal | null {
  const host = (headers.host ?? '').toLowerCase();
  if (!o.hosts.has(host))
    return {
      status: 403,
      code: 'ForbiddenHost',
      message: `Host ${JSON.stringify(headers.host ?? '')} is not this board's address`,
    };
  const origin = headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== `http://${host}`)
    return { status: 403, code: 'ForbiddenOrigin', message: `Origin ${JSON.stringify(origin)} is not this board` };
  if (headers['sec-fetch-site'] === 'cross-site')
    return { status: 403, code: 'ForbiddenOrigin', message: 'a cross-site request' };
  if (!tokenMatches(given, o.token))
    return {
      status: 401,
      code: 'Unauthorized',
      message: "the request does not carry the board's token (open the URL tugcode printed)",
    };
  return null;
}
