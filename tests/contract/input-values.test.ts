/**
 * A refused value is quoted in the message, cut short: a 100 000-character flag or a deeply nested tool
 * argument gives a short InvalidArgument, never a message as long as the value or an InternalError.
 */
import { describe, expect, it } from 'vitest';
import { TugError } from '../../src/contract/errors.js';
import { validateInput } from '../../src/contract/inputs/fields.js';
import { stateClaim } from '../../src/contract/inputs/state.js';

function refusal(raw: Record<string, unknown>, naming: 'cli' | 'tool'): TugError {
  try {
    validateInput(stateClaim, { plan: 'demo', worktree: '/w', ...raw }, naming);
  } catch (e) {
    return e as TugError;
  }
  throw new Error('accepted');
}

describe('a refused value in the message', () => {
  it('is cut short', () => {
    const e = refusal({ lease_seconds: '7'.repeat(100_000) + 'x' }, 'cli');
    expect(e.code).toBe('InvalidArgument');
    expect(e.message.length).toBeLessThan(300);
  });

  it('is InvalidArgument even when it nests too deep to print', () => {
    let deep: unknown = {};
    for (let i = 0; i < 1_000_000; i++) deep = { a: deep };
    const e = refusal({ lease_seconds: deep }, 'tool');
    expect(e).toBeInstanceOf(TugError);
    expect(e.code).toBe('InvalidArgument');
  });
});
