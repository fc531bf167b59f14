/** A half-open interval [start, end). */
export interface Interval {
  start: number;
  end: number;
}

export function overlaps(a: Interval, b: Interval): boolean {
  return a.start < b.end && b.start < a.end;
}

/** A sorted set of disjoint intervals; adding merges overlapping or touching ones. */
export class IntervalSet {
  private items: Interval[] = [];

  add(iv: Interval): this {
    if (iv.end <= iv.start) return this;
    const out: Interval[] = [];
    let cur = { ...iv };
    for (const it of this.items) {
      if (it.end < cur.start || cur.end < it.start) out.push(it);
      else cur = { start: Math.min(cur.start, it.start), end: Math.max(cur.end, it.end) };
    }
    out.push(cur);
    this.items = out.sort((a, b) => a.start - b.start);
    return this;
  }

  remove(iv: Interval): this {
    const out: Interval[] = [];
    for (const it of this.items) {
      if (!overlaps(it, iv)) {
        out.push(it);
        continue;
      }
      if (it.start < iv.start) out.push({ start: it.start, end: iv.start });
      if (iv.end < it.end) out.push({ start: iv.end, end: it.end });
    }
    this.items = out;
    return this;
  }

  contains(point: number): boolean {
    let lo = 0;
    let hi = this.items.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const it = this.items[mid]!;
      if (point < it.start) hi = mid - 1;
      else if (point >= it.end) lo = mid + 1;
      else return true;
    }
    return false;
  }

  get total(): number {
    return this.items.reduce((n, it) => n + (it.end - it.start), 0);
  }

  toArray(): Interval[] {
    return this.items.map((it) => ({ ...it }));
  }

  /** The gaps inside [start, end) not covered by the set. */
  gaps(within: Interval): Interval[] {
    const out: Interval[] = [];
    let at = within.start;
    for (const it of this.items) {
      if (it.end <= at) continue;
      if (it.start >= within.end) break;
      if (it.start > at) out.push({ start: at, end: it.start });
      at = Math.max(at, it.end);
    }
    if (at < within.end) out.push({ start: at, end: within.end });
    return out;
  }
}
