/**
 * `state import` of a hostile document: values nested too deep to walk or print, and values long enough
 * to flood the message, are InvalidArgument with a short message, never InternalError (docs/state.md §8).
 */
import { describe, expect, it } from 'vitest';
import { parseExportDocument } from '../../src/state/export-check.js';
import { TugError } from '../../src/contract/errors.js';
import { st } from './cli-helpers.js';
import { planRepo } from './helpers.js';

const SQLITE = { TUGCODE_STATE_URL: undefined };

/** `{"a":{"a":…{}}}`, `depth` deep, as text: JSON.stringify itself would overflow the stack. */
const nested = (depth: number) => `${'{"a":'.repeat(depth)}{}${'}'.repeat(depth)}`;

async function refusal(doc: unknown, text = JSON.stringify(doc)): Promise<TugError> {
  try {
    await parseExportDocument(text);
  } catch (e) {
    return e as TugError;
  }
  throw new Error('accepted');
}

describe('state import of a hostile document', () => {
  const root = planRepo();
  st(root, ['init', 'demo'], { env: SQLITE });
  const doc = st(root, ['export', 'demo'], { env: SQLITE }).json.document;

  it('refuses event details nested too deep, and a version too deep to print', async () => {
    const deep = structuredClone(doc);
    deep.events[0].details = { x: 'DEEP' };
    const e = await refusal(null, JSON.stringify(deep).replace('"DEEP"', nested(100_000)));
    expect([e.code, e.message]).toEqual([
      'InvalidArgument',
      expect.stringContaining('events[0].details: nested deeper'),
    ]);
    const v = await (async () => {
      try {
        await parseExportDocument(
          `{"format":"tugcode-state-export","version":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
        );
      } catch (err) {
        return err as TugError;
      }
    })();
    expect(v?.code).toBe('InvalidArgument');
  });

  it('cuts a problem quoting a 100 000-character value', async () => {
    const long = structuredClone(doc);
    long.steps[1].anchor = 'x'.repeat(100_000);
    const e = await refusal(long);
    expect(e.code).toBe('InvalidArgument');
    expect(e.message.length).toBeLessThan(3000);
  });
});
