/**
 * The ledger's vocabulary (docs/run.md §7, docs/state.md §2): what one agent run used, and the sums the
 * state, the run summary and `tugcode status` show. Data and arithmetic only, so the state library, the
 * config and the driver share one definition.
 *
 * Token kinds follow Anthropic's split: `input_tokens` are the input tokens not read from a cache;
 * `cache_read_tokens` and `cache_write_tokens` are counted apart. A report's field is null when the
 * implementer did not say; sums count a null as 0, and a sum's cost is null when no report had one.
 */

export const USAGE_ROLES = ['implementer', 'reviewer', 'resolver'] as const;
export type UsageRole = (typeof USAGE_ROLES)[number];

export const USAGE_TOKEN_FIELDS = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens'] as const;
export type UsageTokenField = (typeof USAGE_TOKEN_FIELDS)[number];

/**
 * The most one agent run may report (docs/run.md §7.1): of each kind of token, and in dollars. Far beyond
 * any real run (a trillion tokens; a billion dollars), and small enough that every sum of the ledger stays
 * finite and exact: a report of 1e308 dollars would make the plan's total Infinity and spend every budget.
 */
export const USAGE_MAX_TOKENS = 1e12;
export const USAGE_MAX_COST_USD = 1e9;
/**
 * The highest `[run.prices]` price (USD per million tokens): USAGE_MAX_TOKENS of one kind then cost at most
 * USAGE_MAX_COST_USD. Far above any real price; an absurd one (1e300) is refused as the config loads.
 */
export const USAGE_MAX_PRICE = USAGE_MAX_COST_USD / (USAGE_MAX_TOKENS / 1e6);

/** A token count as a report may give it: a non-negative integer of at most USAGE_MAX_TOKENS. */
export const isUsageCount = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= USAGE_MAX_TOKENS;
/** A cost as a report may give it: a non-negative number of at most USAGE_MAX_COST_USD. */
export const isUsageCost = (v: unknown): v is number =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= USAGE_MAX_COST_USD;

/**
 * A count as an agent or `TUG_USAGE_OUT` may report it, before the bound: a non-negative integer, or any
 * number past USAGE_MAX_TOKENS (1.5e12, 1e308, Infinity: boundUsage holds it to the bound). Negative, NaN,
 * or fractional at or below the bound is malformed.
 */
export const isReportedCount = (v: unknown): v is number =>
  typeof v === 'number' && v >= 0 && (Number.isSafeInteger(v) || v > USAGE_MAX_TOKENS);
/** A cost as reported, before the bound: any non-negative number (1e308 and Infinity included). */
export const isReportedCost = (v: unknown): v is number => typeof v === 'number' && v >= 0;

/** One run's usage, as reported (each field null when unknown). */
export type Usage = { [K in UsageTokenField]: number | null } & { cost_usd: number | null };

/** The sum of a role's reports. */
export interface RoleTotals {
  tokens: number;
  cost_usd: number | null;
  reports: number;
}

/** The sum of many reports: a step's, a plan's, a run's. */
export type UsageTotals = { [K in UsageTokenField]: number } & {
  /** All four kinds of tokens together (what `budget_tokens` counts). */
  tokens: number;
  /** USD; null when no report had a cost. */
  cost_usd: number | null;
  /** Reports summed. */
  reports: number;
  /** Reports without a cost (their tokens count, their cost is unknown). */
  unpriced: number;
  by_role: Partial<Record<UsageRole, RoleTotals>>;
};

/** A run's budgets (docs/run.md §7.2); null: none. */
export interface Budgets {
  budgetUsd: number | null;
  budgetTokens: number | null;
}

/** The budgets a run has: each flag over its `[run]` key, 0 meaning none. The run and its dry run read them so. */
export function runBudgets(
  flags: { budget_usd?: number | undefined; budget_tokens?: number | undefined },
  run: { budget_usd: number; budget_tokens: number },
): Budgets {
  return {
    budgetUsd: (flags.budget_usd ?? run.budget_usd) || null,
    budgetTokens: (flags.budget_tokens ?? run.budget_tokens) || null,
  };
}

/** Whether a plan's totals reached a budget: the run claims no more (docs/run.md §7.2). */
export function budgetReachedBy(t: Pick<UsageTotals, 'cost_usd' | 'tokens'>, b: Budgets): boolean {
  return (
    (b.budgetUsd !== null && (t.cost_usd ?? 0) >= b.budgetUsd) ||
    (b.budgetTokens !== null && t.tokens >= b.budgetTokens)
  );
}

/** USD per million tokens of each kind (`[run.prices]`); a report with tokens of a kind left out has no cost. */
export interface Prices {
  input?: number;
  output?: number;
  cache_read?: number;
  cache_write?: number;
}

export function emptyUsage(): Usage {
  return { input_tokens: null, output_tokens: null, cache_read_tokens: null, cache_write_tokens: null, cost_usd: null };
}

export function emptyTotals(): UsageTotals {
  return {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    tokens: 0,
    cost_usd: null,
    reports: 0,
    unpriced: 0,
    by_role: {},
  };
}

/** Whether a report says anything at all. */
export function hasUsage(u: Usage): boolean {
  return USAGE_TOKEN_FIELDS.some((k) => u[k] !== null) || u.cost_usd !== null;
}

