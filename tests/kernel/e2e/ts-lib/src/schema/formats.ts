import { ok, type Result, ValidationError } from '../core';
import { Schema } from './base';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?$/;

/** A string checked against a named format. */
export class FormatSchema extends Schema<string> {
  constructor(readonly format: 'email' | 'uuid' | 'slug', private readonly pattern: RegExp) {
    super();
  }

  parse(input: unknown, path: string[] = []): Result<string, ValidationError> {
    if (typeof input !== 'string') return this.fail(path, 'expected a string');
    return this.pattern.test(input) ? ok(input) : this.fail(path, `expected a valid ${this.format}`);
  }
}

export interface DateParts {
  year: number;
  month: number;
  day: number;
}

/** `YYYY-MM-DD` with a real calendar check (leap years included). */
export class IsoDateSchema extends Schema<DateParts> {
  parse(input: unknown, path: string[] = []): Result<DateParts, ValidationError> {
    const m = typeof input === 'string' ? ISO_DATE.exec(input) : null;
    if (!m) return this.fail(path, 'expected a date as YYYY-MM-DD');
    const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return this.fail(path, 'no such date');
    return ok({ year, month, day });
  }
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  pre: string | null;
}

export class SemVerSchema extends Schema<SemVer> {
  parse(input: unknown, path: string[] = []): Result<SemVer, ValidationError> {
    const m = typeof input === 'string' ? SEMVER.exec(input) : null;
    if (!m) return this.fail(path, 'expected a semantic version');
    return ok({ major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), pre: m[4] ?? null });
  }
}

/** Compare two versions by precedence (a pre-release sorts before its release). */
export function compareSemVer(a: SemVer, b: SemVer): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch || (a.pre === b.pre ? 0 : a.pre === null ? 1 : b.pre === null ? -1 : a.pre < b.pre ? -1 : 1);
}

export const formats = {
  email: () => new FormatSchema('email', EMAIL),
  uuid: () => new FormatSchema('uuid', UUID),
  slug: () => new FormatSchema('slug', /^[a-z0-9]+(?:-[a-z0-9]+)*$/),
  date: () => new IsoDateSchema(),
  semver: () => new SemVerSchema(),
};
