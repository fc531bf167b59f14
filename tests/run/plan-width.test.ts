import { describe, expect, it } from 'vitest';
import { planWidth } from '../../src/run/schedule.js';
import type { ParsedPlan, PlanStep } from '../../src/plan/types.js';
import { doc, parse } from '../plan/helpers.js';

type Plan = Pick<ParsedPlan, 'steps' | 'edges'>;

/** A plan of n top-level steps `s0…s<n-1>` with `[from, to]` index pairs (from waits on to). */
function graph(n: number, edges: [number, number][]): Plan {
  const steps = Array.from(
    { length: n },
    (_, i) => ({ anchor: `s${i}`, parent_anchor: null, step_index: i }) as unknown as PlanStep,
  );
  return { steps, edges: edges.map(([a, b]) => [`s${a}`, `s${b}`]) };
}

/** The width by brute force: the largest set with no path between two of its members. */
function bruteWidth(n: number, edges: [number, number][]): number {
  const reach = Array.from({ length: n }, () => new Set<number>());
  for (let changed = true; changed;) {
    changed = false;
    for (const [a, b] of edges)
      for (const x of [b, ...reach[b]!])
        if (!reach[a]!.has(x)) {
          reach[a]!.add(x);
          changed = true;
        }
  }
  let best = 0;
  for (let mask = 0; mask < 1 << n; mask++) {
    const members = [...Array(n).keys()].filter((i) => mask & (1 << i));
    if (members.length <= best) continue;
    if (members.every((a) => members.every((b) => !reach[a]!.has(b)))) best = members.length;
  }
  return best;
}

/** A deterministic pseudo-random generator (the tests must not depend on Math.random). */
function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

function randomDag(n: number, p: number, next: () => number): [number, number][] {
  const edges: [number, number][] = [];
  for (let a = 0; a < n; a++) for (let b = 0; b < a; b++) if (next() < p) edges.push([a, b]);
  return edges;
}

describe('planWidth', () => {
  it('is 1 for a chain, n for independent steps, 0 for nothing left', () => {
    expect(
      planWidth(
        graph(5, [
          [1, 0],
          [2, 1],
          [3, 2],
          [4, 3],
        ]),
      ),
    ).toBe(1);
    expect(planWidth(graph(5, []))).toBe(5);
    expect(planWidth(graph(1, []))).toBe(1);
    expect(planWidth(graph(0, []))).toBe(0);
    expect(planWidth(graph(2, [[1, 0]]), new Set(['s0', 's1']))).toBe(0);
  });

  it('counts two independent chains as 2, and narrows when completed steps are left out', () => {
    // s0 ← s1 ← s2 and s3 ← s4 ← s5
    const two = graph(6, [
      [1, 0],
      [2, 1],
      [4, 3],
      [5, 4],
    ]);
    expect(planWidth(two)).toBe(2);
    expect(planWidth(two, new Set(['s3', 's4', 's5']))).toBe(1);
    // A fan: s0 then four steps, each waiting on it; with s0 completed the four can run together.
    const fan = graph(5, [
      [1, 0],
      [2, 0],
      [3, 0],
      [4, 0],
    ]);
    expect(planWidth(fan)).toBe(4);
    expect(planWidth(fan, new Set(['s0']))).toBe(4);
  });

  it('follows dependencies through other steps (a path, not only an edge, orders two steps)', () => {
    // s2 waits on s1, s1 on s0, and s3 on s0: {s2, s3} and {s1, s3} are the largest antichains.
    expect(
      planWidth(
        graph(4, [
          [1, 0],
          [2, 1],
          [3, 0],
        ]),
      ),
    ).toBe(2);
    // A zigzag where the greedy chain cover is not the best: width 3 = {s3, s4, s5}.
    expect(
      planWidth(
        graph(6, [
          [3, 0],
          [4, 0],
          [4, 1],
          [5, 2],
          [3, 1],
        ]),
      ),
    ).toBe(3);
  });

  it('agrees with brute force on random small plans', () => {
    const next = rng(7);
    for (let k = 0; k < 300; k++) {
      const n = 1 + Math.floor(next() * 11);
      const edges = randomDag(n, next() * 0.6, next);
      expect(planWidth(graph(n, edges)), JSON.stringify({ n, edges })).toBe(bruteWidth(n, edges));
    }
  });

  it('counts top-level steps only, with the dependencies lifted from their substeps', () => {
    const plan = parse(doc`
      ## Steps

      #### Step 1: One

      **Depends on:** none

      #### Step 2: Two

      **Depends on:** none

      ##### Step 2.1: Two-one

      **Depends on:** #step-1

      #### Step 3: Three

      **Depends on:** none
    `);
    // step-2 waits on step-1 through its substep; step-3 waits on nothing.
    expect(planWidth(plan)).toBe(2);
    expect(planWidth(plan, new Set(['step-1']))).toBe(2);
    expect(planWidth(plan, new Set(['step-3']))).toBe(1);
  });

  it('is quick for plans of thousands of steps', () => {
    const chain = graph(
      1000,
      Array.from({ length: 999 }, (_, i) => [i + 1, i] as [number, number]),
    );
    expect(planWidth(chain)).toBe(1);
    expect(planWidth(graph(1000, []))).toBe(1000);
    // 2,000 steps, each waiting on a few random earlier ones: a dense closure.
    const next = rng(11);
    const edges: [number, number][] = [];
    for (let a = 1; a < 2000; a++) for (let k = 0; k < 3; k++) edges.push([a, Math.floor(next() * a)]);
    const w = planWidth(graph(2000, edges));
    expect(w).toBeGreaterThanOrEqual(1);
    expect(w).toBeLessThan(2000);
    // Two interleaved chains of 1,000 steps each.
    const two = graph(
      2000,
      Array.from({ length: 1998 }, (_, i) => [i + 2, i] as [number, number]),
    );
    expect(planWidth(two)).toBe(2);
  });
});
