/**
 * The ledger's one bound rule (boundUsage, docs/run.md §7.1) against what arithmetic on absurd reports can
 * make: codex's cached input taken from its input when both are past 1e308 (Infinity - Infinity), and a
 * `TUG_USAGE_OUT` count past the bound that is not an integer. Pure functions, no agent needed.
 */
import { describe, expect, it } from 'vitest';
import { boundUsage, emptyUsage, USAGE_MAX_COST_USD, USAGE_MAX_TOKENS } from '../../src/contract/usage.js';
import { CodexTranscript, parseUsageFile } from '../../src/run/usage.js';

const turn = (usage: string) => `{"type":"turn.completed","usage":${usage}}`;

describe('usage past its bound', () => {
  it('codex: input and cached input both past 1e308 count as the bound, never NaN', () => {
    const t = new CodexTranscript();
    t.line(turn('{"input_tokens": 1e309, "cached_input_tokens": 1e309, "output_tokens": 3}'));
    const u = t.usage()!;
    expect(Number.isNaN(u.input_tokens)).toBe(false);
    const { usage, capped } = boundUsage(u);
    expect(usage).toMatchObject({
      input_tokens: USAGE_MAX_TOKENS,
      cache_read_tokens: USAGE_MAX_TOKENS,
      output_tokens: 3,
    });
    expect(capped.sort()).toEqual(['cache_read_tokens', 'input_tokens']);
  });

  it('codex: a cached count past the bound beside a real input leaves no negative input', () => {
    const t = new CodexTranscript();
    t.line(turn('{"input_tokens": 100, "cached_input_tokens": 1e309}'));
    expect(t.usage()).toMatchObject({ input_tokens: 0, cache_read_tokens: Infinity });
    expect(boundUsage(t.usage()!).usage).toMatchObject({ input_tokens: 0, cache_read_tokens: USAGE_MAX_TOKENS });
  });

  it('boundUsage: any value that is not a finite number counts as the bound', () => {
    const { usage, capped } = boundUsage({ ...emptyUsage(), output_tokens: NaN, input_tokens: 7, cost_usd: NaN });
    expect(usage).toMatchObject({ output_tokens: USAGE_MAX_TOKENS, input_tokens: 7, cost_usd: USAGE_MAX_COST_USD });
    expect(capped).toEqual(['output_tokens', 'cost_usd']);
  });

  it('TUG_USAGE_OUT: past the bound any number counts (1.5e12); below it a count must be an integer', () => {
    expect(parseUsageFile('{"input_tokens": 1.5e12}')).toEqual({ usage: { ...emptyUsage(), input_tokens: 1.5e12 } });
    expect(boundUsage({ ...emptyUsage(), input_tokens: 1.5e12 }).usage.input_tokens).toBe(USAGE_MAX_TOKENS);
    expect(parseUsageFile('{"input_tokens": 1.5}')).toEqual({
      reason: `input_tokens must be a non-negative integer (past ${USAGE_MAX_TOKENS} any number counts as that bound)`,
    });
  });
});
