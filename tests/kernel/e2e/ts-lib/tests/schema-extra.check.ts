import { s, formats, compareSemVer, refine, transform, withDefault, daysInMonth, type Infer, type Schema } from '../src';
import { equal } from './assert';

const shape = s.union(s.literal('circle'), s.literal('square'));
const event = s.object({ kind: s.enum('click', 'key'), at: s.tuple(s.number(), s.number()), tags: s.set(s.string()) });
type Event = Infer<typeof event>;

interface Tree {
  name: string;
  children: Tree[];
}
const tree: Schema<Tree> = s.lazy(() => s.object({ name: s.string(), children: s.array(tree) }));

export const tests = {
  'parses literals, enums and unions'() {
    equal(shape.parse('circle'), { ok: true, value: 'circle' });
    equal(shape.parse('oval').ok, false);
    equal(s.enum('a', 'b', 'c').exclude('b').parse('b').ok, false);
  },
  'parses records, tuples and sets'() {
    const r = event.parse({ kind: 'click', at: [1, 2], tags: ['x', 'y'] });
    equal(r.ok, true);
    if (r.ok) {
      const e: Event = r.value;
      equal([e.kind, e.at, [...e.tags]], ['click', [1, 2], ['x', 'y']]);
    }
    const dup = event.parse({ kind: 'key', at: [1, 2], tags: ['x', 'x'] });
    equal(!dup.ok && dup.error.describe(), 'tags.1: duplicate value');
    equal(s.record(s.number(), /^[a-z]+$/).parse({ ab: 1, C: 2 }).ok, false);
    equal(s.tuple(s.string()).parse(['a', 'b']).ok, false);
  },
  'transforms, refines and defaults'() {
    const upper = transform(s.string(), (x) => x.toUpperCase());
    equal(upper.parse('ab'), { ok: true, value: 'AB' });
    const even = refine(s.number(), (n) => n % 2 === 0, 'expected an even number');
    equal(!even.parse(3).ok && even.parse(3).ok, false);
    equal(withDefault(s.number(), () => 9).parse(undefined), { ok: true, value: 9 });
    equal(s.coerceNumber().parse(' 42 '), { ok: true, value: 42 });
  },
  'parses recursive schemas'() {
    equal(tree.parse({ name: 'a', children: [{ name: 'b', children: [] }] }).ok, true);
    const bad = tree.parse({ name: 'a', children: [{ name: 1, children: [] }] });
    equal(!bad.ok && bad.error.describe(), 'children.0.name: expected a string');
  },
  'checks formats'() {
    equal(formats.email().check('a@b.co'), true);
    equal(formats.uuid().check('123e4567-e89b-42d3-a456-426614174000'), true);
    equal(formats.date().parse('2024-02-29').ok, true);
    equal(formats.date().parse('2023-02-29').ok, false);
    equal(daysInMonth(1900, 2), 28);
    const v = (t: string) => {
      const r = formats.semver().parse(t);
      if (!r.ok) throw r.error;
      return r.value;
    };
    equal(compareSemVer(v('1.2.3-rc.1'), v('1.2.3')) < 0, true);
    equal(compareSemVer(v('1.10.0'), v('1.9.9')) > 0, true);
  },
  'derives object schemas'() {
    const base = s.object({ id: s.number(), name: s.string(), email: formats.email() });
    equal(base.pick('id').parse({ id: 1, name: 2 }), { ok: true, value: { id: 1 } });
    equal(base.omit('email').parse({ id: 1, name: 'a' }).ok, true);
    equal(base.extend({ id: s.string() }).parse({ id: 'x', name: 'a', email: 'a@b.cd' }).ok, true);
    equal(base.partial().parse({}).ok, true);
    const strict = base.pick('id').strict().parse({ id: 1, extra: true });
    equal(!strict.ok && strict.error.describe(), 'extra: unknown key');
  },
};
