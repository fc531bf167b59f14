import { Report, s } from '../src';
import { equal } from './assert';

export const tests = {
  'renders a report of valid rows'() {
    const html = Report({
      title: 'Prices',
      schema: s.object({ item: s.string(), price: s.number() }),
      rows: [{ item: 'a very long item name indeed', price: 2 }, { item: 'b', price: 'x' }],
      columns: [
        { title: 'Item', cell: (r) => r.item },
        { title: 'Price', cell: (r) => r.price },
      ],
    });
    equal(
      html,
      '<div class="report"><p class="title">Prices</p><table><tr><th>Item</th><th>Price</th></tr><tr><td class="text">a very long item…</td><td class="num">2.00</td></tr></table><p class="rejected">1 rejected</p></div>',
    );
  },
};
