/**
 * The schedule `tugcode run --dry-run` prints (docs/run.md §1): the waves of top-level steps that can run
 * together, the critical path, and per step what it will execute. Pure: a parsed plan in, data out.
 *
 * Claim units are top-level steps; a substep's dependencies are lifted to top-level ancestors
 * (docs/state.md §3, src/plan/lift.ts), and substeps are listed under their parent in the order the
 * driver runs them inside the claim (topological over the subtree's own edges, ties by `step_index`).
 */
import { touchesOverlap } from '../plan/touches.js';
import { liftEdges, liftedDependencies, liftedTouches, topLevelMap } from '../plan/lift.js';
import type { ParsedPlan, PlanStep } from '../plan/types.js';
import { checkpointCommand } from './checkpoints.js';
import { workersText } from './render-text.js';

export interface ScheduledStep {
  step_anchor: string;
  title: string;
  /** 1-based wave number: the step is in `waves[wave - 1]`. */
  wave: number;
  /** Lifted dependencies (top-level anchors), `step_index` order, including completed ones. */
  depends_on: string[];
  /** Each declared refactor's op text (its backticked command, else the item's text). */
  refactors: string[];
  implementer: string | null;
  /**
   * The kept commit a human approved (`state decide --approve`, docs/run.md §6.3): the run integrates it as it
   * is, with no implementer (`implementer` null); absent otherwise.
   */
  approved_commit?: string;
  /** The step's own checkpoint items that are commands (docs/run.md §3); empty when checkpoints are off. */
  checkpoint_commands: string[];
  /** Every descendant substep, in execution order inside the claim. */
  substeps: string[];
}

export interface Schedule {
  /** Topological layers of the steps still to run (Kahn), each in `step_index` order. */
  waves: string[][];
  /** The longest dependency chain among the steps still to run (by step count), first step first. */
  critical_path: string[];
  /** Every top-level step still to run, in `step_index` order. */
  steps: ScheduledStep[];
  /** Top-level steps left out because they are already completed (`o.done`), `step_index` order. */
  done: string[];
  /**
   * Pairs of steps still to run whose `**Touches:**` overlap: they never run at the same time (docs/state.md
   * §3.12). A pair already ordered by its dependencies (one waits on the other, directly or not) is left out.
   */
  apart: [string, string][];
}

export interface ScheduleOptions {
  implementer: string | null;
  checkpoints: boolean;
  /** Anchors of top-level steps already completed: left out, their dependents treated as unblocked. */
  done?: Set<string>;
  /**
   * Anchors of top-level steps failed at their attempt cap: the run claims none of them until they are reset,
   * so they are left out with every step behind them (docs/run.md §1.10).
   */
  failed?: Set<string>;
  /**
   * Anchors of top-level steps waiting for a human's decision (`needs_human`, docs/run.md §6.3): the run claims
   * none of them until `tugcode state decide`, so they are left out with the steps behind them too.
   */
  waiting?: Set<string>;
  /** Top-level steps a human approved, with their kept commit: no implementer runs for them (docs/run.md §6.3). */
  approved?: Map<string, string>;
}

type Plan = Pick<ParsedPlan, 'steps' | 'edges'>;

export function schedule(plan: Plan, o: ScheduleOptions): Schedule {
  const done = o.done ?? new Set<string>();
  const tops = uniqueSteps(plan).filter((s) => s.parent_anchor === null);
  const index = new Map(uniqueSteps(plan).map((s) => [s.anchor, s.step_index]));
  const byIndex = (a: string, b: string) => (index.get(a) ?? 0) - (index.get(b) ?? 0);
  const lifted = liftedDependencies(plan);
  const stuck = behind(
    tops.map((s) => s.anchor),
    lifted,
    new Set([...(o.failed ?? []), ...(o.waiting ?? [])]),
  );
  const todo = tops.filter((s) => !done.has(s.anchor) && !stuck.has(s.anchor));
  const todoSet = new Set(todo.map((s) => s.anchor));
  // Dependencies that still matter: on steps that are themselves still to run.
  const open = new Map(todo.map((s) => [s.anchor, (lifted.get(s.anchor) ?? []).filter((d) => todoSet.has(d))]));

  const waves = layers(
    todo.map((s) => s.anchor),
    open,
    byIndex,
  );
  const waveOf = new Map<string, number>();
  waves.forEach((w, i) => w.forEach((a) => waveOf.set(a, i + 1)));

  const substeps = substepOrder(plan, byIndex);
  const steps: ScheduledStep[] = todo.map((s) => {
    const approved = o.approved?.get(s.anchor);
    return {
      step_anchor: s.anchor,
      title: s.title,
      wave: waveOf.get(s.anchor) ?? waves.length,
      depends_on: lifted.get(s.anchor) ?? [],
      refactors: s.refactors.map((r) => r.command ?? r.text),
      implementer: approved === undefined ? o.implementer : null,
      ...(approved === undefined ? {} : { approved_commit: approved }),
      checkpoint_commands: o.checkpoints ? commandsOf(s) : [],
      substeps: substeps.get(s.anchor) ?? [],
    };
  });

  return {
    waves,
    critical_path: criticalPath(waves, open, byIndex),
    steps,
    done: tops.filter((s) => done.has(s.anchor)).map((s) => s.anchor),
    apart: apartPairs(plan, todo, open),
  };
}

