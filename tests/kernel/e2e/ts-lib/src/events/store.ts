import { Emitter } from './emitter';
import type { Schema } from '../schema';
import { unwrap } from '../core';

/** A validated key-value store that emits change events. */
export class Store<T> extends Emitter<{ change: { key: string; value: T }; remove: string }> {
  private readonly data = new Map<string, T>();

  constructor(private readonly schema: Schema<T>) {
    super();
  }

  put(key: string, input: unknown): T {
    const value = unwrap(this.schema.parse(input, [key]));
    this.data.set(key, value);
    this.emit('change', { key, value });
    return value;
  }

  get(key: string): T | undefined {
    return this.data.get(key);
  }

  remove(key: string): boolean {
    const had = this.data.delete(key);
    if (had) this.emit('remove', key);
    return had;
  }
}
