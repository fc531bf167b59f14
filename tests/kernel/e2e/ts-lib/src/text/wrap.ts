import { pad } from './format';

/** Greedy word wrap; words longer than the width are split. */
export function wrap(text: string, width: number): string[] {
  if (width < 1) throw new RangeError('width must be positive');
  const lines: string[] = [];
  for (const para of text.split('\n')) {
    let line = '';
    for (let word of para.split(/\s+/).filter(Boolean)) {
      while (word.length > width) {
        if (line) {
          lines.push(line);
          line = '';
        }
        lines.push(word.slice(0, width));
        word = word.slice(width);
      }
      if (!line) line = word;
      else if (line.length + 1 + word.length <= width) line += ' ' + word;
      else {
        lines.push(line);
        line = word;
      }
    }
    lines.push(line);
  }
  return lines;
}

/** Wrap and justify: spaces are spread so every line but the last of a paragraph fills the width. */
export function justify(text: string, width: number): string[] {
  const lines = wrap(text, width);
  return lines.map((line, i) => {
    const last = i === lines.length - 1 || lines[i + 1] === '';
    const words = line.split(' ');
    if (last || words.length < 2) return pad(line, width);
    const gaps = words.length - 1;
    const spaces = width - words.join('').length;
    return words.map((w, j) => (j < gaps ? w + ' '.repeat(Math.floor(spaces / gaps) + (j < spaces % gaps ? 1 : 0)) : w)).join('');
  });
}

/** Indent every non-empty line. */
export function indent(text: string, by: number | string): string {
  const prefix = typeof by === 'number' ? ' '.repeat(by) : by;
  return text
    .split('\n')
    .map((l) => (l ? prefix + l : l))
    .join('\n');
}

/** Remove the common leading whitespace of all non-empty lines. */
export function dedent(text: string): string {
  const lines = text.split('\n');
  const widths = lines.filter((l) => l.trim()).map((l) => /^\s*/.exec(l)![0].length);
  const cut = widths.length ? Math.min(...widths) : 0;
  return lines.map((l) => l.slice(cut)).join('\n');
}

/** Shorten to `max` characters with an ellipsis, on a word boundary when possible. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, Math.max(0, max - 1));
  const space = cut.lastIndexOf(' ');
  return (space > max / 2 ? cut.slice(0, space) : cut) + '…';
}