/** `failed` and every step waiting on one of them through `deps`, directly or not. */
function behind(nodes: string[], deps: Map<string, string[]>, failed: Set<string>): Set<string> {
  const out = new Set(failed);
  for (let grew = true; grew;) {
    grew = false;
    for (const n of nodes)
      if (!out.has(n) && (deps.get(n) ?? []).some((d) => out.has(d))) {
        out.add(n);
        grew = true;
      }
  }
  return out;
}

/**
 * The pairs of steps whose Touches overlap, in step order, a step's substeps' Touches counting as its own
 * (plan/lift.ts); none without Touches (picomatch stays unloaded). A pair whose steps are ordered by the
 * dependencies still open (`deps`, transitively) could never run together anyway: it is not listed.
 */
function apartPairs(plan: Plan, todo: PlanStep[], deps: Map<string, string[]>): [string, string][] {
  const lifted = liftedTouches(plan);
  const touching = todo
    .map((s) => ({ anchor: s.anchor, touches: lifted.get(s.anchor) ?? s.touches }))
    .filter((s) => s.touches.length > 0);
  if (touching.length < 2) return [];
  const before = ancestors(deps);
  const ordered = (a: string, b: string) => before(a).has(b) || before(b).has(a);
  const out: [string, string][] = [];
  touching.forEach((a, i) => {
    for (const b of touching.slice(i + 1))
      if (!ordered(a.anchor, b.anchor) && touchesOverlap(a.touches, b.touches)) out.push([a.anchor, b.anchor]);
  });
  return out;
}

/** `before(n)`: every step `n` waits on through `deps`, directly or not (memoised; a cycle ends the walk). */
function ancestors(deps: Map<string, string[]>): (n: string) => Set<string> {
  const memo = new Map<string, Set<string>>();
  const before = (n: string): Set<string> => {
    const known = memo.get(n);
    if (known) return known;
    const out = new Set<string>();
    memo.set(n, out);
    for (const d of deps.get(n) ?? []) {
      out.add(d);
      for (const x of before(d)) out.add(x);
    }
    return out;
  };
  return before;
}

function commandsOf(s: PlanStep): string[] {
  const out: string[] = [];
  for (const it of s.items) {
    if (it.kind !== 'checkpoint') continue;
    const cmd = checkpointCommand(it.text);
    if (cmd !== null) out.push(cmd);
  }
  return out;
}

/** Steps with duplicate anchors (an invalid plan) keep their first occurrence, as lifting does. */
function uniqueSteps(plan: Plan): PlanStep[] {
  const seen = new Set<string>();
  return plan.steps.filter((s) => {
    if (seen.has(s.anchor)) return false;
    seen.add(s.anchor);
    return true;
  });
}

/**
 * Kahn's algorithm by layers: a node's layer is one more than its deepest dependency's. Nodes left in a
 * cycle (an invalid plan; the driver validates first) form one last layer rather than vanish.
 */
function layers(nodes: string[], deps: Map<string, string[]>, order: (a: string, b: string) => number): string[][] {
  const pending = new Map(nodes.map((n) => [n, new Set(deps.get(n) ?? [])]));
  const out: string[][] = [];
  while (pending.size > 0) {
    let wave = [...pending.keys()].filter((n) => pending.get(n)!.size === 0);
    if (wave.length === 0) wave = [...pending.keys()];
    wave.sort(order);
    for (const n of wave) pending.delete(n);
    for (const left of pending.values()) for (const n of wave) left.delete(n);
    out.push(wave);
  }
  return out;
}

/**
 * Longest chain by step count: walking the waves in order, each step's chain extends its longest
 * dependency's chain (ties: the dependency with the lower `step_index`); the path ends at the step with
 * the longest chain (ties: lower `step_index`).
 */
