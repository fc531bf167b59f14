import { describe, expect, it } from 'vitest';
import { isAnchor, isValidSlug, normalizeAnchor, requireAnchor } from '../../src/plan/anchors.js';
import { slugOfPlan } from '../../src/gitflow/naming.js';

describe('the one anchor normalizer', () => {
  it('removes one leading # and surrounding whitespace', () => {
    expect(['step-1', '#step-1', ' #step-1 ', '##step-1'].map(normalizeAnchor)).toEqual([
      'step-1',
      'step-1',
      'step-1',
      '#step-1',
    ]);
  });

  it('requireAnchor refuses what is not an anchor with InvalidArgument', () => {
    expect(requireAnchor('#step-2-1')).toBe('step-2-1');
    for (const bad of ['', '#', '##step-1', 'Step-1', 'step 1', '-x', 'a\0b']) {
      expect(() => requireAnchor(bad)).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
    }
    expect(isAnchor('step-1')).toBe(true);
    expect(isAnchor('#step-1')).toBe(false);
  });
});

describe('the one slug rule', () => {
  it('is the rule of plan arguments and of branch names', () => {
    for (const s of ['foo', 'a-b', '0', 'x'.repeat(64)]) {
      expect(isValidSlug(s)).toBe(true);
      expect(slugOfPlan(`.tugtool/tugplan-${s}.md`)).toBe(s);
    }
    for (const s of ['a--b', '-a', 'A', 'x'.repeat(65), 'a_b']) {
      expect(isValidSlug(s)).toBe(false);
      expect(() => slugOfPlan(`.tugtool/tugplan-${s}.md`)).toThrow(
        expect.objectContaining({ code: 'InvalidArgument' }),
      );
    }
  });
});
