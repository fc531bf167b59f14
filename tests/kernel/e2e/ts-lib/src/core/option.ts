/** An optional value with combinators; `None` is a singleton. */
export abstract class Option<T> {
  abstract isSome(): this is Some<T>;

  abstract map<U>(f: (value: T) => U): Option<U>;

  abstract flatMap<U>(f: (value: T) => Option<U>): Option<U>;

  abstract getOrElse(fallback: T): T;

  abstract toArray(): T[];

  filter(p: (value: T) => boolean): Option<T> {
    return this.flatMap((v) => (p(v) ? some(v) : none<T>()));
  }

  orElse(other: () => Option<T>): Option<T> {
    return this.isSome() ? this : other();
  }

  zip<U>(other: Option<U>): Option<[T, U]> {
    return this.flatMap((a) => other.map((b) => [a, b] as [T, U]));
  }

  static from<T>(value: T | null | undefined): Option<T> {
    return value === null || value === undefined ? none<T>() : some(value);
  }
}

export class Some<T> extends Option<T> {
  constructor(readonly value: T) {
    super();
  }

  isSome(): this is Some<T> {
    return true;
  }

  map<U>(f: (value: T) => U): Option<U> {
    return new Some(f(this.value));
  }

  flatMap<U>(f: (value: T) => Option<U>): Option<U> {
    return f(this.value);
  }

  getOrElse(): T {
    return this.value;
  }

  toArray(): T[] {
    return [this.value];
  }
}

class NoneImpl extends Option<never> {
  isSome(): this is Some<never> {
    return false;
  }

  map<U>(): Option<U> {
    return NONE as Option<U>;
  }

  flatMap<U>(): Option<U> {
    return NONE as Option<U>;
  }

  getOrElse<T>(fallback: T): T {
    return fallback;
  }

  toArray(): never[] {
    return [];
  }
}

const NONE: Option<never> = new NoneImpl();

export function some<T>(value: T): Option<T> {
  return new Some(value);
}

export function none<T>(): Option<T> {
  return NONE as Option<T>;
}

/** The first element satisfying `p`, as an option. */
export function find<T>(items: Iterable<T>, p: (t: T) => boolean): Option<T> {
  for (const it of items) if (p(it)) return some(it);
  return none<T>();
}

/** Keep the present values of a list of options. */
export function compact<T>(options: Option<T>[]): T[] {
  return options.flatMap((o) => o.toArray());
}
