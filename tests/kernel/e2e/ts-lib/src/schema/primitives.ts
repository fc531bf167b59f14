import { ok, type Result, ValidationError } from '../core';
import { Schema } from './base';

export class StringSchema extends Schema<string> {
  constructor(private readonly minLength = 0) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<string, ValidationError> {
    if (typeof input !== 'string') return this.fail(path, 'expected a string');
    if (input.length < this.minLength) return this.fail(path, `expected at least ${this.minLength} characters`);
    return ok(input);
  }

  min(n: number): StringSchema {
    return new StringSchema(n);
  }
}

export class NumberSchema extends Schema<number> {
  parse(input: unknown, path: string[] = []): Result<number, ValidationError> {
    return typeof input === 'number' && Number.isFinite(input) ? ok(input) : this.fail(path, 'expected a number');
  }
}

export class BooleanSchema extends Schema<boolean> {
  parse(input: unknown, path: string[] = []): Result<boolean, ValidationError> {
    return typeof input === 'boolean' ? ok(input) : this.fail(path, 'expected a boolean');
  }
}
