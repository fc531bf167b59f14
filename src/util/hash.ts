/**
 * SHA-256 and canonical JSON for tugcode's own layers (the plan's `plan_hash` and structure hash). The one
 * implementation is the kernel's (docs/kernel.md §9.6, src/kernel/canonical-json.ts): the kernel is an
 * independent library at the bottom of the import graph (docs/architecture.md), so every layer shares it.
 */
export { canonicalJson, sha256Canonical, sha256Hex } from '../kernel/ids.js';
