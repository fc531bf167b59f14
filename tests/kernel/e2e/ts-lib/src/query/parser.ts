import type { CompareOp, Expr, Literal, Token } from './ast';
import { QuerySyntaxError, tokenize } from './lexer';

/**
 * Recursive descent, lowest precedence first:
 *   or  := and ('or' and)*
 *   and := not ('and' not)*
 *   not := 'not' not | cmp
 *   cmp := value (OP value | 'has' value | 'in' '[' value (',' value)* ']')?
 */
export class Parser {
  private readonly tokens: Token[];
  private at = 0;

  constructor(readonly source: string) {
    this.tokens = tokenize(source);
  }

  parse(): Expr {
    const e = this.or();
    const t = this.peek();
    if (t.kind !== 'eof') throw new QuerySyntaxError(`unexpected ${JSON.stringify(t.text)}`, t.offset);
    return e;
  }

  private peek(): Token {
    return this.tokens[this.at]!;
  }

  private take(): Token {
    return this.tokens[this.at++]!;
  }

  private keyword(word: string): boolean {
    const t = this.peek();
    if (t.kind === 'ident' && t.text === word) {
      this.at++;
      return true;
    }
    return false;
  }

  private expect(kind: Token['kind']): Token {
    const t = this.take();
    if (t.kind !== kind) throw new QuerySyntaxError(`expected ${kind}, got ${JSON.stringify(t.text || 'end')}`, t.offset);
    return t;
  }

  private or(): Expr {
    let left = this.and();
    while (this.keyword('or')) left = { kind: 'logical', op: 'or', left, right: this.and() };
    return left;
  }

  private and(): Expr {
    let left = this.not();
    while (this.keyword('and')) left = { kind: 'logical', op: 'and', left, right: this.not() };
    return left;
  }

  private not(): Expr {
    if (this.keyword('not')) return { kind: 'not', operand: this.not() };
    return this.cmp();
  }

  private cmp(): Expr {
    const left = this.value();
    const t = this.peek();
    if (t.kind === 'op') {
      this.at++;
      return { kind: 'compare', op: t.text as CompareOp, left, right: this.value() };
    }
    if (this.keyword('has')) return { kind: 'compare', op: 'has', left, right: this.value() };
    if (this.keyword('in')) {
      this.expect('lbracket');
      const items = [this.value()];
      while (this.peek().kind === 'comma') {
        this.at++;
        items.push(this.value());
      }
      this.expect('rbracket');
      return { kind: 'in', left, items };
    }
    return left;
  }

  private value(): Expr {
    const t = this.take();
    switch (t.kind) {
      case 'number':
        return lit(Number(t.text));
      case 'string':
        return lit(t.text);
      case 'lparen': {
        const e = this.or();
        this.expect('rparen');
        return e;
      }
      case 'ident':
        if (t.text === 'true' || t.text === 'false') return lit(t.text === 'true');
        if (t.text === 'null') return lit(null);
        return { kind: 'field', path: t.text.split('.') };
      default:
        throw new QuerySyntaxError(`unexpected ${JSON.stringify(t.text || 'end')}`, t.offset);
    }
  }
}

function lit(value: Literal): Expr {
  return { kind: 'literal', value };
}

export function parseQuery(source: string): Expr {
  return new Parser(source).parse();
}
