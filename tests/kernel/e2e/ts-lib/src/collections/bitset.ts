/** A growable set of small non-negative integers, 32 per word. */
export class BitSet implements Iterable<number> {
  private words: Uint32Array;

  constructor(capacity = 64) {
    this.words = new Uint32Array(Math.max(1, Math.ceil(capacity / 32)));
  }

  static of(...values: number[]): BitSet {
    const b = new BitSet(Math.max(0, ...values) + 1);
    for (const v of values) b.add(v);
    return b;
  }

  private grow(bit: number): void {
    const need = (bit >>> 5) + 1;
    if (need <= this.words.length) return;
    const next = new Uint32Array(Math.max(need, this.words.length * 2));
    next.set(this.words);
    this.words = next;
  }

  add(bit: number): this {
    if (!Number.isInteger(bit) || bit < 0) throw new RangeError(`not a valid bit: ${bit}`);
    this.grow(bit);
    this.words[bit >>> 5]! |= 1 << (bit & 31);
    return this;
  }

  delete(bit: number): boolean {
    if (!this.has(bit)) return false;
    this.words[bit >>> 5]! &= ~(1 << (bit & 31));
    return true;
  }

  has(bit: number): boolean {
    const w = this.words[bit >>> 5];
    return w !== undefined && (w & (1 << (bit & 31))) !== 0;
  }

  get size(): number {
    let n = 0;
    for (let w of this.words) {
      while (w) {
        w &= w - 1;
        n++;
      }
    }
    return n;
  }

  union(other: BitSet): BitSet {
    const out = new BitSet(Math.max(this.words.length, other.words.length) * 32);
    for (let i = 0; i < out.words.length; i++) out.words[i] = (this.words[i] ?? 0) | (other.words[i] ?? 0);
    return out;
  }

  intersect(other: BitSet): BitSet {
    const out = new BitSet(Math.min(this.words.length, other.words.length) * 32);
    for (let i = 0; i < out.words.length; i++) out.words[i] = this.words[i]! & other.words[i]!;
    return out;
  }

  *[Symbol.iterator](): Iterator<number> {
    for (let i = 0; i < this.words.length; i++) {
      const w = this.words[i]!;
      if (w === 0) continue;
      for (let b = 0; b < 32; b++) if (w & (1 << b)) yield i * 32 + b;
    }
  }
}
