/**
 * The Tug-* trailer keys and the log formats built from them (src/git/trailers.ts, their one owner): the
 * formats are what git is asked for, pinned letter for letter.
 */
import { describe, expect, it } from 'vitest';
import {
  isTugTrailerKey,
  stepTrailerGrep,
  TRAILER_LOG_FORMAT,
  trailersFormat,
  TUG_STEP,
  TUG_TRAILER_KEYS,
} from '../../src/git/trailers.js';

describe('trailer keys and formats', () => {
  it('builds the formats git is asked for', () => {
    expect(TUG_TRAILER_KEYS).toEqual(['Tug-Step', 'Tug-Plan', 'Tug-Refactor']);
    expect(TRAILER_LOG_FORMAT).toBe(
      '%H%x00%ct%x00%(trailers:key=Tug-Step,valueonly,separator=%x1f)%x00%(trailers:key=Tug-Plan,valueonly,separator=%x1f)' +
        '%x00%(trailers:key=Tug-Refactor,valueonly,separator=%x1f)%x1e',
    );
    expect(trailersFormat([TUG_STEP], { valueOnly: true, separator: '%x2C' })).toBe(
      '%(trailers:key=Tug-Step,valueonly,separator=%x2C)',
    );
    expect(trailersFormat(TUG_TRAILER_KEYS, { separator: '%x0a' })).toBe(
      '%(trailers:key=Tug-Step,key=Tug-Plan,key=Tug-Refactor,separator=%x0a)',
    );
    expect(stepTrailerGrep('step-2')).toBe('^Tug-Step: *#?step-2 *$');
  });

  it("knows tugcode's keys in any case, as git compares them", () => {
    for (const k of ['Tug-Step', 'tug-plan', 'TUG-REFACTOR', 'Tug-Anything']) expect(isTugTrailerKey(k), k).toBe(true);
    for (const k of ['Signed-off-by', 'Tugs', 'X-Tug-Step']) expect(isTugTrailerKey(k), k).toBe(false);
  });
});
