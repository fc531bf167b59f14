import { AppError } from '../core';

export interface Message<T = unknown> {
  topic: string;
  payload: T;
  id: number;
}

export type Handler<T = unknown> = (message: Message<T>) => void | Promise<void>;
export type Middleware = (message: Message, next: () => Promise<void>) => Promise<void>;

export class DeliveryError extends AppError {
  constructor(readonly topic: string, readonly failures: unknown[]) {
    super(`${failures.length} handler(s) failed for ${topic}`, 'delivery');
  }
}

/**
 * An async message bus: topics with `*` wildcards per segment (`order.*`), middleware around delivery,
 * and a dead-letter list for messages nobody handled.
 */
export class Bus {
  private readonly handlers: { pattern: string[]; handler: Handler }[] = [];
  private readonly middleware: Middleware[] = [];
  private nextId = 1;
  readonly deadLetters: Message[] = [];

  subscribe<T>(pattern: string, handler: Handler<T>): () => void {
    const entry = { pattern: pattern.split('.'), handler: handler as Handler };
    this.handlers.push(entry);
    return () => {
      const i = this.handlers.indexOf(entry);
      if (i >= 0) this.handlers.splice(i, 1);
    };
  }

  use(mw: Middleware): this {
    this.middleware.push(mw);
    return this;
  }

  /** Deliver to every matching handler, in subscription order; failures are collected. */
  async publish<T>(topic: string, payload: T): Promise<number> {
    const message: Message = { topic, payload, id: this.nextId++ };
    const matching = this.handlers.filter((h) => matches(h.pattern, topic.split('.')));
    if (matching.length === 0) {
      this.deadLetters.push(message);
      return 0;
    }
    const failures: unknown[] = [];
    const deliver = async () => {
      for (const h of matching) {
        try {
          await h.handler(message);
        } catch (e) {
          failures.push(e);
        }
      }
    };
    const chain = this.middleware.reduceRight<() => Promise<void>>((next, mw) => () => mw(message, next), deliver);
    await chain();
    if (failures.length > 0) throw new DeliveryError(topic, failures);
    return matching.length;
  }
}

function matches(pattern: string[], topic: string[]): boolean {
  if (pattern[pattern.length - 1] === '#') return pattern.slice(0, -1).every((p, i) => p === '*' || p === topic[i]) && topic.length >= pattern.length - 1;
  return pattern.length === topic.length && pattern.every((p, i) => p === '*' || p === topic[i]);
}
