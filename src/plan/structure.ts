/**
 * The structure hash (docs/plan-format.md §2): SHA-256 over the canonical JSON of what scheduling and state
 * depend on — step anchors in document order with their parents, the effective dependency edges after
 * implicit order and lifting, per-step item counts by kind, and refactor op_texts. Prose (titles, item
 * texts, commit messages, references, purpose, text outside steps) is not part of it.
 */
import { sha256Canonical } from '../util/hash.js';
import { liftEdges } from './lift.js';
import type { ParsedPlan } from './types.js';

/** Bump when the hashed shape changes (every stored structure hash then differs once). */
const STRUCTURE_VERSION = 1;

export function structureOf(plan: Pick<ParsedPlan, 'steps' | 'edges'>): unknown {
  const { intra, cross } = liftEdges(plan);
  const edges = [...intra, ...cross].map(([a, b]) => `${a} -> ${b}`);
  edges.sort();
  return {
    v: STRUCTURE_VERSION,
    steps: plan.steps.map((s) => {
      const counts = { task: 0, test: 0, checkpoint: 0 };
      for (const it of s.items) counts[it.kind]++;
      return { anchor: s.anchor, parent: s.parent_anchor, counts, refactors: s.refactors.map((r) => r.command) };
    }),
    edges,
  };
}

export function structureHash(plan: Pick<ParsedPlan, 'steps' | 'edges'>): string {
  return sha256Canonical(structureOf(plan));
}
