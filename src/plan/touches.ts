/**
 * `**Touches:**` globs (docs/plan-format.md §2.5): what makes one valid, and when two steps' globs overlap
 * (docs/state.md §3.12). picomatch is loaded only for a plan that declares Touches.
 */
import { createRequire } from 'node:module';

type Picomatch = typeof import('picomatch');
let pm: Picomatch | undefined;
function picomatch(): Picomatch {
  pm ??= createRequire(import.meta.url)('picomatch') as Picomatch;
  return pm;
}

/** The longest glob a step may declare. */
export const MAX_TOUCHES_GLOB = 256;

/** Why `glob` is not a usable Touches glob, or null when it is. */
export function touchesGlobProblem(glob: string): string | null {
  if (glob === '') return 'an empty glob';
  if (glob.length > MAX_TOUCHES_GLOB) return `a glob over ${MAX_TOUCHES_GLOB} characters`;
  if (glob.startsWith('/') || /^[A-Za-z]:[\\/]/.test(glob)) return 'an absolute path (globs are repository-relative)';
  if (glob.split('/').includes('..')) return 'a `..` segment (globs stay inside the repository)';
  let depth = 0;
  for (const ch of glob.replace(/\\./g, '')) {
    if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth--;
    if (depth < 0) break;
  }
  if (depth !== 0) return 'unbalanced braces or brackets';
  try {
    picomatch().makeRe(glob);
  } catch (e) {
    return `not a glob picomatch reads: ${(e as Error).message}`;
  }
  return null;
}

/**
 * Whether two globs may match a common path — conservative: when unsure, they overlap. Each glob's static
 * base (the part before the first wildcard) is tested against the other glob, and bases that are a
 * directory prefix of one another overlap.
 */
function globsOverlap(a: string, b: string): boolean {
  if (a === b) return true;
  const p = picomatch();
  const sa = p.scan(a);
  const sb = p.scan(b);
  if (!sa.isGlob && !sb.isGlob) return a === b;
  if (!sa.isGlob) return p.isMatch(a, b, { dot: true });
  if (!sb.isGlob) return p.isMatch(b, a, { dot: true });
  const under = (x: string, y: string) => x === '' || y === x || y.startsWith(`${x}/`);
  return under(sa.base, sb.base) || under(sb.base, sa.base);
}

/** Whether two steps' Touches overlap; a step without Touches overlaps nothing. */
export function touchesOverlap(a: readonly string[], b: readonly string[]): boolean {
  return a.some((x) => b.some((y) => globsOverlap(x, y)));
}
