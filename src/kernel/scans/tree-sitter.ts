/**
 * web-tree-sitter for the kernel's Python and Rust syntax work (docs/kernel.md §2.2, §6.5–6.6). The package
 * is imported lazily, initialised once per process, and each grammar (`tree-sitter-python`,
 * `tree-sitter-rust`, their shipped `.wasm`) is loaded once; a TypeScript rename never loads any of it.
 *
 * Positions: web-tree-sitter parses JS strings as UTF-16, so `startIndex`/`endIndex` are UTF-16 offsets
 * into the text parsed — the unit backends speak (the BOM-stripped text); the Patch IR's conversion to
 * UTF-8 bytes happens later, in patch/positions.ts.
 *
 * Memory: trees live in wasm memory, which is not garbage-collected. Parsed trees are kept in one
 * process-wide LRU keyed by language and content hash, bounded by count and by text size; an evicted tree
 * is deleted. Nodes are only valid inside the callback that received them, so callers turn them into
 * plain data before returning.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as WTS from 'web-tree-sitter';
import { KernelError } from '../errors.js';

export type SyntaxLang = 'python' | 'rust';
export type SyntaxNode = WTS.Node;

const GRAMMAR: Record<SyntaxLang, string> = {
  python: 'tree-sitter-python/tree-sitter-python.wasm',
  rust: 'tree-sitter-rust/tree-sitter-rust.wasm',
};

/** At most this many trees, and this much parsed text (UTF-16 units), stay cached. */
export const TREE_CACHE_MAX_TREES = 64;
export const TREE_CACHE_MAX_CHARS = 4 << 20;

const require = createRequire(import.meta.url);
let runtime: Promise<typeof WTS> | null = null;
const languages = new Map<SyntaxLang, Promise<Syntax>>();

/** Load web-tree-sitter (once per process) and the grammar of `lang` (once per language). */
export function loadSyntax(lang: SyntaxLang): Promise<Syntax> {
  let p = languages.get(lang);
  if (!p) {
    p = (async () => {
      runtime ??= (async () => {
        const mod = await import('web-tree-sitter');
        // The runtime's own wasm is named explicitly, so bundling the JS cannot break its lookup.
        await mod.Parser.init({ locateFile: (name: string) => require.resolve(`web-tree-sitter/${name}`) });
        return mod;
      })().catch((e: unknown) => {
        runtime = null;
        throw e;
      });
      const mod = await runtime;
      const language = await mod.Language.load(require.resolve(GRAMMAR[lang]));
      const parser = new mod.Parser();
      parser.setLanguage(language);
      return new Syntax(lang, parser);
    })();
    p.catch(() => languages.delete(lang));
    languages.set(lang, p);
  }
  return p.catch((e: unknown) => {
    throw new KernelError('InternalError', `tree-sitter (${lang}) failed to load: ${(e as Error).message}`, {
      language: lang,
    });
  });
}

interface Cached {
  tree: WTS.Tree;
  chars: number;
}

const cache = new Map<string, Cached>();
const busy = new Set<string>();
let cachedChars = 0;

function evict(): void {
  for (const [k, c] of cache) {
    if (cache.size <= TREE_CACHE_MAX_TREES && cachedChars <= TREE_CACHE_MAX_CHARS) return;
    if (busy.has(k)) continue;
    cache.delete(k);
    cachedChars -= c.chars;
    c.tree.delete();
  }
}

/** Delete every cached tree (tests; a process that wants its wasm memory back). */
export function clearSyntaxCache(): void {
  for (const [k, c] of cache) if (!busy.has(k)) c.tree.delete();
  cache.clear();
  cachedChars = 0;
}

/** Number of cached trees (tests). */
export function syntaxCacheSize(): number {
  return cache.size;
}

export const contentKey = (text: string): string => createHash('sha1').update(text).digest('hex');

/** A UTF-16 span of the parsed text. */
export interface Span {
  start16: number;
  end16: number;
}

/** One grammar with its parser. */
export class Syntax {
  constructor(
    readonly lang: SyntaxLang,
    private readonly parser: WTS.Parser,
  ) {}

  private parse(text: string | ((index: number) => string), ranges?: WTS.Range[]): WTS.Tree {
    const tree = this.parser.parse(text, null, ranges ? { includedRanges: ranges } : undefined);
    if (!tree) throw new KernelError('InternalError', `tree-sitter (${this.lang}) returned no tree`, {});
    return tree;
  }

  /**
   * Run `fn` on the root of `text`'s tree, parsed once per content (`key`: a content hash such as the
   * snapshot's sha256; computed when absent). `fn` must return plain data, never nodes.
   */
  withTree<T>(text: string, key: string | null, fn: (root: SyntaxNode) => T): T {
    const k = `${this.lang}:${key ?? contentKey(text)}`;
    let c = cache.get(k);
    if (c) {
      cache.delete(k); // most recently used last
      cache.set(k, c);
    } else {
      c = { tree: this.parse(text), chars: text.length };
      cache.set(k, c);
      cachedChars += c.chars;
    }
    busy.add(k);
    try {
      return fn(c.tree.rootNode);
    } finally {
      busy.delete(k);
      evict();
    }
  }

