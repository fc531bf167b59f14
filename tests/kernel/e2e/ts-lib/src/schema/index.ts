import { ArraySchema, ObjectSchema, type Shape } from './composite';
import { BooleanSchema, NumberSchema, StringSchema } from './primitives';
import type { Schema } from './base';

export { Schema, OptionalSchema, type Infer } from './base';
export * from './primitives';
export * from './composite';

export const s = {
  string: () => new StringSchema(),
  number: () => new NumberSchema(),
  boolean: () => new BooleanSchema(),
  array: <T>(item: Schema<T>) => new ArraySchema(item),
  object: <S extends Shape>(shape: S) => new ObjectSchema(shape),
};
