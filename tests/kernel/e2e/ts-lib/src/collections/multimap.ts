/** A map from keys to ordered lists of values. */
export class MultiMap<K, V> {
  private readonly map = new Map<K, V[]>();

  add(key: K, ...values: V[]): this {
    const cur = this.map.get(key);
    if (cur) cur.push(...values);
    else this.map.set(key, [...values]);
    return this;
  }

  get(key: K): readonly V[] {
    return this.map.get(key) ?? [];
  }

  remove(key: K, value: V): boolean {
    const cur = this.map.get(key);
    const i = cur?.indexOf(value) ?? -1;
    if (!cur || i < 0) return false;
    cur.splice(i, 1);
    if (cur.length === 0) this.map.delete(key);
    return true;
  }

  get keyCount(): number {
    return this.map.size;
  }

  get valueCount(): number {
    let n = 0;
    for (const v of this.map.values()) n += v.length;
    return n;
  }

  *entries(): IterableIterator<[K, V]> {
    for (const [k, vs] of this.map) for (const v of vs) yield [k, v];
  }

  static groupBy<T, K>(items: Iterable<T>, key: (t: T) => K): MultiMap<K, T> {
    const m = new MultiMap<K, T>();
    for (const it of items) m.add(key(it), it);
    return m;
  }
}

/** Count occurrences, most frequent first (ties by first appearance). */
export function frequencies<T>(items: Iterable<T>): [T, number][] {
  const counts = new Map<T, number>();
  for (const it of items) counts.set(it, (counts.get(it) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]);
}
