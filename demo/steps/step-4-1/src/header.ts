/** The first lines of every receipt. */
export function receiptHeader(shop: string): string[] {
  return [shop.toUpperCase(), '-'.repeat(shop.length)];
}
