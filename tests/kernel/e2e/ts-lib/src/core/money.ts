import { AppError } from './errors';

export class CurrencyMismatchError extends AppError {
  constructor(readonly left: string, readonly right: string) {
    super(`cannot combine ${left} with ${right}`, 'currency');
  }
}

/** An amount in minor units (cents) of one currency; arithmetic never uses floating point. */
export class Money {
  private constructor(readonly minor: bigint, readonly currency: string) {}

  static of(amount: string | number, currency: string): Money {
    const text = typeof amount === 'number' ? amount.toFixed(2) : amount.trim();
    const m = /^(-)?(\d+)(?:\.(\d{1,2}))?$/.exec(text);
    if (!m) throw new AppError(`not an amount: ${JSON.stringify(amount)}`, 'money');
    const minor = BigInt(m[2]!) * 100n + BigInt((m[3] ?? '0').padEnd(2, '0'));
    return new Money(m[1] ? -minor : minor, currency);
  }

  static zero(currency: string): Money {
    return new Money(0n, currency);
  }

  private same(other: Money): void {
    if (other.currency !== this.currency) throw new CurrencyMismatchError(this.currency, other.currency);
  }

  plus(other: Money): Money {
    this.same(other);
    return new Money(this.minor + other.minor, this.currency);
  }

  minus(other: Money): Money {
    this.same(other);
    return new Money(this.minor - other.minor, this.currency);
  }

  /** Multiply by a rational factor, rounding half away from zero. */
  times(numerator: number, denominator = 1): Money {
    const n = this.minor * BigInt(numerator);
    const d = BigInt(denominator);
    const q = n / d;
    const r = n % d;
    const up = (r < 0n ? -r : r) * 2n >= (d < 0n ? -d : d);
    return new Money(up ? q + (n < 0n !== d < 0n ? -1n : 1n) : q, this.currency);
  }

  /** Split into `parts` amounts that differ by at most one cent and sum to this amount. */
  allocate(parts: number): Money[] {
    if (parts < 1) throw new RangeError('parts must be at least 1');
    const base = this.minor / BigInt(parts);
    let rest = this.minor - base * BigInt(parts);
    return Array.from({ length: parts }, () => {
      const extra = rest > 0n ? 1n : 0n;
      rest -= extra;
      return new Money(base + extra, this.currency);
    });
  }

  compare(other: Money): number {
    this.same(other);
    return this.minor === other.minor ? 0 : this.minor < other.minor ? -1 : 1;
  }

  toString(): string {
    const neg = this.minor < 0n;
    const abs = neg ? -this.minor : this.minor;
    return `${neg ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')} ${this.currency}`;
  }

  static sum(items: Money[], currency: string): Money {
    return items.reduce((a, b) => a.plus(b), Money.zero(currency));
  }
}
