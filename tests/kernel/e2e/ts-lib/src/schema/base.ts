import { err, ok, type Result, ValidationError } from '../core';

/** A schema validates unknown input into a typed value. */
export abstract class Schema<T> {
  abstract parse(input: unknown, path?: string[]): Result<T, ValidationError>;

  optional(): Schema<T | undefined> {
    return new OptionalSchema(this);
  }

  check(input: unknown): input is T {
    return this.parse(input).ok;
  }

  protected fail(path: string[], message: string): Result<never, ValidationError> {
    return err(new ValidationError(path, message));
  }
}

export class OptionalSchema<T> extends Schema<T | undefined> {
  constructor(private readonly inner: Schema<T>) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<T | undefined, ValidationError> {
    return input === undefined ? ok(undefined) : this.inner.parse(input, path);
  }
}

export type Infer<S> = S extends Schema<infer T> ? T : never;
