import { ok, type Result, ValidationError } from '../core';
import { Schema, type Infer } from './base';

/** An object with arbitrary string keys and uniform values. */
export class RecordSchema<V> extends Schema<Record<string, V>> {
  constructor(private readonly value: Schema<V>, private readonly keyPattern?: RegExp) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<Record<string, V>, ValidationError> {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return this.fail(path, 'expected a record');
    const out: Record<string, V> = {};
    for (const [k, v] of Object.entries(input)) {
      if (this.keyPattern && !this.keyPattern.test(k)) return this.fail([...path, k], `key does not match ${this.keyPattern}`);
      const r = this.value.parse(v, [...path, k]);
      if (!r.ok) return r;
      out[k] = r.value;
    }
    return ok(out);
  }
}

type InferTuple<S extends readonly Schema<unknown>[]> = { [I in keyof S]: Infer<S[I]> };

/** A fixed-length array with one schema per position. */
export class TupleSchema<S extends readonly Schema<unknown>[]> extends Schema<InferTuple<S>> {
  constructor(private readonly items: S) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<InferTuple<S>, ValidationError> {
    if (!Array.isArray(input)) return this.fail(path, 'expected a tuple');
    if (input.length !== this.items.length) return this.fail(path, `expected ${this.items.length} items, got ${input.length}`);
    const out: unknown[] = [];
    for (let i = 0; i < this.items.length; i++) {
      const r = this.items[i]!.parse(input[i], [...path, String(i)]);
      if (!r.ok) return r;
      out.push(r.value);
    }
    return ok(out as InferTuple<S>);
  }
}

/** A set of unique values, given as an array. */
export class SetSchema<T> extends Schema<Set<T>> {
  constructor(private readonly item: Schema<T>) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<Set<T>, ValidationError> {
    if (!Array.isArray(input)) return this.fail(path, 'expected an array of unique values');
    const out = new Set<T>();
    for (let i = 0; i < input.length; i++) {
      const r = this.item.parse(input[i], [...path, String(i)]);
      if (!r.ok) return r;
      if (out.has(r.value)) return this.fail([...path, String(i)], 'duplicate value');
      out.add(r.value);
    }
    return ok(out);
  }
}
