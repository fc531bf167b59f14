import { formatPrice } from './format';
import { price } from './price';
import { printReceipt } from './receipt';

const lines = [
  { name: 'tea', unit: price(350), quantity: 2 },
  { name: 'scone', unit: price(275), quantity: 1 },
];

export const receipt = printReceipt('tugcode tea room', lines);
export const cheapest = formatPrice(price(Math.min(...lines.map((l) => l.unit.cents))));
