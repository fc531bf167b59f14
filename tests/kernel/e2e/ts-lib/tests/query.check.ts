import { parseQuery, show, fieldsOf, tokenize, QuerySyntaxError, Collection, globMatch, s } from '../src';
import { equal } from './assert';

const person = s.object({ name: s.string(), age: s.number(), tags: s.array(s.string()), city: s.string() });

export const tests = {
  'parses with precedence'() {
    const e = parseQuery('age >= 18 and (name ~ "a*" or tags has "x") and not city = "Oslo"');
    equal(show(e), '((age >= 18 and (name ~ "a*" or tags has "x")) and not city = "Oslo")');
    equal(fieldsOf(e), ['age', 'city', 'name', 'tags']);
    equal(tokenize('a.b != "x\\"y"').map((t) => t.kind), ['ident', 'op', 'string', 'eof']);
  },
  'reports syntax errors with offsets'() {
    let offset = -1;
    try {
      parseQuery('age >= ');
    } catch (e) {
      if (e instanceof QuerySyntaxError) offset = e.offset;
    }
    equal(offset, 7);
  },
  'filters and sorts a validated collection'() {
    const c = new Collection(person);
    c.insertAll([
      { name: 'ada', age: 36, tags: ['x'], city: 'London' },
      { name: 'bob', age: 17, tags: [], city: 'Oslo' },
      { name: 'anna', age: 52, tags: ['y'], city: 'Oslo' },
    ]);
    equal(c.where('age >= 18 and name ~ "a*"').map((p) => p.name), ['ada', 'anna']);
    equal(c.where('city in ["Oslo", "Rome"] and not tags has "y"').map((p) => p.name), ['bob']);
    equal(c.orderBy('age', 'desc').map((p) => p.age), [52, 36, 17]);
    equal(c.insert({ name: 'x', age: 'old', tags: [], city: '' }).ok, false);
    equal([c.count(), c.validateAll().ok], [3, true]);
    equal(globMatch('a?c*', 'ABCDE'), true);
  },
};
