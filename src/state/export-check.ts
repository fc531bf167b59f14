/**
 * Validation of a `state export` document before `state import` touches anything (docs/state.md §8): the
 * zod schema of its fields (src/contract/schemas/state-export.ts), then the rules between rows that the
 * database would otherwise enforce halfway through the transaction (foreign keys, CHECKs, uniqueness),
 * and the plan bytes against their hash. Every problem is an InvalidArgument naming what is wrong.
 */
import { TugError } from '../contract/errors.js';
import { sha256Hex } from '../util/hash.js';
import { cut, quoted } from '../util/quoted.js';
import type { StateExportDocument } from '../contract/schemas/state-export.js';
import { LATEST_SCHEMA_VERSION } from './migrate.js';

/** The most problems one error lists. */
const SHOWN = 8;

function malformed(problems: string[]): TugError {
  // A problem quotes the document's values (an anchor may be 100 000 characters): each is cut.
  const shown = problems.slice(0, SHOWN).map((p) => cut(p, 300));
  const more = problems.length > SHOWN ? `; and ${problems.length - SHOWN} more` : '';
  return new TugError('InvalidArgument', {
    reason: `the export document is malformed: ${shown.join('; ')}${more}; nothing was changed`,
    problems: shown,
    argument: 'document',
  });
}

/** A document's text (or an already parsed value) → the validated document. */
export async function parseExportDocument(input: string | unknown): Promise<StateExportDocument> {
  let value: unknown = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (e) {
      throw new TugError('InvalidArgument', {
        reason: `the export document is not JSON: ${(e as Error).message}; nothing was changed`,
        argument: 'document',
      });
    }
  }
  value = unwrapEnvelope(value);
  const o = (value ?? {}) as Record<string, unknown>;
  const { EXPORT_FORMAT, EXPORT_VERSION, stateExportDocument } = await import('../contract/schemas/state-export.js');
  if (typeof value !== 'object' || value === null || Array.isArray(value) || o.format !== EXPORT_FORMAT)
    throw new TugError('InvalidArgument', {
      reason: `not a tugcode state export: "format" must be ${JSON.stringify(EXPORT_FORMAT)}; nothing was changed`,
      argument: 'document',
    });
  if (o.version !== EXPORT_VERSION)
    throw new TugError('InvalidArgument', {
      reason: `export format version ${quoted(o.version)} is not supported (this tugcode reads version ${EXPORT_VERSION}); nothing was changed`,
      argument: 'document',
    });
  if (typeof o.schema_version === 'number' && o.schema_version > LATEST_SCHEMA_VERSION)
    throw new TugError('InvalidArgument', {
      reason: `the export comes from a newer tugcode (state schema ${o.schema_version}; this one knows ${LATEST_SCHEMA_VERSION}): upgrade tugcode first; nothing was changed`,
      argument: 'document',
    });
  const parsed = stateExportDocument.safeParse(value);
  if (!parsed.success)
    throw malformed(parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(document)'}: ${i.message}`));
  const doc = parsed.data;
  const problems = crossRowProblems(doc);
  if (problems.length) throw malformed(problems);
  return doc;
}

/** `state export --json` output: its `document` (without one, it was written to a file). */
function unwrapEnvelope(v: unknown): unknown {
  const e = v as { status?: unknown; command?: unknown; document?: unknown; output?: unknown } | null;
  if (!e || typeof e !== 'object' || e.command !== 'state export' || e.status === undefined) return v;
  if (e.document !== undefined) return e.document;
  throw new TugError('InvalidArgument', {
    reason: `this is the output of state export --output ${String(e.output ?? '<file>')}, not the document: import the file it wrote; nothing was changed`,
    argument: 'document',
  });
}

function safePlanPath(p: string): boolean {
  return (
    p !== '' &&
    !p.startsWith('/') &&
    !p.includes('\\') &&
    !p.includes('\0') &&
    !p.split('/').some((s) => s === '' || s === '.' || s === '..')
  );
}

