/** An immutable singly linked list. */
export class List<T> implements Iterable<T> {
  private constructor(private readonly head: { value: T; next: List<T> } | null, readonly size: number) {}

  static empty<T>(): List<T> {
    return new List<T>(null, 0);
  }

  static of<T>(...items: T[]): List<T> {
    let l = List.empty<T>();
    for (let i = items.length - 1; i >= 0; i--) l = l.prepend(items[i]!);
    return l;
  }

  prepend(value: T): List<T> {
    return new List({ value, next: this }, this.size + 1);
  }

  map<U>(f: (t: T) => U): List<U> {
    return List.of(...[...this].map(f));
  }

  filter(p: (t: T) => boolean): List<T> {
    return List.of(...[...this].filter(p));
  }

  *[Symbol.iterator](): Iterator<T> {
    for (let cur = this.head; cur; cur = cur.next.head) yield cur.value;
  }
}
