/**
 * `state graph` (docs/state.md §4): the dependency graph with each step's status, as Mermaid or DOT text.
 * `edges` are `[prerequisite, dependent]` (the direction of the arrows), from the effective dependencies.
 */
import { TugError } from '../contract/errors.js';
import type { StateContext } from './context.js';
import { resolvePlanRef, requirePlanRow } from './plan-ref.js';
import { stepsOfPlan } from './queries/steps.js';
import { depsOfPlan } from './queries/deps.js';

export type GraphFormat = 'mermaid' | 'dot';

export interface GraphResult {
  format: GraphFormat;
  text: string;
  nodes: { anchor: string; status: string }[];
  edges: [string, string][];
}

const FILL: Record<string, string> = {
  completed: '#c8e6c9',
  in_progress: '#fff59d',
  claimed: '#b3e5fc',
  failed: '#ffcdd2',
  needs_human: '#e1bee7',
  pending: '#eeeeee',
};

export async function graph(
  ctx: StateContext,
  input: { plan: string; format?: GraphFormat | undefined },
): Promise<GraphResult> {
  const format = input.format ?? 'mermaid';
  if (format !== 'mermaid' && format !== 'dot')
    throw new TugError('InvalidArgument', { reason: `--format must be mermaid or dot, got ${JSON.stringify(format)}` });
  const ref = await resolvePlanRef(ctx, input.plan);
  await requirePlanRow(ctx, ref);
  const store = ctx.store!;
  const { steps, deps } = await store.read(async (c) => ({
    steps: await stepsOfPlan(c, ref.plan_path),
    deps: await depsOfPlan(c, ref.plan_path),
  }));
  const nodes = steps.map((s) => ({ anchor: s.anchor, status: s.status }));
  const edges = deps.map((d) => [d.depends_on, d.step_anchor] as [string, string]);
  const label = (s: (typeof steps)[number]) => `Step ${s.step_id}: ${s.title}`.replace(/["\\]/g, "'");
  let text: string;
  if (format === 'mermaid') {
    const id = (a: string) => a.replace(/[^A-Za-z0-9_]/g, '_');
    const lines = ['flowchart TD'];
    for (const s of steps) lines.push(`  ${id(s.anchor)}["${label(s)}<br/>${s.status}"]:::${s.status}`);
    for (const [a, b] of edges) lines.push(`  ${id(a)} --> ${id(b)}`);
    for (const [status, fill] of Object.entries(FILL)) lines.push(`  classDef ${status} fill:${fill}`);
    text = lines.join('\n') + '\n';
  } else {
    const lines = [`digraph ${JSON.stringify(ref.plan_path)} {`, '  rankdir=TB;', '  node [shape=box, style=filled];'];
    for (const s of steps)
      lines.push(
        `  ${JSON.stringify(s.anchor)} [label=${JSON.stringify(`${label(s)}\n[${s.status}]`)}, fillcolor=${JSON.stringify(FILL[s.status] ?? '#ffffff')}];`,
      );
    for (const [a, b] of edges) lines.push(`  ${JSON.stringify(a)} -> ${JSON.stringify(b)};`);
    lines.push('}');
    text = lines.join('\n') + '\n';
  }
  return { format, text, nodes, edges };
}
