/**
 * Dependency-graph helpers for the validator: strongly connected components (iterative Tarjan, so deep
 * chains of thousands of steps cannot overflow the stack) and one readable cycle per cyclic component.
 */

/** Directed graph: node → successors (a node depends on its successors). */
export type Graph = Map<string, string[]>;

export function buildGraph(nodes: Iterable<string>, edges: Iterable<readonly [string, string]>): Graph {
  const g: Graph = new Map();
  for (const n of nodes) if (!g.has(n)) g.set(n, []);
  for (const [a, b] of edges) {
    if (!g.has(a)) g.set(a, []);
    if (!g.has(b)) g.set(b, []);
    const succ = g.get(a)!;
    if (!succ.includes(b)) succ.push(b);
  }
  return g;
}

/** Strongly connected components, each in discovery order. */
function stronglyConnected(g: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  let counter = 0;
  for (const root of g.keys()) {
    if (index.has(root)) continue;
    const work: { node: string; next: number }[] = [{ node: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const succ = g.get(frame.node) ?? [];
      if (frame.next < succ.length) {
        const w = succ[frame.next++]!;
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ node: w, next: 0 });
        } else if (onStack.has(w)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(w)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== frame.node);
        out.push(comp.reverse());
      }
    }
  }
  return out;
}

/**
 * One cycle through `start` inside `members` (shortest, by BFS), as a closed path
 * `[start, …, start]`, or null when there is none.
 */
function cycleThrough(g: Graph, start: string, members: ReadonlySet<string>): string[] | null {
  const prev = new Map<string, string>();
  const queue: string[] = [start];
  for (let q = 0; q < queue.length; q++) {
    const n = queue[q]!;
    for (const w of g.get(n) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let cur = n; cur !== start; cur = prev.get(cur)!) path.push(cur);
        path.push(start);
        // path is start, pred…, start in reverse dependency order; flip to follow the edges.
        return [start, ...path.slice(1, -1).reverse(), start];
      }
      if (!prev.has(w)) {
        prev.set(w, n);
        queue.push(w);
      }
    }
  }
  return null;
}

/**
 * Every cyclic component (size > 1, or a self-loop) with one cycle starting at its earliest node in
 * `order` (lower = earlier).
 */
export function findCycles(g: Graph, order: (n: string) => number): { members: string[]; cycle: string[] }[] {
  const result: { members: string[]; cycle: string[] }[] = [];
  for (const comp of stronglyConnected(g)) {
    const first = comp[0]!;
    if (comp.length === 1 && !(g.get(first) ?? []).includes(first)) continue;
    const members = new Set(comp);
    const start = comp.slice().sort((a, b) => order(a) - order(b))[0]!;
    const cycle = cycleThrough(g, start, members);
    if (cycle) result.push({ members: comp, cycle });
  }
  result.sort((a, b) => order(a.cycle[0]!) - order(b.cycle[0]!));
  return result;
}
