export * from './result';
export { AppError, ValidationError, CapacityError } from './errors';
export { Option, Some, some, none, find, compact } from './option';
export { ManualClock, RetryError, retry, Limiter, mapLimit, Lazy, type Clock, type RetryOptions } from './async';
export { Random, IdGenerator, fnv1a } from './ids';
export { Money, CurrencyMismatchError } from './money';
