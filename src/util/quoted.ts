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
  const r = truncateCodePoints(text, max);
  return r.truncated ? `${r.text}…` : text;
}

/** Cut to at most `max` code points; returns the text and whether it was cut. */
export function truncateCodePoints(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  let count = 0;
  let i = 0;
  while (i < text.length && count < max) {
    const cp = text.codePointAt(i)!;
    i += cp > 0xffff ? 2 : 1;
    count++;
  }
  return i >= text.length ? { text, truncated: false } : { text: text.slice(0, i), truncated: true };
}
