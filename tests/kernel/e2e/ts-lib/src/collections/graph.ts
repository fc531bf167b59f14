import { AppError } from '../core';
import { PriorityQueue } from './heap';

export class CycleError extends AppError {
  constructor(readonly cycle: string[]) {
    super(`cycle: ${cycle.join(' -> ')}`, 'cycle');
  }
}

/** A directed graph with string nodes and weighted edges. */
export class Graph {
  private readonly edges = new Map<string, Map<string, number>>();

  addNode(n: string): this {
    if (!this.edges.has(n)) this.edges.set(n, new Map());
    return this;
  }

  addEdge(from: string, to: string, weight = 1): this {
    this.addNode(from).addNode(to);
    this.edges.get(from)!.set(to, weight);
    return this;
  }

  get nodes(): string[] {
    return [...this.edges.keys()].sort();
  }

  successors(n: string): string[] {
    return [...(this.edges.get(n)?.keys() ?? [])].sort();
  }

  predecessors(n: string): string[] {
    return this.nodes.filter((m) => this.edges.get(m)!.has(n));
  }

  /** Kahn's algorithm; ties broken alphabetically. Throws CycleError with one cycle. */
  topologicalOrder(): string[] {
    const indegree = new Map(this.nodes.map((n) => [n, 0]));
    for (const [, out] of this.edges) for (const to of out.keys()) indegree.set(to, indegree.get(to)! + 1);
    const ready = new PriorityQueue<string>((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [n, d] of indegree) if (d === 0) ready.push(n);
    const order: string[] = [];
    while (ready.size > 0) {
      const n = ready.pop()!;
      order.push(n);
      for (const to of this.successors(n)) {
        indegree.set(to, indegree.get(to)! - 1);
        if (indegree.get(to) === 0) ready.push(to);
      }
    }
    if (order.length < indegree.size) throw new CycleError(this.findCycle());
    return order;
  }

  /** Dijkstra from `from`; unreachable nodes are absent. */
  shortestPaths(from: string): Map<string, { distance: number; path: string[] }> {
    const best = new Map<string, { distance: number; path: string[] }>([[from, { distance: 0, path: [from] }]]);
    const q = PriorityQueue.by<{ node: string; distance: number }>((x) => x.distance);
    q.push({ node: from, distance: 0 });
    const done = new Set<string>();
    while (q.size > 0) {
      const { node } = q.pop()!;
      if (done.has(node)) continue;
      done.add(node);
      const here = best.get(node)!;
      for (const [to, w] of [...(this.edges.get(node) ?? new Map<string, number>())].sort()) {
        const d = here.distance + w;
        const cur = best.get(to);
        if (!cur || d < cur.distance) {
          best.set(to, { distance: d, path: [...here.path, to] });
          q.push({ node: to, distance: d });
        }
      }
    }
    return best;
  }

  private findCycle(): string[] {
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (n: string): string[] | null => {
      state.set(n, 'open');
      stack.push(n);
      for (const to of this.successors(n)) {
        if (state.get(to) === 'open') return [...stack.slice(stack.indexOf(to)), to];
        if (!state.has(to)) {
          const c = visit(to);
          if (c) return c;
        }
      }
      stack.pop();
      state.set(n, 'done');
      return null;
    };
    for (const n of this.nodes) {
      if (state.has(n)) continue;
      const c = visit(n);
      if (c) return c;
    }
    return [];
  }
}
