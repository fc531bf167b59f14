/**
 * The kernel library API (docs/kernel.md §2.3). `openKernel` takes the session lock; one Kernel keeps its
 * TypeScript backend warm across operations until `close()`.
 */
export { openKernel, type Kernel } from './kernel.js';
export { KernelError, EXIT_BY_CODE, exitCodeOf, type KernelErrorCode, type KernelLocation } from './errors.js';
export { okEnvelope, errorEnvelope, sortWarnings, SCHEMA_VERSION, type KernelWarning } from './envelope.js';
export { opHash, symbolId, undoToken } from './ids.js';
export { opHashOf } from './prepare.js';
export { parseOp } from './cli/args.js';
export { runKernelCli, type CliOutput } from './cli/tug.js';
export type * from './types.js';
