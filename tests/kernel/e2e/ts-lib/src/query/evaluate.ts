import { ok, type Result, unwrap, ValidationError } from '../core';
import type { Schema } from '../schema';
import type { Expr, Literal } from './ast';
import { parseQuery } from './parser';

type Value = Literal | Value[] | { [k: string]: Value } | undefined;

function get(record: unknown, path: string[]): Value {
  let v: unknown = record;
  for (const p of path) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  return v as Value;
}

/** `*` matches any run of characters, `?` one; case-insensitive. */
export function globMatch(pattern: string, text: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 'i');
  return re.test(text);
}

function compare(op: string, a: Value, b: Value): boolean {
  switch (op) {
    case '=':
      return a === b;
    case '!=':
      return a !== b;
    case '~':
      return typeof a === 'string' && typeof b === 'string' && globMatch(b, a);
    case 'has':
      return Array.isArray(a) ? a.includes(b as Literal) : typeof a === 'string' && typeof b === 'string' && a.includes(b);
    default: {
      if (typeof a !== typeof b || (typeof a !== 'number' && typeof a !== 'string')) return false;
      const x = a as number | string;
      const y = b as number | string;
      return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
    }
  }
}

/** Evaluate an expression against one record; missing fields are `undefined`. */
export function evaluate(e: Expr, record: unknown): Value {
  switch (e.kind) {
    case 'literal':
      return e.value;
    case 'field':
      return get(record, e.path);
    case 'compare':
      return compare(e.op, evaluate(e.left, record), evaluate(e.right, record));
    case 'logical': {
      const l = Boolean(evaluate(e.left, record));
      if (e.op === 'and' ? !l : l) return l;
      return Boolean(evaluate(e.right, record));
    }
    case 'not':
      return !evaluate(e.operand, record);
    case 'in': {
      const v = evaluate(e.left, record);
      return e.items.some((it) => evaluate(it, record) === v);
    }
  }
}

/** Rows validated by a schema, filtered and sorted by queries. */
export class Collection<T> {
  private readonly rows: T[] = [];

  constructor(private readonly schema: Schema<T>) {}

  insert(input: unknown): Result<T, ValidationError> {
    const r = this.schema.parse(input, [String(this.rows.length)]);
    if (r.ok) this.rows.push(r.value);
    return r;
  }

  insertAll(inputs: unknown[]): T[] {
    return inputs.map((i) => unwrap(this.insert(i)));
  }

  where(query: string): T[] {
    const e = parseQuery(query);
    return this.rows.filter((r) => Boolean(evaluate(e, r)));
  }

  orderBy(field: string, direction: 'asc' | 'desc' = 'asc'): T[] {
    const path = field.split('.');
    const sign = direction === 'asc' ? 1 : -1;
    return [...this.rows].sort((a, b) => {
      const x = get(a, path);
      const y = get(b, path);
      return x === y ? 0 : (x as number | string) < (y as number | string) ? -sign : sign;
    });
  }

  count(query?: string): number {
    return query ? this.where(query).length : this.rows.length;
  }

  validateAll(): Result<number, ValidationError> {
    for (let i = 0; i < this.rows.length; i++) {
      const r = this.schema.parse(this.rows[i], [String(i)]);
      if (!r.ok) return r;
    }
    return ok(this.rows.length);
  }
}
