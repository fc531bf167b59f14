import { formatValue } from '../text';

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
