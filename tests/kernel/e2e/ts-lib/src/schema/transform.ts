import { ok, type Result, ValidationError } from '../core';
import { Schema } from './base';

/** Parse with an inner schema, then map the value. */
export class TransformSchema<In, Out> extends Schema<Out> {
  constructor(private readonly inner: Schema<In>, private readonly f: (value: In) => Out) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<Out, ValidationError> {
    const r = this.inner.parse(input, path);
    return r.ok ? ok(this.f(r.value)) : r;
  }
}

/** Parse, then check a predicate with its own message. */
export class RefinedSchema<T> extends Schema<T> {
  constructor(private readonly inner: Schema<T>, private readonly predicate: (value: T) => boolean, private readonly message: string) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<T, ValidationError> {
    const r = this.inner.parse(input, path);
    if (!r.ok) return r;
    return this.predicate(r.value) ? r : this.fail(path, this.message);
  }
}

/** `undefined` becomes the default; anything else goes to the inner schema. */
export class DefaultSchema<T> extends Schema<T> {
  constructor(private readonly inner: Schema<T>, private readonly fallback: () => T) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<T, ValidationError> {
    return input === undefined ? ok(this.fallback()) : this.inner.parse(input, path);
  }
}

/** Strings that hold numbers ("42", "3.5") become numbers. */
export class CoercedNumberSchema extends Schema<number> {
  parse(input: unknown, path: string[] = []): Result<number, ValidationError> {
    if (typeof input === 'number' && Number.isFinite(input)) return ok(input);
    if (typeof input === 'string' && /^-?\d+(\.\d+)?$/.test(input.trim())) return ok(Number(input));
    return this.fail(path, 'expected a number or a numeric string');
  }
}

/** Lazily resolved schema, for recursive types. */
export class LazySchema<T> extends Schema<T> {
  private resolved: Schema<T> | null = null;

  constructor(private readonly get: () => Schema<T>) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<T, ValidationError> {
    this.resolved ??= this.get();
    return this.resolved.parse(input, path);
  }
}

export function refine<T>(inner: Schema<T>, check: (value: T) => boolean, message: string): Schema<T> {
  return new RefinedSchema(inner, check, message);
}

export function transform<In, Out>(inner: Schema<In>, f: (value: In) => Out): Schema<Out> {
  return new TransformSchema(inner, f);
}

export function withDefault<T>(inner: Schema<T>, fallback: () => T): Schema<T> {
  return new DefaultSchema(inner, fallback);
}
