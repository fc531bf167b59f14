/** Small helpers for plan tests: inline plans without indentation noise. */
import { parsePlan } from '../../src/plan/parse.js';
import type { ParsedPlan, PlanStep } from '../../src/plan/types.js';

/** Removes the common leading indentation and the first newline of a template literal. */
export function doc(strings: TemplateStringsArray, ...values: unknown[]): string {
  let text = strings.reduce((acc, s, i) => acc + s + (i < values.length ? String(values[i]) : ''), '');
  text = text.replace(/^\n/, '');
  const indents = text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => /^ */.exec(l)![0].length);
  const cut = indents.length ? Math.min(...indents) : 0;
  return text
    .split('\n')
    .map((l) => l.slice(cut))
    .join('\n');
}

export function parse(text: string | Uint8Array): ParsedPlan {
  return parsePlan(text);
}

export function step(plan: ParsedPlan, anchor: string): PlanStep {
  const s = plan.steps.find((x) => x.anchor === anchor);
  if (!s) throw new Error(`no step ${anchor}; steps: ${plan.steps.map((x) => x.anchor).join(', ')}`);
  return s;
}

export function codes(plan: { diagnostics: { code: string }[] }): string[] {
  return plan.diagnostics.map((d) => d.code);
}

export function counts(s: PlanStep): { task: number; test: number; checkpoint: number } {
  const c = { task: 0, test: 0, checkpoint: 0 };
  for (const it of s.items) c[it.kind]++;
  return c;
}