function criticalPath(
  waves: string[][],
  deps: Map<string, string[]>,
  order: (a: string, b: string) => number,
): string[] {
  const length = new Map<string, number>();
  const prev = new Map<string, string | null>();
  for (const wave of waves) {
    const settled: [string, string | null][] = [];
    for (const n of wave) {
      let best: string | null = null;
      for (const d of [...(deps.get(n) ?? [])].sort(order)) {
        const l = length.get(d);
        // Only dependencies in earlier waves count (in a cycle's wave, the members' edges among them do not).
        if (l === undefined) continue;
        if (best === null || l > length.get(best)!) best = d;
      }
      settled.push([n, best]);
    }
    for (const [n, best] of settled) {
      length.set(n, best === null ? 1 : length.get(best)! + 1);
      prev.set(n, best);
    }
  }
  let end: string | null = null;
  for (const n of [...length.keys()].sort(order)) if (end === null || length.get(n)! > length.get(end)!) end = n;
  const path: string[] = [];
  for (let cur = end; cur !== null; cur = prev.get(cur) ?? null) path.unshift(cur);
  return path;
}

/** Top-level anchor → its descendants in execution order (topological over intra-subtree edges). */
function substepOrder(plan: Plan, order: (a: string, b: string) => number): Map<string, string[]> {
  const top = topLevelMap(plan);
  const members = new Map<string, string[]>();
  for (const s of uniqueSteps(plan)) {
    if (s.parent_anchor === null) continue;
    const t = top.get(s.anchor)!;
    members.set(t, [...(members.get(t) ?? []), s.anchor]);
  }
  const deps = new Map<string, string[]>();
  for (const [from, to] of liftEdges(plan).intra) deps.set(from, [...(deps.get(from) ?? []), to]);
  const out = new Map<string, string[]>();
  for (const [t, subs] of members) {
    const inTree = new Set(subs);
    const local = new Map(subs.map((a) => [a, (deps.get(a) ?? []).filter((d) => inTree.has(d))]));
    out.set(t, sequence(subs, local, order));
  }
  return out;
}

/** A topological sequence taking, at each point, the ready node with the lowest `step_index`. */
function sequence(nodes: string[], deps: Map<string, string[]>, order: (a: string, b: string) => number): string[] {
  const pending = new Map(nodes.map((n) => [n, new Set(deps.get(n) ?? [])]));
  const out: string[] = [];
  while (pending.size > 0) {
    const ready = [...pending.keys()].filter((n) => pending.get(n)!.size === 0).sort(order);
    const next = ready[0] ?? [...pending.keys()].sort(order)[0]!;
    pending.delete(next);
    for (const left of pending.values()) left.delete(next);
    out.push(next);
  }
  return out;
}

/** The steps a run would claim none of (docs/run.md §1.10), with why, as the run's summary says it. */
export interface HeldBack {
  failed_steps: { step_anchor: string; reason: string }[];
  blocked_reasons: { step_anchor: string; reason: string }[];
  /** Steps waiting for a human's decision (docs/run.md §6.3), and those behind them. */
  needs_human?: { step_anchor: string; reason: string }[];
  waiting_reasons?: { step_anchor: string; reason: string }[];
  /** The review gate the run uses (docs/run.md §6), null when off: the dry run shows it, to check it is on. */
  review?: ReviewGate | null;
  /** The plan's usage already reached the run's budget (docs/run.md §7.2): the run claims nothing. */
  budget_spent?: boolean;
  /** The workers the real run starts, and `--workers` (more when the plan keeps fewer busy, docs/run.md §1). */
  workers?: { workers: number; requested: number };
}

/** The review gate of a run: its reviewer command (an agent preset's command line), the preset, the rounds. */
export interface ReviewGate {
  reviewer: string;
  review_agent: string | null;
  rounds: number;
}

/**
 * Readable text of a schedule: waves, critical path, then per step what runs. The steps held back (failed
 * at their cap, waiting for a human, and those behind them) come first, as rows of the run's summary table.
 */
