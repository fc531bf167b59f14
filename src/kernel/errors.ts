/**
 * Kernel errors (docs/kernel.md §5.2). The kernel has its own codes and exit table; it never uses a
 * host's error catalogue. Every failure is a `KernelError`; `extra` carries the additional top-level fields of
 * exit-5 envelopes (§4.6).
 */

export const EXIT_BY_CODE = {
  InvalidArgument: 2,
  UnsupportedOperation: 2,
  ConfigInvalid: 2,
  ImpactThresholdExceeded: 2,
  WorkspaceTooLarge: 2,
  WorkspaceNotFound: 3,
  FileNotFound: 3,
  InvalidPosition: 3,
  SymbolNotFound: 3,
  AmbiguousSymbol: 3,
  NotRenameable: 3,
  UnsupportedInMacro: 3,
  UnsupportedInProcMacro: 3,
  NotCargoProject: 3,
  SnapshotMismatch: 4,
  AnchorMismatch: 4,
  ConflictingEdits: 4,
  WriteError: 4,
  SessionLocked: 4,
  SyntaxError: 5,
  TestsFailed: 5,
  TypecheckFailed: 5,
  VerificationUnavailable: 5,
  BackendUnavailable: 10,
  BackendCrashed: 10,
  BackendTimeout: 10,
  IndexingTimeout: 10,
  BackendError: 10,
  SessionCorrupt: 10,
  InternalError: 10,
} as const;

export type KernelErrorCode = keyof typeof EXIT_BY_CODE;
export type ExitCode = 0 | 2 | 3 | 4 | 5 | 10;

export interface KernelLocation {
  file: string;
  line: number;
  col: number;
  byte_start?: number;
  byte_end?: number;
}

export class KernelError extends Error {
  readonly code: KernelErrorCode;
  readonly details: Record<string, unknown>;
  readonly location?: KernelLocation;
  /** Extra top-level envelope fields (exit-5 errors), in output order. */
  extra?: Record<string, unknown>;
  /** Set when the error was raised after a snapshot was computed. */
  snapshotId?: string;

  constructor(
    code: KernelErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    opts: { location?: KernelLocation; extra?: Record<string, unknown>; snapshotId?: string } = {},
  ) {
    super(message);
    this.name = 'KernelError';
    this.code = code;
    this.details = details;
    if (opts.location) this.location = opts.location;
    if (opts.extra) this.extra = opts.extra;
    if (opts.snapshotId) this.snapshotId = opts.snapshotId;
  }

  get exitCode(): ExitCode {
    return EXIT_BY_CODE[this.code];
  }
}

export function exitCodeOf(code: KernelErrorCode): ExitCode {
  return EXIT_BY_CODE[code];
}

/** Any thrown value as a KernelError (unknown exceptions become InternalError). */
export function toKernelError(e: unknown, debug = false): KernelError {
  if (e instanceof KernelError) return e;
  const err = e instanceof Error ? e : new Error(String(e));
  const details: Record<string, unknown> = { message: err.message };
  if (debug && err.stack) details.stack = err.stack;
  return new KernelError('InternalError', err.message || 'internal error', details);
}
