/**
 * A file's language by its name (docs/kernel.md §10): light, so a plan's validator can check a new name
 * without loading the workspace listing.
 */
export type Language = 'typescript' | 'python' | 'rust';

const TS_EXT = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;

export function languageOf(path: string): Language | null {
  if (TS_EXT.test(path)) return 'typescript';
  if (/\.pyi?$/.test(path)) return 'python';
  if (path.endsWith('.rs')) return 'rust';
  return null;
}