/** The rules between rows (keys, references, the steps table's CHECKs), and the plan bytes' hash. */
function crossRowProblems(doc: StateExportDocument): string[] {
  const out: string[] = [];
  if (!safePlanPath(doc.plan_path)) out.push(`plan_path: ${JSON.stringify(doc.plan_path)} is not a repo-relative path`);
  const bytes = Buffer.from(doc.plan.plan_source, 'base64');
  if (sha256Hex(bytes) !== doc.plan.plan_hash) out.push('plan.plan_source: its SHA-256 is not plan.plan_hash');

  const steps = new Map<string, StateExportDocument['steps'][number]>();
  doc.steps.forEach((s, i) => {
    if (steps.has(s.anchor)) out.push(`steps[${i}].anchor: ${s.anchor} appears twice`);
    steps.set(s.anchor, s);
  });
  doc.steps.forEach((s, i) => {
    const at = `steps[${i}] (${s.anchor})`;
    if (s.parent_anchor === null) {
      if (s.top_anchor !== s.anchor) out.push(`${at}: a top-level step is its own top_anchor`);
      if (s.depth !== 0) out.push(`${at}: a top-level step has depth 0`);
      const held = s.status === 'claimed' || s.status === 'in_progress';
      if (held && (s.claimed_by === null || s.lease_expires_at === null))
        out.push(`${at}: a ${s.status} step needs claimed_by and lease_expires_at`);
    } else {
      const parent = steps.get(s.parent_anchor);
      if (!parent) out.push(`${at}: parent_anchor ${s.parent_anchor} is not a step`);
      else if (s.depth !== parent.depth + 1) out.push(`${at}: depth must be its parent's + 1`);
      const top = steps.get(s.top_anchor);
      if (!top || top.parent_anchor !== null) out.push(`${at}: top_anchor ${s.top_anchor} is not a top-level step`);
      if (!['pending', 'in_progress', 'completed'].includes(s.status))
        out.push(`${at}: a substep cannot be ${s.status}`);
      if (s.claimed_by ?? s.claimed_at ?? s.lease_expires_at ?? s.heartbeat_at)
        out.push(`${at}: a substep has no claim columns`);
      if (s.attempt !== 0 || s.failures !== 0) out.push(`${at}: a substep has attempt 0 and failures 0`);
    }
    if ((s.status === 'completed') !== (s.completed_via !== null))
      out.push(`${at}: completed_via is set exactly when the status is completed`);
  });

  const unique = (what: string, keys: string[]) => {
    const seen = new Set<string>();
    keys.forEach((k, i) => {
      if (seen.has(k)) out.push(`${what}[${i}]: duplicate ${k}`);
      seen.add(k);
    });
  };
  const known = (what: string, anchors: string[]) =>
    anchors.forEach((a, i) => {
      if (!steps.has(a)) out.push(`${what}[${i}]: ${a} is not a step`);
    });
  for (const t of ['step_deps', 'step_lifted_deps'] as const) {
    known(
      t,
      doc[t].flatMap((e) => [e.step_anchor, e.depends_on]),
    );
    unique(
      t,
      doc[t].map((e) => `${e.step_anchor} → ${e.depends_on}`),
    );
  }
  known(
    'checklist_items',
    doc.checklist_items.map((x) => x.step_anchor),
  );
  unique(
    'checklist_items',
    doc.checklist_items.map((x) => `${x.step_anchor} ${x.kind} ${x.ordinal}`),
  );
  doc.checklist_items.forEach((x, i) => {
    if (x.status === 'deferred' && !x.reason) out.push(`checklist_items[${i}]: a deferred item needs a reason`);
  });
  known(
    'step_artifacts',
    doc.step_artifacts.map((x) => x.step_anchor),
  );
  known(
    'step_refactors',
    doc.step_refactors.map((x) => x.step_anchor),
  );
  unique(
    'step_refactors',
    doc.step_refactors.map((x) => `${x.step_anchor} ${x.ordinal}`),
  );
  known(
    'step_usage',
    doc.step_usage.map((x) => x.step_anchor),
  );
  unique(
    'events',
    doc.events.map((e) => String(e.id)),
  );
  doc.events.forEach((e, i) => {
    if (nestsDeeper(e.details, MAX_DETAILS_DEPTH))
      out.push(`events[${i}].details: nested deeper than ${MAX_DETAILS_DEPTH} levels`);
  });
  return out;
}

/**
 * How deep an event's details may nest. tugcode writes two or three levels; the import walks and stores
 * them recursively, so a document nesting thousands deep would overflow the stack halfway (InternalError).
 */
const MAX_DETAILS_DEPTH = 64;

/** Whether `v` nests deeper than `max` arrays and objects, found without recursion. */
function nestsDeeper(v: unknown, max: number): boolean {
  const todo: [unknown, number][] = [[v, 0]];
  while (todo.length > 0) {
    const [x, depth] = todo.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (depth >= max) return true;
    for (const y of Object.values(x)) todo.push([y, depth + 1]);
  }
  return false;
}
