/**
 * `state export` and `state import` (docs/state.md §8): moving one plan's state between stores, e.g. from
 * the embedded state.db to PostgreSQL. The document is validated before the store is opened for writing,
 * so a malformed one creates nothing (not even the PostgreSQL schema).
 */
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { shellArg } from '../util/shell-arg.js';
import { TugError } from '../contract/errors.js';
import type { Call, OpsContext } from './context.js';
import { stateOf } from './support.js';

export async function stateExport(ctx: OpsContext, input: { plan: string; output?: string }, call: Call) {
  const { store, sc } = await stateOf(ctx, call);
  const document = await store.exportPlan(sc, { plan: input.plan });
  const { countsOf } = await import('../state/export.js');
  const base = { plan_path: document.plan_path, counts: countsOf(document) };
  if (input.output === undefined) return { ...base, output: null, document };
  const path = resolve(ctx.cwd, input.output);
  const tmp = `${path}.tmp-${randomBytes(4).toString('hex')}`;
  try {
    writeFileSync(tmp, JSON.stringify(document, null, 2) + '\n', { mode: 0o600 });
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw new TugError(
      'InvalidArgument',
      { reason: `cannot write output ${path}: ${(e as Error).message}`, argument: 'output' },
      {
        hint: `--output names a file in a directory this user can write (mkdir -p ${shellArg(dirname(path))}, or ls -ld it)`,
      },
    );
  }
  return { ...base, output: path };
}

export async function stateImport(
  ctx: OpsContext,
  input: { document?: string; replace?: boolean; file?: string },
  call: Call,
) {
  if (input.document === undefined)
    throw new TugError('InvalidArgument', { reason: 'state import needs a document', argument: 'document' });
  const { parseExportDocument } = await import('../state/export-check.js');
  const document = await parseExportDocument(input.document).catch((e: unknown) => {
    throw fromSource(e, input.file);
  });
  const { store, sc } = await stateOf(ctx, call);
  const result = await store.importPlan(sc, { document, replace: input.replace });
  return { ...result, backend: { kind: store.backend, location: store.location } };
}

/**
 * A problem with a document the CLI read from a file or stdin (`file`: the path the user gave, `-` for
 * stdin) names that source, not the `document` field (on the command line, the --document flag).
 */
function fromSource(e: unknown, file: string | undefined): unknown {
  if (file === undefined || !(e instanceof TugError) || e.code !== 'InvalidArgument') return e;
  if (e.details.argument !== 'document') return e;
  const source = file === '-' ? 'stdin' : file;
  return new TugError(
    'InvalidArgument',
    { ...e.details, reason: `${source}: ${String(e.details.reason)}`, argument: 'file' },
    { hint: e.hint },
  );
}
