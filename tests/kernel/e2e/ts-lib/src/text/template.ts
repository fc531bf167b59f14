import { AppError } from '../core';
import { formatValue } from './format';
import { slugify } from './slug';

export class TemplateError extends AppError {
  constructor(message: string, readonly offset: number) {
    super(`${message} at ${offset}`, 'template');
  }
}

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'var'; path: string[]; filters: string[] }
  | { kind: 'each'; path: string[]; as: string; body: Node[] }
  | { kind: 'if'; path: string[]; body: Node[]; otherwise: Node[] };

export type Filter = (value: unknown) => unknown;

const BUILTIN_FILTERS: Record<string, Filter> = {
  upper: (v) => String(v).toUpperCase(),
  lower: (v) => String(v).toLowerCase(),
  slug: (v) => slugify(String(v)),
  money: (v) => (typeof v === 'number' ? formatValue(v, 2) : String(v)),
  list: (v) => (Array.isArray(v) ? formatValue(v.map(String), ', ') : String(v)),
  count: (v) => (Array.isArray(v) ? v.length : 0),
};

/** A compiled template: `{{ a.b | upper }}`, `{{#each items as it}}…{{/each}}`, `{{#if x}}…{{else}}…{{/if}}`. */
export class Template {
  private readonly nodes: Node[];

  constructor(readonly source: string, private readonly filters: Record<string, Filter> = {}) {
    const { nodes, at } = parseNodes(source, 0, null);
    if (at !== source.length) throw new TemplateError('unexpected closing tag', at);
    this.nodes = nodes;
  }

  render(data: Record<string, unknown>): string {
    return this.renderNodes(this.nodes, [data]);
  }

  private renderNodes(nodes: Node[], scopes: Record<string, unknown>[]): string {
    let out = '';
    for (const n of nodes) {
      if (n.kind === 'text') out += n.text;
      else if (n.kind === 'var') {
        let v = lookup(scopes, n.path);
        for (const f of n.filters) {
          const fn = this.filters[f] ?? BUILTIN_FILTERS[f];
          if (!fn) throw new TemplateError(`unknown filter ${f}`, 0);
          v = fn(v);
        }
        out += v === undefined || v === null ? '' : String(v);
      } else if (n.kind === 'each') {
        const items = lookup(scopes, n.path);
        if (Array.isArray(items)) for (const it of items) out += this.renderNodes(n.body, [{ [n.as]: it }, ...scopes]);
      } else {
        const v = lookup(scopes, n.path);
        const truthy = Array.isArray(v) ? v.length > 0 : Boolean(v);
        out += this.renderNodes(truthy ? n.body : n.otherwise, scopes);
      }
    }
    return out;
  }
}

function lookup(scopes: Record<string, unknown>[], path: string[]): unknown {
  for (const scope of scopes) {
    if (!(path[0]! in scope)) continue;
    let v: unknown = scope;
    for (const p of path) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
    return v;
  }
  return undefined;
}

function parseNodes(src: string, at: number, closing: string | null): { nodes: Node[]; at: number; sawElse?: Node[] } {
  const nodes: Node[] = [];
  while (at < src.length) {
    const open = src.indexOf('{{', at);
    if (open < 0) {
      nodes.push({ kind: 'text', text: src.slice(at) });
      return { nodes, at: src.length };
    }
    if (open > at) nodes.push({ kind: 'text', text: src.slice(at, open) });
    const close = src.indexOf('}}', open);
    if (close < 0) throw new TemplateError('unclosed tag', open);
    const tag = src.slice(open + 2, close).trim();
    at = close + 2;
    if (tag.startsWith('/')) {
      if (tag.slice(1) !== closing) throw new TemplateError(`unexpected {{${tag}}}`, open);
      return { nodes, at: open };
    }
    if (tag === 'else') {
      if (closing !== 'if') throw new TemplateError('else outside if', open);
      const rest = parseNodes(src, at, 'if');
      return { nodes, at: rest.at, sawElse: rest.nodes };
    }
    if (tag.startsWith('#each ')) {
      const m = /^#each\s+([\w.]+)\s+as\s+(\w+)$/.exec(tag);
      if (!m) throw new TemplateError('bad each tag', open);
      const body = parseNodes(src, at, 'each');
      at = skipClose(src, body.at, 'each');
      nodes.push({ kind: 'each', path: m[1]!.split('.'), as: m[2]!, body: body.nodes });
    } else if (tag.startsWith('#if ')) {
      const body = parseNodes(src, at, 'if');
      at = skipClose(src, body.at, 'if');
      nodes.push({ kind: 'if', path: tag.slice(4).trim().split('.'), body: body.nodes, otherwise: body.sawElse ?? [] });
    } else {
      const [expr, ...filters] = tag.split('|').map((p) => p.trim());
      if (!expr || !/^[\w.]+$/.test(expr)) throw new TemplateError(`bad expression ${JSON.stringify(tag)}`, open);
      nodes.push({ kind: 'var', path: expr.split('.'), filters });
    }
  }
  if (closing) throw new TemplateError(`missing {{/${closing}}}`, at);
  return { nodes, at };
}

function skipClose(src: string, at: number, name: string): number {
  const tag = `{{/${name}}}`;
  if (!src.startsWith(tag, at)) throw new TemplateError(`missing ${tag}`, at);
  return at + tag.length;
}

export function render(source: string, data: Record<string, unknown>): string {
  return new Template(source).render(data);
}