  /**
   * Parse only the given spans of `text` (tree-sitter's included ranges; sorted, non-overlapping) and run
   * `fn` on the root; nodes keep their offsets in the whole text. The tree is deleted afterwards.
   */
  withRanges<T>(text: string, spans: Span[], fn: (root: SyntaxNode) => T): T {
    const zero = { row: 0, column: 0 };
    const ranges = spans.map((s) => ({
      startIndex: s.start16,
      endIndex: s.end16,
      startPosition: zero,
      endPosition: zero,
    }));
    // Hand the parser each range's text alone: a string input would copy the whole rest of the file at
    // every read.
    let k = 0;
    const read = (i: number) => {
      if (k > 0 && spans[k - 1]!.end16 > i) k = 0; // reads may step back
      while (k < spans.length && spans[k]!.end16 <= i) k++;
      return k < spans.length ? text.slice(i, spans[k]!.end16) : '';
    };
    const tree = this.parse(read, ranges);
    try {
      return fn(tree.rootNode);
    } finally {
      tree.delete();
    }
  }
}

// --- node helpers shared by the Python and Rust syntax modules -------------------------------------------

/** The smallest node covering the character at `offset` (the root past the end). */
export function nodeAt(root: SyntaxNode, offset: number): SyntaxNode {
  return root.descendantForIndex(offset, offset + 1) ?? root;
}

/**
 * The identifier at `offset` per §3.2: a node whose [start, end] contains it; one starting there wins over
 * one ending there.
 */
export function identifierNodeAt(
  root: SyntaxNode,
  offset: number,
  isIdentifier: (n: SyntaxNode) => boolean,
): SyntaxNode | null {
  const here = nodeAt(root, offset);
  if (isIdentifier(here) && here.startIndex <= offset && offset < here.endIndex) return here;
  if (offset > 0) {
    const before = nodeAt(root, offset - 1);
    if (isIdentifier(before) && before.endIndex === offset) return before;
  }
  return null;
}

/** The identifier starting exactly at `offset`, or null. */
export function identifierStartingAt(
  root: SyntaxNode,
  offset: number,
  isIdentifier: (n: SyntaxNode) => boolean,
): SyntaxNode | null {
  const n = nodeAt(root, offset);
  return isIdentifier(n) && n.startIndex === offset ? n : null;
}

/** Whether `n` is `parent`'s child in field `field`. */
export function isField(parent: SyntaxNode | null, field: string, n: SyntaxNode): boolean {
  if (!parent) return false;
  const c = parent.childForFieldName(field);
  return !!c && c.id === n.id;
}

/** The nearest ancestor (self excluded) whose type is in `types`, or null. */
export function ancestorOf(n: SyntaxNode, types: ReadonlySet<string>): SyntaxNode | null {
  for (let p = n.parent; p; p = p.parent) if (types.has(p.type)) return p;
  return null;
}

export const spanOf = (n: SyntaxNode): Span => ({ start16: n.startIndex, end16: n.endIndex });

/**
 * One file's syntax in some language: the tree lives in the shared cache and is reached only through
 * `tree()` (plain data out, never nodes); subclasses memoize derived facts.
 */
export abstract class SyntaxFile {
  constructor(
    protected readonly syntax: Syntax,
    readonly text: string,
    /** Content hash of `text` (the snapshot's sha256), the tree cache key; computed when null. */
    readonly key: string | null = null,
  ) {}

  /** What counts as an identifier node in this language. */
  protected abstract isIdentifier(n: SyntaxNode): boolean;

  /** Run `fn` on the file's tree (plain data out, never nodes). */
  tree<T>(fn: (root: SyntaxNode) => T): T {
    return this.syntax.withTree(this.text, this.key, fn);
  }

  /** The identifier at `offset16` per §3.2 (strings, comments and keywords are not identifiers). */
  identifierAt(offset16: number): { start16: number; end16: number; text: string } | null {
    return this.tree((root) => {
      const n = identifierNodeAt(root, offset16, (x) => this.isIdentifier(x));
      return n ? { start16: n.startIndex, end16: n.endIndex, text: n.text } : null;
    });
  }
}

/**
 * The syntax files of a backend's view: one per content version, created on first use (parsing stays lazy,
 * in the shared tree cache), forgotten when the view changes. `load()` runs before any `file()`.
 */
export class ViewSyntax<F extends SyntaxFile> {
  private loaded: Syntax | null = null;
  private readonly files = new Map<string, { version: string; file: F }>();

  constructor(
    private readonly lang: SyntaxLang,
    /** The view's texts (the backend updates this map in place on sync). */
    private readonly texts: Map<string, { text: string; version: string }>,
    private readonly make: (syntax: Syntax, text: string, version: string) => F,
  ) {}

  /** Load the grammar (once). */
  async load(): Promise<Syntax> {
    return (this.loaded ??= await loadSyntax(this.lang));
  }

  /** The loaded grammar, or null before `load()`. */
  get syntax(): Syntax | null {
    return this.loaded;
  }

  /** The syntax of a view file at its current version; null when the view has no such file. */
  file(path: string): F | null {
    const t = this.texts.get(path);
    if (!t) return null;
    const c = this.files.get(path);
    if (c && c.version === t.version) return c.file;
    if (!this.loaded) throw new KernelError('InternalError', `${this.lang} syntax used before it was loaded`, {});
    const f = this.make(this.loaded, t.text, t.version);
    this.files.set(path, { version: t.version, file: f });
    return f;
  }

  /** Drop the files of changed paths. */
  forget(paths: Iterable<string>): void {
    for (const p of paths) this.files.delete(p);
  }
}
