/** The filter-expression language: `age >= 18 and (name ~ "a*" or tags has "x") and not admin`. */
export type Literal = string | number | boolean | null;

export type Expr =
  | { kind: 'literal'; value: Literal }
  | { kind: 'field'; path: string[] }
  | { kind: 'compare'; op: CompareOp; left: Expr; right: Expr }
  | { kind: 'logical'; op: 'and' | 'or'; left: Expr; right: Expr }
  | { kind: 'not'; operand: Expr }
  | { kind: 'in'; left: Expr; items: Expr[] };

export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=' | '~' | 'has';

export type TokenKind = 'number' | 'string' | 'ident' | 'op' | 'lparen' | 'rparen' | 'comma' | 'lbracket' | 'rbracket' | 'eof';

export interface Token {
  kind: TokenKind;
  text: string;
  offset: number;
}

/** Render an expression back to source (fully parenthesized logical nodes). */
export function show(e: Expr): string {
  switch (e.kind) {
    case 'literal':
      return typeof e.value === 'string' ? JSON.stringify(e.value) : String(e.value);
    case 'field':
      return e.path.join('.');
    case 'compare':
      return `${show(e.left)} ${e.op} ${show(e.right)}`;
    case 'logical':
      return `(${show(e.left)} ${e.op} ${show(e.right)})`;
    case 'not':
      return `not ${show(e.operand)}`;
    case 'in':
      return `${show(e.left)} in [${e.items.map(show).join(', ')}]`;
  }
}

/** Every field path an expression reads, sorted and unique. */
export function fieldsOf(e: Expr): string[] {
  const out = new Set<string>();
  const walk = (x: Expr) => {
    if (x.kind === 'field') out.add(x.path.join('.'));
    else if (x.kind === 'compare' || x.kind === 'logical') {
      walk(x.left);
      walk(x.right);
    } else if (x.kind === 'not') walk(x.operand);
    else if (x.kind === 'in') {
      walk(x.left);
      x.items.forEach(walk);
    }
  };
  walk(e);
  return [...out].sort();
}
