/** Formats numbers, dates and lists. */
export function formatValue(value: number): string;
export function formatValue(value: number, digits: number): string;
export function formatValue(value: string[], separator?: string): string;
export function formatValue(value: number | string[], extra?: number | string): string {
  if (Array.isArray(value)) return value.join(typeof extra === 'string' ? extra : ', ');
  return typeof extra === 'number' ? value.toFixed(extra) : String(value);
}

export function pad(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((c, i) => pad(c, widths[i] ?? 0)).join(' | ').trimEnd()).join('\n');
}