/** All four kinds of tokens of one report. */
export function usageTokens(u: Usage): number {
  return USAGE_TOKEN_FIELDS.reduce((n, k) => n + (u[k] ?? 0), 0);
}

/**
 * Dollars rounded to 1e-9: sums of binary floats (0.1 + 0.2) are then the decimal sums people expect, and
 * the same in SQLite, PostgreSQL and JavaScript.
 */
export function roundUsd(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}

/** `t` plus one report of `role` (a new object). */
export function addUsage(t: UsageTotals, role: UsageRole, u: Usage): UsageTotals {
  const out: UsageTotals = { ...t, by_role: { ...t.by_role } };
  for (const k of USAGE_TOKEN_FIELDS) out[k] += u[k] ?? 0;
  const tokens = usageTokens(u);
  out.tokens += tokens;
  out.reports += 1;
  if (u.cost_usd === null) out.unpriced += 1;
  else out.cost_usd = roundUsd((out.cost_usd ?? 0) + u.cost_usd);
  const r = out.by_role[role] ?? { tokens: 0, cost_usd: null, reports: 0 };
  out.by_role[role] = {
    tokens: r.tokens + tokens,
    cost_usd: u.cost_usd === null ? r.cost_usd : roundUsd((r.cost_usd ?? 0) + u.cost_usd),
    reports: r.reports + 1,
  };
  return out;
}

/**
 * The cost of a report that has tokens but no cost, from `[run.prices]` (USD per million tokens); the report
 * as it is when it has a cost already or has no tokens. Never a guess: when a kind it has tokens of has no
 * price, its cost stays null.
 */
export function priced(u: Usage, prices: Prices): Usage {
  if (u.cost_usd !== null || usageTokens(u) === 0) return u;
  const rate: Record<UsageTokenField, number | undefined> = {
    input_tokens: prices.input,
    output_tokens: prices.output,
    cache_read_tokens: prices.cache_read,
    cache_write_tokens: prices.cache_write,
  };
  let cost = 0;
  for (const k of USAGE_TOKEN_FIELDS) {
    const n = u[k] ?? 0;
    if (n === 0) continue;
    const r = rate[k];
    if (r === undefined) return u;
    cost += (n * r) / 1e6;
  }
  return { ...u, cost_usd: roundUsd(cost) };
}

/**
 * The one bound rule of the ledger (docs/run.md §7.1), for every source of a report: a value past its bound
 * (USAGE_MAX_TOKENS, USAGE_MAX_COST_USD) counts as the bound. An absurd report then spends any real budget
 * instead of slipping past it (as an unknown value would), and the sums stay finite and exact. Any value
 * that is not a finite number (NaN included) counts as the bound too: no arithmetic slip makes it blind.
 * `capped`: the fields held, for the caller's warning.
 */
export function boundUsage(u: Usage): { usage: Usage; capped: (UsageTokenField | 'cost_usd')[] } {
  const usage = { ...u };
  const capped: (UsageTokenField | 'cost_usd')[] = [];
  for (const k of USAGE_TOKEN_FIELDS) {
    const v = usage[k];
    if (v !== null && !(Number.isFinite(v) && v <= USAGE_MAX_TOKENS)) {
      usage[k] = USAGE_MAX_TOKENS;
      capped.push(k);
    }
  }
  if (usage.cost_usd !== null && !(Number.isFinite(usage.cost_usd) && usage.cost_usd <= USAGE_MAX_COST_USD)) {
    usage.cost_usd = USAGE_MAX_COST_USD;
    capped.push('cost_usd');
  }
  return { usage, capped };
}

const num = (n: number) => n.toLocaleString('en-US');

/**
 * USD as text: `$0.0003915`, `$12.50` — cents always shown, as people write money (and as the board shows
 * it), further digits when there are any (exact to the 1e-9 the ledger keeps).
 */
export function usdText(x: number): string {
  const r = roundUsd(x);
  const decimals = /\.(\d+)$/.exec(String(r))?.[1]?.length ?? 0;
  return `$${decimals >= 2 ? String(r) : r.toFixed(2)}`;
}

/**
 * One line of totals for people: `15,000 tokens (input 10,000, output 5,000) · $0.25 · 2 runs`, with the
 * cache kinds when there are any, the roles when more than the implementer ran, and the runs whose cost is
 * unknown.
 */
export function usageLine(t: UsageTotals): string {
  const kinds: string[] = [`input ${num(t.input_tokens)}`, `output ${num(t.output_tokens)}`];
  if (t.cache_read_tokens) kinds.push(`cache read ${num(t.cache_read_tokens)}`);
  if (t.cache_write_tokens) kinds.push(`cache write ${num(t.cache_write_tokens)}`);
  const parts = [`${num(t.tokens)} tokens (${kinds.join(', ')})`];
  parts.push(t.cost_usd === null ? 'cost unknown' : usdText(t.cost_usd));
  parts.push(`${t.reports} run${t.reports === 1 ? '' : 's'}`);
  if (t.cost_usd !== null && t.unpriced > 0) parts.push(`${t.unpriced} without a cost`);
  const roles = Object.entries(t.by_role);
  if (roles.length > 1 || (roles.length === 1 && roles[0]![0] !== 'implementer'))
    parts.push(
      roles.map(([r, x]) => `${r} ${num(x.tokens)}${x.cost_usd === null ? '' : ` ${usdText(x.cost_usd)}`}`).join(', '),
    );
  return parts.join(' · ');
}
