import { AppError } from '../core';
import { formatValue } from './format';

export class CsvError extends AppError {
  constructor(message: string, readonly line: number) {
    super(`line ${line}: ${message}`, 'csv');
  }
}

/** RFC 4180 parsing: quoted fields, doubled quotes, CRLF or LF rows. */
export function parseCsv(text: string, separator = ','): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else {
        if (c === '\n') line++;
        field += c;
      }
    } else if (c === '"') {
      if (field !== '') throw new CsvError('quote inside an unquoted field', line);
      quoted = true;
    } else if (c === separator) {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      line++;
    } else field += c;
  }
  if (quoted) throw new CsvError('unterminated quoted field', line);
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

function quote(field: string, separator: string): string {
  return /["\r\n]/.test(field) || field.includes(separator) ? `"${field.replace(/"/g, '""')}"` : field;
}

export type CsvCell = string | number | string[] | null;

/** Serialize rows; numbers use two decimals, lists are joined with `; `. */
export function toCsv(rows: CsvCell[][], separator = ','): string {
  const cell = (v: CsvCell) => (v === null ? '' : typeof v === 'number' ? formatValue(v, 2) : Array.isArray(v) ? formatValue(v, '; ') : v);
  return rows.map((r) => r.map((v) => quote(cell(v), separator)).join(separator)).join('\r\n') + '\r\n';
}

/** Rows as objects keyed by the header row. */
export function csvRecords(text: string, separator = ','): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text, separator);
  if (!header) return [];
  return rows.map((r, i) => {
    if (r.length !== header.length) throw new CsvError(`expected ${header.length} fields, got ${r.length}`, i + 2);
    return Object.fromEntries(header.map((h, j) => [h, r[j]!]));
  });
}
