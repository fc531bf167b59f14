/**
 * Tabular text output through cli-table3 (loaded only when a table is drawn). On a TTY without NO_COLOR
 * the header is bold; otherwise the table is plain text with no escape codes, so pipes and logs stay clean.
 */

/** `color`: bold header (a TTY without NO_COLOR). */
export async function table(head: string[], rows: string[][], cli: { color: boolean }): Promise<string> {
  const { default: Table } = await import('cli-table3');
  const t = new Table({
    head,
    style: { head: cli.color ? ['bold'] : [], border: [], compact: true, 'padding-left': 0, 'padding-right': 2 },
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '',
    },
  });
  t.push(...rows);
  // cli-table3 pads every cell, so lines end in spaces: trim them.
  return t
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n');
}
