import { price, type Price } from './price';

export interface CartLine {
  name: string;
  unit: Price;
  quantity: number;
}

/** The sum of every line's unit price times its quantity. */
export function cartTotal(lines: CartLine[]): Price {
  return price(lines.reduce((sum, line) => sum + line.unit.cents * line.quantity, 0));
}
