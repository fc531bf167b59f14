import { ok, type Result, ValidationError } from '../core';
import { Schema, type Infer } from './base';

export class ArraySchema<T> extends Schema<T[]> {
  constructor(private readonly item: Schema<T>) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<T[], ValidationError> {
    if (!Array.isArray(input)) return this.fail(path, 'expected an array');
    const out: T[] = [];
    for (let i = 0; i < input.length; i++) {
      const r = this.item.parse(input[i], [...path, String(i)]);
      if (!r.ok) return r;
      out.push(r.value);
    }
    return ok(out);
  }
}

export type Shape = Record<string, Schema<unknown>>;
export type InferShape<S extends Shape> = { [K in keyof S]: Infer<S[K]> };

export class ObjectSchema<S extends Shape> extends Schema<InferShape<S>> {
  constructor(readonly shape: S) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<InferShape<S>, ValidationError> {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return this.fail(path, 'expected an object');
    const out: Record<string, unknown> = {};
    for (const [k, s] of Object.entries(this.shape)) {
      const r = s.parse((input as Record<string, unknown>)[k], [...path, k]);
      if (!r.ok) return r;
      out[k] = r.value;
    }
    return ok(out as InferShape<S>);
  }
}
