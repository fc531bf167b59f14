import type { Price } from './price';

/** `1234` cents → `12.34 EUR`. */
export function formatCents(p: Price): string {
  return `${(p.cents / 100).toFixed(2)} ${p.currency}`;
}
