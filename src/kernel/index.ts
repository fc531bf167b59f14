/**
 * The kernel library (docs/kernel.md §2.3): everything a host uses. `openKernel` takes the session lock; one
 * Kernel keeps its TypeScript backend warm across operations until `close()`. `runKernelCli` is the `tug`
 * command table, `KernelHost` its warm form for a long-lived front door, `doctor` the backend probes.
 *
 * Loading this loads the kernel's modules (sessions, snapshots, the verifiers' process runner): a host
 * imports it with `import()` where start-up time matters, and otherwise one of the entries this re-exports:
 * ./light.ts (what loads nothing heavy) and ./ids.ts (the hashes, which load node:crypto). The fourth entry,
 * ./config-schema.ts, is the zod schema of the `[kernel]` table. Outside src/kernel, nothing else of the
 * kernel is imported (tests/layering.test.ts).
 */
export * from './light.js';
export { canonicalJson, sha256Hex, sha256Canonical, opHash, symbolId, undoToken } from './ids.js';
export { openKernel, type Kernel } from './kernel.js';
export { okEnvelope, errorEnvelope, sortWarnings, SCHEMA_VERSION, type KernelWarning } from './envelope.js';
export { opHashOf } from './prepare.js';
export { runKernelCli, type CliOutput } from './cli/tug.js';
export { KernelHost, KernelThreads } from './cli/warm.js';
export { doctor } from './doctor.js';
