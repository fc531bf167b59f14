/** The ledger's shapes in JSON output (docs/run.md §7, docs/state.md §2): one report, and totals. */
import { z } from 'zod';
import { USAGE_ROLES } from '../usage.js';

const count = z.number().int().nonnegative();
const usd = z.number().nonnegative();

/** One run's usage as reported: every field null when the run did not say. */
export const usageSchema = z
  .object({
    input_tokens: count.nullable(),
    output_tokens: count.nullable(),
    cache_read_tokens: count.nullable(),
    cache_write_tokens: count.nullable(),
    cost_usd: usd.nullable(),
  })
  .strict();

const roleTotals = z.object({ tokens: count, cost_usd: usd.nullable(), reports: count }).strict();

/** Sums of reports (contract/usage.ts `UsageTotals`). */
export const usageTotalsSchema = z
  .object({
    input_tokens: count,
    output_tokens: count,
    cache_read_tokens: count,
    cache_write_tokens: count,
    tokens: count,
    cost_usd: usd.nullable(),
    reports: count,
    unpriced: count,
    by_role: z.object(Object.fromEntries(USAGE_ROLES.map((r) => [r, roleTotals.optional()]))).strict(),
  })
  .strict();
