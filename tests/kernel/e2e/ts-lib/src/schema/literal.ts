import { ok, type Result, ValidationError } from '../core';
import { Schema, type Infer } from './base';

type Primitive = string | number | boolean | null;

/** Exactly one primitive value. */
export class LiteralSchema<T extends Primitive> extends Schema<T> {
  constructor(readonly value: T) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<T, ValidationError> {
    return input === this.value ? ok(this.value) : this.fail(path, `expected ${JSON.stringify(this.value)}`);
  }
}

/** One of a fixed list of strings. */
export class EnumSchema<T extends string> extends Schema<T> {
  private readonly allowed: Set<string>;

  constructor(readonly values: readonly T[]) {
    super();
    this.allowed = new Set(values);
  }

  parse(input: unknown, path: string[] = []): Result<T, ValidationError> {
    if (typeof input === 'string' && this.allowed.has(input)) return ok(input as T);
    return this.fail(path, `expected one of ${this.values.join(', ')}`);
  }

  /** The same enum without some values. */
  exclude<E extends T>(...drop: E[]): EnumSchema<Exclude<T, E>> {
    return new EnumSchema(this.values.filter((v) => !(drop as string[]).includes(v)) as Exclude<T, E>[]);
  }
}

/** The first member schema that accepts the input wins. */
export class UnionSchema<S extends Schema<unknown>[]> extends Schema<Infer<S[number]>> {
  constructor(readonly members: S) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<Infer<S[number]>, ValidationError> {
    const messages: string[] = [];
    for (const m of this.members) {
      const r = m.parse(input, path);
      if (r.ok) return ok(r.value as Infer<S[number]>);
      messages.push(r.error.message);
    }
    return this.fail(path, `no union member matched (${messages.join('; ')})`);
  }
}

/** A union keyed by one string property, so the error names the right branch. */
export class DiscriminatedSchema<K extends string, S extends Record<string, Schema<unknown>>> extends Schema<Infer<S[keyof S]>> {
  constructor(readonly key: K, readonly branches: S) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<Infer<S[keyof S]>, ValidationError> {
    if (typeof input !== 'object' || input === null) return this.fail(path, 'expected an object');
    const tag = (input as Record<string, unknown>)[this.key];
    if (typeof tag !== 'string' || !(tag in this.branches)) {
      return this.fail([...path, this.key], `expected one of ${Object.keys(this.branches).join(', ')}`);
    }
    const r = this.branches[tag]!.parse(input, path);
    return r.ok ? ok(r.value as Infer<S[keyof S]>) : r;
  }
}
