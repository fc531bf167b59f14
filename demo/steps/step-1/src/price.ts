import { CURRENCY } from './currency';

/** An amount of money in the smallest unit of its currency. */
export interface Price {
  cents: number;
  currency: string;
}

export function price(cents: number): Price {
  return { cents: Math.round(cents), currency: CURRENCY };
}
