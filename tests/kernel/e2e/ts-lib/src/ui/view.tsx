import { formatValue, truncate } from '../text';
import type { Schema } from '../schema';

// A tiny local JSX runtime: elements render to strings; the JSX namespace lives on the factory.
export function h(tag: string | ((props: any) => string), props: Record<string, unknown> | null, ...children: unknown[]): string {
  if (typeof tag === 'function') return tag({ ...(props ?? {}), children });
  const attrs = Object.entries(props ?? {}).map(([k, v]) => ` ${k}="${String(v)}"`).join('');
  return `<${tag}${attrs}>${children.flat().join('')}</${tag}>`;
}

export namespace h {
  export namespace JSX {
    export type Element = string;
    export interface IntrinsicElements {
      div: { class?: string };
      span: { class?: string };
      li: {};
      ul: {};
      table: { class?: string };
      tr: {};
      td: { class?: string };
      th: {};
      p: { class?: string };
    }
  }
}

type Element = h.JSX.Element;

export function Price(props: { amount: number }): Element {
  return <span class="price">{formatValue(props.amount, 2)}</span>;
}

export function ItemList(props: { items: string[] }): Element {
  return (
    <ul>
      {props.items.map((i) => (
        <li>{i}</li>
      ))}
    </ul>
  );
}

export function Card(props: { title: string; amount: number }): Element {
  return (
    <div class="card">
      {props.title}
      <Price amount={props.amount} />
    </div>
  );
}

export interface Column<T> {
  title: string;
  cell: (row: T) => string | number;
}

export function Table<T>(props: { columns: Column<T>[]; rows: T[] }): Element {
  return (
    <table>
      <tr>
        {props.columns.map((c) => (
          <th>{c.title}</th>
        ))}
      </tr>
      {props.rows.map((r) => (
        <tr>
          {props.columns.map((c) => {
            const v = c.cell(r);
            return <td class={typeof v === 'number' ? 'num' : 'text'}>{typeof v === 'number' ? formatValue(v, 2) : truncate(v, 20)}</td>;
          })}
        </tr>
      ))}
    </table>
  );
}

/** A report over raw rows: only rows the schema accepts are shown; the rest are counted. */
export function Report<T>(props: { title: string; schema: Schema<T>; rows: unknown[]; columns: Column<T>[] }): Element {
  const valid: T[] = [];
  let rejected = 0;
  for (const raw of props.rows) {
    const r = props.schema.parse(raw);
    if (r.ok) valid.push(r.value);
    else rejected++;
  }
  return (
    <div class="report">
      <p class="title">{props.title}</p>
      <Table columns={props.columns} rows={valid} />
      {rejected > 0 ? <p class="rejected">{formatValue(rejected)} rejected</p> : ''}
    </div>
  );
}
