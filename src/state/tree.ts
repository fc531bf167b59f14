/** Parent/child relations inside one top-level subtree (rows from `subtree()`), computed in memory. */
import type { StepRow } from './types.js';

export class Subtree {
  readonly byAnchor = new Map<string, StepRow>();
  private readonly children = new Map<string, StepRow[]>();

  constructor(readonly rows: StepRow[]) {
    for (const r of rows) {
      this.byAnchor.set(r.anchor, r);
      if (r.parent_anchor !== null) {
        const list = this.children.get(r.parent_anchor);
        if (list) list.push(r);
        else this.children.set(r.parent_anchor, [r]);
      }
    }
  }

  /** All descendants of `anchor`, in step_index order. */
  descendants(anchor: string): StepRow[] {
    const out: StepRow[] = [];
    const walk = (a: string) => {
      for (const c of this.children.get(a) ?? []) {
        out.push(c);
        walk(c.anchor);
      }
    };
    walk(anchor);
    return out.sort((a, b) => a.step_index - b.step_index);
  }

  /** Substep ancestors of `anchor` (nearest first), excluding the top-level step. */
  substepAncestors(anchor: string): StepRow[] {
    const out: StepRow[] = [];
    let cur = this.byAnchor.get(anchor);
    while (cur && cur.parent_anchor !== null) {
      const p = this.byAnchor.get(cur.parent_anchor);
      if (!p || p.parent_anchor === null) break;
      out.push(p);
      cur = p;
    }
    return out;
  }
}
