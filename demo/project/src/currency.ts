/** The one currency the shop sells in. */
export const CURRENCY = 'EUR';
