/**
 * Syntactic facts of one Rust file from its tree-sitter tree (docs/kernel.md §6.5, Rust column): the
 * identifier at a position, declaration kinds and reference kinds (rules 2–5). Inside macro token trees,
 * where tree-sitter sees only tokens, a name followed by `(…)` or `!` is a call and one after `.` an
 * attribute. Offsets are UTF-16 indices into the BOM-stripped text.
 */
import type { ReferenceKind, SymbolKind } from '../backends/types.js';
import { ancestorOf, identifierStartingAt, isField, SyntaxFile, type SyntaxNode } from './tree-sitter.js';

const IDENTIFIERS = new Set([
  'identifier',
  'type_identifier',
  'field_identifier',
  'shorthand_field_identifier',
  'primitive_type',
]);

/** Identifiers; keywords (`self`, `Self`, `crate`, …), lifetimes and labels excluded. */
export const isRsIdentifier = (n: SyntaxNode): boolean =>
  IDENTIFIERS.has(n.type) && n.parent?.type !== 'lifetime' && n.parent?.type !== 'label' && n.text !== 'Self';

const IMPORTS = new Set(['use_declaration', 'extern_crate_declaration']);
const PATTERNS = new Set([
  'tuple_pattern',
  'tuple_struct_pattern',
  'struct_pattern',
  'field_pattern',
  'slice_pattern',
  'ref_pattern',
  'mut_pattern',
  'reference_pattern',
  'or_pattern',
  'captured_pattern',
]);

const NAMED_ITEMS: Record<string, SymbolKind> = {
  macro_definition: 'function',
  struct_item: 'class',
  union_item: 'class',
  trait_item: 'interface',
  type_item: 'type',
  associated_type: 'type',
  enum_item: 'enum',
  enum_variant: 'enum_member',
  field_declaration: 'property',
  mod_item: 'module',
  const_item: 'variable',
  static_item: 'variable',
};

/** Whether an identifier is bound by a function parameter's pattern. */
function isParameter(n: SyntaxNode): boolean {
  let x = n;
  while (x.parent && PATTERNS.has(x.parent.type)) x = x.parent;
  return x.parent?.type === 'parameter' && isField(x.parent, 'pattern', x);
}

function declKindAt(root: SyntaxNode, start16: number): SymbolKind {
  const n = identifierStartingAt(root, start16, isRsIdentifier);
  if (!n) return 'variable';
  const p = n.parent;
  if (!p) return 'variable';
  if ((p.type === 'function_item' || p.type === 'function_signature_item') && isField(p, 'name', n)) {
    const owner = p.parent?.type === 'declaration_list' ? p.parent.parent?.type : null;
    return owner === 'impl_item' || owner === 'trait_item' ? 'method' : 'function';
  }
  const kind = NAMED_ITEMS[p.type];
  if (kind && isField(p, 'name', n)) return kind;
  if ((p.type === 'use_as_clause' || p.type === 'extern_crate_declaration') && isField(p, 'alias', n)) return 'import';
  if (isParameter(n)) return 'parameter';
  return 'variable';
}

/** Whether a node is the callee of a call: `f(…)`, `a::f(…)`, `x.f(…)`, `f::<T>(…)`, `x.f::<T>(…)`. */
function isCallee(e: SyntaxNode): boolean {
  let x = e;
  if (x.parent?.type === 'generic_function' && isField(x.parent, 'function', x)) x = x.parent;
  return x.parent?.type === 'call_expression' && isField(x.parent, 'function', x);
}

function refKindAt(root: SyntaxNode, start16: number): ReferenceKind {
  const n = identifierStartingAt(root, start16, isRsIdentifier);
  if (!n) return 'reference';
  if (ancestorOf(n, IMPORTS)) return 'import';
  const p = n.parent;
  if (p?.type === 'token_tree' || p?.type === 'token_tree_pattern') {
    const next = n.nextSibling;
    if (next?.type === '!' || (next?.type === 'token_tree' && next.text.startsWith('('))) return 'call';
    return n.previousSibling?.type === '.' ? 'attribute' : 'reference';
  }
  if (p?.type === 'macro_invocation' && isField(p, 'macro', n)) return 'call';
  if (p?.type === 'scoped_identifier' && isField(p, 'name', n)) {
    if (p.parent?.type === 'macro_invocation' && isField(p.parent, 'macro', p)) return 'call';
    return isCallee(p) ? 'call' : 'reference';
  }
  if (p?.type === 'field_expression' && isField(p, 'field', n)) return isCallee(p) ? 'call' : 'attribute';
  return isCallee(n) ? 'call' : 'reference';
}

/** One Rust file's syntax; the tree lives in the shared cache. */
export class RsFile extends SyntaxFile {
  protected isIdentifier(n: SyntaxNode): boolean {
    return isRsIdentifier(n);
  }

  /** The kind of the declaration whose name starts at `start16` (§6.5 table, Rust column). */
  declKind(start16: number): SymbolKind {
    return this.tree((root) => declKindAt(root, start16));
  }

  /** Reference kind of an edit span that is not a declaration (§6.5 rules 2–5). */
  refKind(start16: number): ReferenceKind {
    return this.tree((root) => refKindAt(root, start16));
  }
}
