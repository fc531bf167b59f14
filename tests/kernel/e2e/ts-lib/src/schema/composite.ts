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

  /** Only the given keys. */
  pick<K extends keyof S & string>(...keys: K[]): ObjectSchema<Pick<S, K>> {
    const shape = {} as Pick<S, K>;
    for (const k of keys) shape[k] = this.shape[k];
    return new ObjectSchema(shape);
  }

  /** Every key but the given ones. */
  omit<K extends keyof S & string>(...keys: K[]): ObjectSchema<Omit<S, K>> {
    const shape: Record<string, Schema<unknown>> = { ...this.shape };
    for (const k of keys) delete shape[k];
    return new ObjectSchema(shape as Omit<S, K>);
  }

  /** More keys (later ones win). */
  extend<E extends Shape>(more: E): ObjectSchema<Omit<S, keyof E> & E> {
    return new ObjectSchema({ ...this.shape, ...more } as Omit<S, keyof E> & E);
  }

  /** Every key optional. */
  partial(): ObjectSchema<{ [K in keyof S]: Schema<Infer<S[K]> | undefined> }> {
    const shape: Record<string, Schema<unknown>> = {};
    for (const [k, v] of Object.entries(this.shape)) shape[k] = v.optional();
    return new ObjectSchema(shape as { [K in keyof S]: Schema<Infer<S[K]> | undefined> });
  }

  /** Reject keys the shape does not name. */
  strict(): Schema<InferShape<S>> {
    return new StrictObjectSchema(this);
  }
}

class StrictObjectSchema<S extends Shape> extends Schema<InferShape<S>> {
  constructor(private readonly inner: ObjectSchema<S>) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<InferShape<S>, ValidationError> {
    const r = this.inner.parse(input, path);
    if (!r.ok) return r;
    const extra = Object.keys(input as object).filter((k) => !(k in this.inner.shape));
    return extra.length ? this.fail([...path, extra[0]!], 'unknown key') : r;
  }
}
