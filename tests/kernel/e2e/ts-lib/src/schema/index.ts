import { ArraySchema, ObjectSchema, type Shape } from './composite';
import { BooleanSchema, NumberSchema, StringSchema } from './primitives';
import { EnumSchema, LiteralSchema, UnionSchema } from './literal';
import { RecordSchema, SetSchema, TupleSchema } from './record';
import { CoercedNumberSchema, LazySchema } from './transform';
import type { Schema } from './base';

export { Schema, OptionalSchema, type Infer } from './base';
export * from './primitives';
export * from './composite';
export * from './literal';
export * from './record';
export * from './transform';
export * from './formats';

export const s = {
  string: () => new StringSchema(),
  number: () => new NumberSchema(),
  boolean: () => new BooleanSchema(),
  array: <T>(item: Schema<T>) => new ArraySchema(item),
  object: <S extends Shape>(shape: S) => new ObjectSchema(shape),
  literal: <T extends string | number | boolean | null>(value: T) => new LiteralSchema(value),
  enum: <T extends string>(...values: T[]) => new EnumSchema(values),
  union: <S extends Schema<unknown>[]>(...members: S) => new UnionSchema(members),
  record: <V>(value: Schema<V>, keyPattern?: RegExp) => new RecordSchema(value, keyPattern),
  tuple: <S extends readonly Schema<unknown>[]>(...items: S) => new TupleSchema(items),
  set: <T>(item: Schema<T>) => new SetSchema(item),
  coerceNumber: () => new CoercedNumberSchema(),
  lazy: <T>(get: () => Schema<T>) => new LazySchema(get),
};
