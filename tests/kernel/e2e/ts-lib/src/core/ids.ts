/** Deterministic identifiers: a seeded PRNG (mulberry32) and short ids from it. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    let t = (this.state += 0x6d2b79f5);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[this.int(0, items.length - 1)]!;
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** An id generator: a prefix plus `length` characters from a seeded stream. */
export class IdGenerator {
  private readonly random: Random;
  private readonly issued = new Set<string>();

  constructor(readonly prefix: string, seed = 1, readonly length = 8) {
    this.random = new Random(seed);
  }

  next(): string {
    for (;;) {
      let id = this.prefix;
      for (let i = 0; i < this.length; i++) id += ALPHABET[this.random.int(0, ALPHABET.length - 1)];
      if (!this.issued.has(id)) {
        this.issued.add(id);
        return id;
      }
    }
  }
}

/** A 32-bit FNV-1a hash of a string, as 8 hex digits. */
export function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}
