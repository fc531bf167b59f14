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
  const label = (s: (typeof steps)[number]) => `Step ${s.step_id}: ${s.title}`;
  let text: string;
  if (format === 'mermaid') {
    const id = (a: string) => a.replace(/[^A-Za-z0-9_]/g, '_');
    const lines = ['flowchart TD'];
    for (const s of steps) lines.push(`  ${id(s.anchor)}["${mermaidText(label(s))}<br/>${s.status}"]:::${s.status}`);
    for (const [a, b] of edges) lines.push(`  ${id(a)} --> ${id(b)}`);
    for (const [status, fill] of Object.entries(FILL)) lines.push(`  classDef ${status} fill:${fill}`);
    text = lines.join('\n') + '\n';
  } else {
    const lines = [`digraph ${dotId(ref.plan_path)} {`, '  rankdir=TB;', '  node [shape=box, style=filled];'];
    for (const s of steps)
      lines.push(
        `  ${dotId(s.anchor)} [label=${dotId(label(s), `\\n[${s.status}]`)}, fillcolor=${dotId(FILL[s.status] ?? '#ffffff')}];`,
      );
    for (const [a, b] of edges) lines.push(`  ${dotId(a)} -> ${dotId(b)};`);
    lines.push('}');
    text = lines.join('\n') + '\n';
  }
  return { format, text, nodes, edges };
}

/**
 * A DOT quoted ID: inside it only `\"` is an escape of the language, and graphviz reads `\\` in a label as one
 * backslash; `tail` (a label's own escape, `\n`) goes in as written. A line break of the text becomes a space.
 */
function dotId(text: string, tail?: string): string {
  const body = text.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[\r\n]+/g, ' ');
  return `"${body}${tail ?? ''}"`;
}

/**
 * Text inside a Mermaid `["…"]` label, which Mermaid renders as HTML: `"` would end it, `<`/`>`/`&` would be
 * markup, `#` starts an entity code and a backslash is mangled, so each is written as its entity code.
 */
function mermaidText(text: string): string {
  const code: Record<string, string> = {
    '#': '#35;',
    '"': '#quot;',
    '<': '#lt;',
    '>': '#gt;',
    '&': '#amp;',
    '\\': '#92;',
  };
  return text.replace(/[#"<>&\\]/g, (c) => code[c]!).replace(/[\r\n]+/g, ' ');
}
