export { show, fieldsOf, type Expr, type Literal, type CompareOp, type Token } from './ast';
export { tokenize, QuerySyntaxError } from './lexer';
export { Parser, parseQuery } from './parser';
export { evaluate, globMatch, Collection } from './evaluate';
