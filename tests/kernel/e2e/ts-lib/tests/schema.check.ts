import { s, ValidationError, type Infer } from '../src';
import { equal } from './assert';

const user = s.object({ name: s.string().min(1), age: s.number(), tags: s.array(s.string()), admin: s.boolean().optional() });
type User = Infer<typeof user>;

export const tests = {
  'parses a valid object'() {
    const r = user.parse({ name: 'ada', age: 36, tags: ['x'] });
    equal(r.ok, true);
    if (r.ok) {
      const u: User = r.value;
      equal(u.name, 'ada');
    }
  },
  'reports the path of the first error'() {
    const r = user.parse({ name: 'ada', age: 36, tags: ['x', 2] });
    equal(r.ok, false);
    if (!r.ok) {
      equal(r.error instanceof ValidationError, true);
      equal(r.error.describe(), 'tags.1: expected a string');
    }
  },
  'checks with a type guard'() {
    equal(s.number().check(3), true);
    equal(s.number().check('3'), false);
  },
};
