/** The error hierarchy of the library. */
export class AppError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
    this.name = 'AppError';
  }

  describe(): string {
    return `${this.code}: ${this.message}`;
  }
}

export class ValidationError extends AppError {
  constructor(readonly path: string[], message: string) {
    super(message, 'validation');
    this.name = 'ValidationError';
  }

  override describe(): string {
    return `${this.path.join('.') || '<root>'}: ${this.message}`;
  }
}

export class CapacityError extends AppError {
  constructor(readonly capacity: number) {
    super(`capacity ${capacity} exceeded`, 'capacity');
  }
}
