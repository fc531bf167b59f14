/**
 * Bounds of the numbers the state library takes from its caller (issue 11): a lease is 1 s to
 * MAX_LEASE_SECONDS (366 days) whatever its source — the config, an environment override (checked by the
 * config loader, naming the variable) or an operation's `lease_seconds` — and `max_attempts` is 1 to
 * CONFIG_MAX.state.max_attempts. Without the bound a huge lease stores a timestamp past year 9999 that
 * sorts before every real time (the claim counts as expired at once), or crashes the date arithmetic.
 */
import { CONFIG_MAX, MAX_LEASE_SECONDS } from '../config/defaults.js';
import { TugError } from '../contract/errors.js';
import type { StateConfig } from './context.js';

const inRange = (v: unknown, max: number): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= max;

/** The configuration handed to a state context (ConfigInvalid naming the key when out of bounds). */
export function checkStateConfig(config: StateConfig): void {
  for (const key of ['lease_seconds', 'max_attempts'] as const) {
    const v = config.state[key];
    const max = CONFIG_MAX.state[key];
    if (!inRange(v, max)) {
      throw new TugError('ConfigInvalid', {
        source: 'configuration',
        key: `state.${key}`,
        reason: `state.${key} must be an integer from 1 to ${max}, got ${JSON.stringify(v)}`,
      });
    }
  }
}

/** The lease of a claim or heartbeat: the operation's `lease_seconds`, else the configured one. */
export function leaseSeconds(config: StateConfig, given: number | undefined): number {
  if (given === undefined) return config.state.lease_seconds;
  if (!inRange(given, MAX_LEASE_SECONDS)) {
    throw new TugError('InvalidArgument', {
      reason: `lease_seconds must be an integer from 1 to ${MAX_LEASE_SECONDS} (366 days), got ${JSON.stringify(given)}`,
      argument: 'lease_seconds',
    });
  }
  return given;
}
