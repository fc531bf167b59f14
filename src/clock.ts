/**
 * The one clock (docs/state.md §1). Nothing else reads the system time: tests fix "now" with
 * TUGCODE_NOW, so lease expiry is tested without sleeping.
 * Timestamps are fixed-width ISO 8601 UTC with milliseconds, so string order is time order.
 */
import { TugError } from './contract/errors.js';

export interface Clock {
  /** Current time as `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
  now(): string;
  nowMs(): number;
}

export function formatTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

/** Parse any ISO 8601 instant; returns epoch milliseconds or null. */
export function parseInstant(text: string): number | null {
  const t = text.trim();
  // Require a date and a time with an explicit zone, so "2026-01-01" (a date, not an instant) is refused.
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.exec(t);
  if (!m) return null;
  // Date.parse rolls 30 February over to 2 March: the calendar date must exist as written.
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1 || d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return null;
  const ms = Date.parse(t.replace(' ', 'T'));
  return Number.isFinite(ms) ? ms : null;
}

export function systemClock(): Clock {
  return { now: () => new Date().toISOString(), nowMs: () => Date.now() };
}

export function fixedClock(ms: number): Clock {
  return { now: () => formatTimestamp(ms), nowMs: () => ms };
}

/** The clock of this process: TUGCODE_NOW when set (an invalid value is ConfigInvalid), else the system. */
export function clockFromEnv(env: NodeJS.ProcessEnv = process.env): Clock {
  const raw = env.TUGCODE_NOW;
  if (raw === undefined || raw === '') return systemClock();
  const ms = parseInstant(raw);
  // Timestamps stay fixed-width (string order is time order), also after a lease or a timeout is added.
  if (ms === null || ms < 0 || ms >= Date.UTC(9000, 0, 1)) {
    throw new TugError('ConfigInvalid', {
      source: 'TUGCODE_NOW',
      reason:
        ms === null
          ? `${JSON.stringify(raw)} is not an ISO 8601 instant`
          : `${JSON.stringify(raw)} is outside 1970-01-01 to 8999-12-31 (a lease or timeout added to it must stay a 4-digit year)`,
      hint: 'use a form like 2026-02-23T12:00:00.000Z',
    });
  }
  return fixedClock(ms);
}

export function addSeconds(iso: string, seconds: number): string {
  return formatTimestamp(Date.parse(iso) + seconds * 1000);
}

/** "1h 45m", "5m", "30s", "2d 3h": a short human duration. */
export function humanDuration(ms: number): string {
  const abs = Math.abs(ms);
  const sec = Math.floor(abs / 1000);
  const d = Math.floor(sec / 86400);
  const h = Math.floor((sec % 86400) / 3600);
  const m = Math.floor((sec % 3600) / 60);
  if (d > 0) return h > 0 ? `${d}d ${h}h` : `${d}d`;
  if (h > 0) return m > 0 ? `${h}h ${m}m` : `${h}h`;
  if (m > 0) return `${m}m`;
  return `${sec}s`;
}
