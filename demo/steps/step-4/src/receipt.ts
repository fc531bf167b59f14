import { cartTotal, type CartLine } from './cart';
import { formatCents } from './format';
import { receiptHeader } from './header';

/** One line per cart line, then the total. */
export function printReceipt(shop: string, lines: CartLine[]): string {
  const body = lines.map((l) => `${l.quantity} x ${l.name}  ${formatCents(l.unit)}`);
  return [...receiptHeader(shop), ...body, `TOTAL  ${formatCents(cartTotal(lines))}`].join('\n');
}
