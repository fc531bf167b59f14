/**
 * A value as an error message quotes it: its JSON, cut to `max` code points (never inside a character,
 * docs/output.md §5). The value may come from a 100 000-character flag or a document that nests too deep
 * for JSON.stringify; neither may make the message as long as the value, or the error an InternalError.
 */
export function quoted(v: unknown, max = 80): string {
  let text: string;
  try {
    text = JSON.stringify(v) ?? String(v);
  } catch {
    return 'a value nested too deep to print';
  }
  return cut(text, max);
}

/** `text` cut to `max` code points, with `…` when it was cut. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = [...text.slice(0, max * 2 + 2)];
  return head.length > max ? `${head.slice(0, max).join('')}…` : text;
}
