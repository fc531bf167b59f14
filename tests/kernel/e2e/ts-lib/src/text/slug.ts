import { formatValue } from './format';

export function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

export function describeList(items: string[]): string {
  return `${items.length} items: ${formatValue(items.map(slugify), ' / ')}`;
}
