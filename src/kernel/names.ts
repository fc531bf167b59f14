/**
 * New-name validation (docs/kernel.md §3.3), done by the kernel before any backend call because backends
 * accept invalid names.
 */
import { KernelError } from './errors.js';
import { languageOf, type Language } from './language.js';

const TS_RESERVED = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally for ' +
    'function if import in instanceof new null return super switch this throw true try typeof var void while with ' +
    'implements interface let package private protected public static yield await arguments eval'
  ).split(' '),
);
const TS_TYPE_RESERVED = new Set(
  'any unknown never void undefined null object string number bigint boolean symbol'.split(' '),
);
const PY_KEYWORDS = new Set(
  (
    'False None True and as assert async await break class continue def del elif else except finally for from global ' +
    'if import in is lambda nonlocal not or pass raise return try while with yield'
  ).split(' '),
);
const RS_KEYWORDS = new Set(
  (
    'as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut ' +
    'pub ref return self Self static struct super trait true type unsafe use where while abstract become box do final ' +
    'gen macro override priv try typeof unsized virtual yield'
  ).split(' '),
);
const PY_IDENT = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*$/u;

function bad(value: string, reason: string): KernelError {
  return new KernelError('InvalidArgument', `invalid new name ${JSON.stringify(value)}: ${reason}`, {
    argument: '--to',
    value,
    reason,
  });
}

export type IsIdentifierText = (name: string) => boolean;

/** Syntax-only check (no symbol kind yet). `isTsIdentifier` is `ts.isIdentifierText` bound to ESNext. */
export function validateNewName(lang: Language, name: string, isTsIdentifier?: IsIdentifierText): void {
  if (lang === 'typescript') {
    const ok = isTsIdentifier ? isTsIdentifier(name) : /^[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*$/u.test(name);
    if (!ok) throw bad(name, 'not_an_identifier');
    if (TS_RESERVED.has(name)) throw bad(name, 'reserved_word');
  } else if (lang === 'python') {
    if (name.normalize('NFKC') !== name) throw bad(name, 'not_nfkc');
    if (!PY_IDENT.test(name)) throw bad(name, 'not_an_identifier');
    if (PY_KEYWORDS.has(name)) throw bad(name, 'reserved_word');
  } else {
    if (name.startsWith('r#')) throw bad(name, 'raw_identifier');
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw bad(name, 'not_an_identifier');
    if (name === '_') throw bad(name, 'reserved_word');
    if (RS_KEYWORDS.has(name)) throw bad(name, 'reserved_word');
  }
}

/** Checks that need the resolved symbol: unchanged names and TS type-position names. */
export function validateForSymbol(lang: Language, name: string, oldName: string, kind: string): void {
  if (name === oldName) throw bad(name, 'unchanged');
  if (lang === 'typescript' && ['class', 'interface', 'type', 'enum'].includes(kind) && TS_TYPE_RESERVED.has(name)) {
    throw bad(name, 'reserved_type_name');
  }
}

/** A JSX tag name must not become lowercase (it would turn into an intrinsic element). */
export function validateJsxTag(name: string): void {
  if (/^[a-z]/.test(name)) throw bad(name, 'lowercase_jsx_tag');
}

/**
 * Why `name` cannot be the new name of a symbol declared in `file` (the checks validateNewName makes before
 * any backend runs), or null: a plan's Refactors row is checked by the validator (E020) instead of failing
 * at run time. Null too for a file of no known language (the kernel says so when it runs).
 */
export function newNameProblem(file: string, name: string): string | null {
  const lang = languageOf(file);
  if (!lang) return null;
  try {
    validateNewName(lang, name);
    return null;
  } catch (e) {
    if (e instanceof KernelError) return e.message;
    throw e;
  }
}
