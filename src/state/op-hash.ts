/**
 * `op_hash` straight from `op_text` (docs/kernel.md §9.6), without loading the kernel: the pure op grammar
 * (`src/kernel/opspec.ts`) plus canonical JSON and SHA-256. `state reconcile` uses it to match
 * `Tug-Refactor` trailers; a test keeps it equal to the kernel's own `opHashOf`.
 */
import { canonicalJson, sha256Hex } from '../kernel/ids.js';
import { parseOpText, type ParsedOp, type SafetyMode } from '../kernel/light.js';

function hashOf(op: string, target: unknown, args: Record<string, unknown>): string {
  return sha256Hex(canonicalJson({ op, target, args })).slice(0, 12);
}

/** The op_hash of a parsed operation under a safety mode (the op's own `--safety` wins). */
function opHashOfParsed(p: ParsedOp, defaultSafety: SafetyMode = 'strict'): string {
  if (p.op === 'organize-imports') return hashOf(p.op, { file: p.args.file }, { mode: p.args.mode });
  const a = p.args;
  const target = a.at
    ? { at: { file: a.at.file, line: a.at.line, col: a.at.col } }
    : { symbol: `${a.symbol!.file}::${a.symbol!.name}` };
  return hashOf(p.op, target, { to: a.to, expect: a.expect, safety: a.safety ?? defaultSafety });
}

/** The op_hash of `op_text`, or null when it does not parse. */
export function opHashOfText(opText: string, defaultSafety: SafetyMode = 'strict'): string | null {
  const p = parseOpText(opText);
  return p.ok ? opHashOfParsed(p, defaultSafety) : null;
}

/**
 * Every op_hash `op_text` can have had when it ran: the configured safety mode is not recorded in a trailer,
 * so a rename without its own `--safety` matches under either mode.
 */
export function candidateOpHashes(opText: string): string[] {
  const p = parseOpText(opText);
  if (!p.ok) return [];
  if (p.op === 'organize-imports' || p.args.safety !== undefined) return [opHashOfParsed(p)];
  return [opHashOfParsed(p, 'strict'), opHashOfParsed(p, 'aggressive')];
}