export function scheduleText(s: Schedule, held: HeldBack = { failed_steps: [], blocked_reasons: [] }): string {
  const lines: string[] = [];
  const human = held.needs_human ?? [];
  const heldLines = [
    ...held.failed_steps.map((f) => ['failed', f.step_anchor, f.reason] as const),
    ...human.map((n) => ['needs you', n.step_anchor, n.reason] as const),
    ...held.blocked_reasons.map((b) => ['blocked', b.step_anchor, b.reason] as const),
    ...(held.waiting_reasons ?? []).map((b) => ['waiting', b.step_anchor, b.reason] as const),
  ];
  const width = Math.max(0, ...heldLines.map(([, a]) => a.length));
  const label = Math.max(7, ...heldLines.map(([what]) => what.length));
  const heldRows = heldLines.map(([what, a, why]) => `${a.padEnd(width)}  ${what.padEnd(label)}  ${why}`);
  if (s.steps.length === 0) {
    const nf = held.failed_steps.length;
    const nh = human.length;
    const until = [
      ...(held.budget_spent ? ['the budget is raised (it is spent)'] : []),
      ...(nf > 0 ? [`the failed step${nf === 1 ? ' is' : 's are'} reset`] : []),
      ...(nh > 0 ? [`the step${nh === 1 ? '' : 's'} waiting for a human ${nh === 1 ? 'is' : 'are'} decided`] : []),
    ];
    lines.push(
      until.length > 0
        ? `nothing to run until ${until.join(' and ')}`
        : s.done.length > 0
          ? 'nothing to run: every step is completed'
          : 'nothing to run: the plan has no steps',
    );
    if (until.length > 0 && s.done.length > 0) lines.push(`already completed: ${s.done.join(', ')}`);
    lines.push(...heldRows);
    return lines.join('\n') + '\n';
  }
  const total = s.steps.length;
  lines.push(`${total} step${total === 1 ? '' : 's'} in ${s.waves.length} wave${s.waves.length === 1 ? '' : 's'}`);
  if (s.done.length > 0) lines.push(`already completed: ${s.done.join(', ')}`);
  lines.push(...heldRows);
  lines.push('');
  s.waves.forEach((w, i) => lines.push(`wave ${i + 1}: ${w.join(', ')}`));
  const n = s.critical_path.length;
  lines.push(`critical path: ${s.critical_path.join(' → ')} (${n} step${n === 1 ? '' : 's'})`);
  for (const [a, b] of s.apart) lines.push(`never together (Touches overlap): ${a}, ${b}`);
  if (held.workers) lines.push(`the run starts ${workersText(held.workers.workers, held.workers.requested)}`);
  if (held.review !== undefined) {
    // A preset by its name (its command line is in the JSON and the README), a command as it runs.
    const r = held.review;
    const rounds = r ? `, at most ${r.rounds} round${r.rounds === 1 ? '' : 's'} a step` : '';
    lines.push(
      `review gate: ${r ? `${r.review_agent ? `${r.review_agent} (review agent)` : r.reviewer}${rounds}` : 'none'}`,
    );
  }
  for (const st of s.steps) {
    lines.push('');
    lines.push(`${st.step_anchor}  ${st.title}  (wave ${st.wave})`);
    lines.push(`  depends on:   ${st.depends_on.length > 0 ? st.depends_on.join(', ') : 'none'}`);
    if (st.substeps.length > 0) lines.push(`  substeps:     ${st.substeps.join(', ')}`);
    for (const r of st.refactors) lines.push(`  refactor:     ${r}`);
    lines.push(
      st.approved_commit === undefined
        ? `  implementer:  ${st.implementer ?? 'none'}`
        : `  implementer:  none (approved: integrates the approved commit ${st.approved_commit.slice(0, 12)})`,
    );
    for (const c of st.checkpoint_commands) lines.push(`  checkpoint:   ${c}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * The workers a run of `plan` starts (docs/run.md §1 item 3): `requested`, but no more than the steps not in
 * `done` can keep busy at once (planWidth), and at least one. The run and its dry run both ask this.
 */
export function workersToStart(plan: Plan, requested: number, done: ReadonlySet<string>): number {
  return requested <= 1 ? requested : Math.max(1, Math.min(requested, planWidth(plan, done)));
}

/**
 * The most top-level steps still to run (those not in `done`) that could ever run at the same time: the
 * largest set of them none of which waits on another, directly or through other steps (docs/run.md §1
 * item 3). A run starts no more workers than this, as the others would never claim a step. Dependencies
 * are the lifted ones the claim rule uses (docs/state.md §3); Touches only keep steps further apart, so they
 * are left out of this upper bound. By Dilworth's theorem the width of the dependency order is n − the
 * largest matching of the bipartite graph of its transitive closure (Hopcroft–Karp); the closure is kept
 * as one bit set per step, n²/8 bytes (0.5 MB for 2,000 steps).
 */
export function planWidth(plan: Plan, done: ReadonlySet<string> = new Set()): number {
  const tops = uniqueSteps(plan)
    .filter((s) => s.parent_anchor === null && !done.has(s.anchor))
    .map((s) => s.anchor);
  const n = tops.length;
  if (n <= 1) return n;
  const id = new Map(tops.map((a, i) => [a, i]));
  const lifted = liftedDependencies(plan);
  // A dependency on a completed step no longer orders anything (dropping an edge only widens the bound).
  const deps = tops.map((a, i) => [
    ...new Set((lifted.get(a) ?? []).map((d) => id.get(d) ?? -1).filter((d) => d >= 0 && d !== i)),
  ]);
  const order = topological(deps);
  // A cycle (an invalid plan: the run validates it first) bounds nothing.
  if (order.length < n) return n;
  const words = (n + 31) >>> 5;
  const reach = new Uint32Array(n * words); // row u: every step u waits on, directly or not
  for (const u of order)
    for (const d of deps[u]!) {
      reach[u * words + (d >>> 5)]! |= 1 << (d & 31);
      for (let w = 0; w < words; w++) reach[u * words + w]! |= reach[d * words + w]!;
    }
  return n - maxMatching(n, words, reach);
}

/** Kahn's order over `deps` (indices); nodes in a cycle are left out. */
function topological(deps: number[][]): number[] {
  const n = deps.length;
  const waiting = new Int32Array(n);
  const dependents: number[][] = Array.from({ length: n }, () => []);
  deps.forEach((ds, u) => {
    waiting[u] = ds.length;
    for (const d of ds) dependents[d]!.push(u);
  });
  const out: number[] = [];
  for (let u = 0; u < n; u++) if (waiting[u] === 0) out.push(u);
  for (let i = 0; i < out.length; i++) for (const v of dependents[out[i]!]!) if (--waiting[v]! === 0) out.push(v);
  return out;
}

/**
 * The size of a largest matching of the bipartite graph with an edge u → v for each bit v of row u of `adj`
 * (Hopcroft–Karp; the depth-first search is iterative, since a chain of steps makes paths as long as it).
 */
function maxMatching(n: number, words: number, adj: Uint32Array): number {
  const matchL = new Int32Array(n).fill(-1);
  const matchR = new Int32Array(n).fill(-1);
  const dist = new Int32Array(n);
  const next = new Int32Array(n); // per left node: the first column its search has not looked at yet
  const queue = new Int32Array(n);
  const stack = new Int32Array(n);
  const via = new Int32Array(n);
  // The first neighbour of u at or after next[u], skipping empty words; -1 when none is left.
  const neighbour = (u: number): number => {
    for (let j = next[u]!; j < n;) {
      const word = adj[u * words + (j >>> 5)]! >>> (j & 31);
      if (word === 0) {
        j = ((j >>> 5) + 1) << 5;
        continue;
      }
      const v = j + 31 - Math.clz32(word & -word);
      next[u] = v + 1;
      return v;
    }
    next[u] = n;
    return -1;
  };
  let size = 0;
  for (;;) {
    // Breadth first from the free left nodes: the layers of the shortest augmenting paths.
    let tail = 0;
    for (let u = 0; u < n; u++) {
      dist[u] = matchL[u]! < 0 ? 0 : -1;
      if (matchL[u]! < 0) queue[tail++] = u;
      next[u] = 0;
    }
    let found = false;
    for (let head = 0; head < tail; head++) {
      const u = queue[head]!;
      for (let v = neighbour(u); v >= 0; v = neighbour(u)) {
        const w = matchR[v]!;
        if (w < 0) found = true;
        else if (dist[w]! < 0) {
          dist[w] = dist[u]! + 1;
          queue[tail++] = w;
        }
      }
    }
    if (!found) return size;
    next.fill(0);
    // Depth first along the layers from each free left node; each node is tried once per phase.
    for (let root = 0; root < n; root++) {
      if (matchL[root]! >= 0) continue;
      let top = 0;
      stack[0] = root;
      while (top >= 0) {
        const u = stack[top]!;
        const v = neighbour(u);
        if (v < 0) {
          dist[u] = -1; // a dead end this phase
          top--;
          continue;
        }
        const w = matchR[v]!;
        via[top] = v;
        if (w < 0) {
          for (let k = 0; k <= top; k++) {
            matchL[stack[k]!] = via[k]!;
            matchR[via[k]!] = stack[k]!;
          }
          size++;
          break;
        }
        if (dist[w] === dist[u]! + 1) stack[++top] = w;
      }
    }
  }
}
