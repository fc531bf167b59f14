/**
 * The target resolution both LSP backends share (docs/kernel.md §6.3–§6.5): definition answers mapped into
 * the view, the same-named-definition rule of §6.5 step 2, and prepareRename with its one retry.
 */
import { KernelError } from '../../errors.js';
import { compareUtf8 } from '../../ids.js';
import type { Span16, WorkspaceView } from '../types.js';
import { definitionLocations, rangeTo16, uriToRel, type PositionEncoding } from './edits.js';
import type { DefinitionResult } from './protocol.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A definition answer → spans in the view, and how many lay outside it (lib, typeshed, `target/`). */
export function definitionSpans(
  view: WorkspaceView,
  answer: DefinitionResult,
  enc: PositionEncoding,
): { inView: Span16[]; outside: number } {
  const inView: Span16[] = [];
  let outside = 0;
  for (const l of definitionLocations(answer)) {
    const rel = uriToRel(view.root, l.uri);
    const text = rel === null ? undefined : view.texts.get(rel)?.text;
    if (rel === null || text === undefined) {
      outside++;
      continue;
    }
    const s = rangeTo16(text, l.range, enc);
    inView.push({ file: rel, start16: s.start16, end16: s.end16 });
  }
  return { inView, outside };
}

/** Every definition lies outside the workspace: the symbol belongs to a library (§6.5 step 2). */
export function assertNotLibrary(defs: { inView: Span16[]; outside: number }, name: string): void {
  if (defs.outside > 0 && defs.inView.length === 0)
    throw new KernelError('NotRenameable', `${name} is defined outside the workspace`, {
      name,
      reason: 'library_symbol',
      backend_message: null,
    });
}

/**
 * §6.5 step 2: when every in-view definition carries the identifier's text, the rename starts there (the
 * definitions deduplicated and sorted); otherwise null, and the caller starts at the given position.
 */
export function sameNamedDefinitions(view: WorkspaceView, inView: Span16[], name: string): Span16[] | null {
  const textAt = (d: Span16) => view.texts.get(d.file)?.text.slice(d.start16, d.end16);
  const same = inView.filter((d) => textAt(d) === name);
  if (same.length === 0 || same.length !== inView.length) return null;
  const seen = new Set<string>();
  const out = same.filter((d) => !seen.has(`${d.file}:${d.start16}`) && seen.add(`${d.file}:${d.start16}`));
  return out.sort((a, b) => compareUtf8(a.file, b.file) || a.start16 - b.start16);
}

/** prepareRename (§6.3 step 2): a null answer waits 500 ms and asks once more; a second null refuses. */
export async function prepareRenameOrRefuse(ask: () => Promise<unknown>, name: string, backend: string): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    if (await ask()) return;
    if (attempt === 0) await sleep(500);
  }
  throw new KernelError('NotRenameable', `${backend} cannot rename ${name}`, {
    name,
    reason: 'backend_refused',
    backend_message: 'prepareRename returned null',
  });
}
