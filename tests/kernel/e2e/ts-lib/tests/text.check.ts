import { formatValue, table, describeList, Store, s, Card } from '../src';
import { equal } from './assert';

export const tests = {
  'formats through every overload'() {
    equal(formatValue(3), '3');
    equal(formatValue(3.14159, 2), '3.14');
    equal(formatValue(['a', 'b']), 'a, b');
    equal(describeList(['Hello World', 'A B']), '2 items: hello-world / a-b');
  },
  'aligns tables'() {
    equal(table([['a', 'bb'], ['ccc', 'd']]), 'a   | bb\nccc | d');
  },
  'stores validated values and emits changes'() {
    const st = new Store(s.number());
    const seen: number[] = [];
    st.on('change', (c) => seen.push(c.value));
    st.put('x', 4);
    equal(seen, [4]);
    let threw = false;
    try {
      st.put('y', 'no');
    } catch {
      threw = true;
    }
    equal(threw, true);
  },
  'renders jsx components'() {
    equal(Card({ title: 'T', amount: 2 }), '<div class="card">T<span class="price">2.00</span></div>');
  },
};
