/** A binary min-heap ordered by a comparator; ties keep insertion order. */
export class PriorityQueue<T> {
  private readonly items: { value: T; seq: number }[] = [];
  private seq = 0;

  constructor(private readonly compare: (a: T, b: T) => number) {}

  static by<T>(key: (t: T) => number): PriorityQueue<T> {
    return new PriorityQueue<T>((a, b) => key(a) - key(b));
  }

  get size(): number {
    return this.items.length;
  }

  push(value: T): this {
    this.items.push({ value, seq: this.seq++ });
    this.up(this.items.length - 1);
    return this;
  }

  peek(): T | undefined {
    return this.items[0]?.value;
  }

  pop(): T | undefined {
    const top = this.items[0];
    const last = this.items.pop();
    if (top && last && this.items.length > 0) {
      this.items[0] = last;
      this.down(0);
    }
    return top?.value;
  }

  /** Pop everything, in order. */
  drain(): T[] {
    const out: T[] = [];
    for (let v = this.pop(); v !== undefined; v = this.pop()) out.push(v);
    return out;
  }

  private less(i: number, j: number): boolean {
    const a = this.items[i]!;
    const b = this.items[j]!;
    const c = this.compare(a.value, b.value);
    return c < 0 || (c === 0 && a.seq < b.seq);
  }

  private swap(i: number, j: number): void {
    [this.items[i], this.items[j]] = [this.items[j]!, this.items[i]!];
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let best = i;
      if (l < this.items.length && this.less(l, best)) best = l;
      if (r < this.items.length && this.less(r, best)) best = r;
      if (best === i) return;
      this.swap(i, best);
      i = best;
    }
  }
}

/** The k smallest items by key, stable. */
export function smallest<T>(items: Iterable<T>, k: number, key: (t: T) => number): T[] {
  const q = PriorityQueue.by(key);
  for (const it of items) q.push(it);
  const out: T[] = [];
  while (out.length < k && q.size > 0) out.push(q.pop()!);
  return out;
}
