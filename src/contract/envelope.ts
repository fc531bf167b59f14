/**
 * The success / error envelope shared by every front door (docs/output.md §2).
 * Pure functions: they build documents, they never print.
 */
import { TugError, type Details } from './errors.js';
import { shellArg } from '../util/shell-arg.js';
import type { WarningSinkCode } from './warnings.js';

export const SCHEMA_VERSION = '1';

export interface Warning {
  code: string;
  message: string;
  details?: Details;
}

export type OkEnvelope<T extends object = Record<string, unknown>> = {
  status: 'ok';
  schema_version: string;
  command: string;
} & T & { warnings: Warning[] };

export interface ErrorEnvelope {
  status: 'error';
  schema_version: string;
  command: string;
  error: { code: string; message: string; details: Details; hint?: string };
  warnings: Warning[];
}

export function ok<T extends object>(command: string, data: T, warnings: Warning[] = []): OkEnvelope<T> {
  // Command fields are flat (never under `data`); envelope keys win over any clash.
  return { status: 'ok', schema_version: SCHEMA_VERSION, command, ...data, warnings } as OkEnvelope<T>;
}

export function fail(command: string, err: TugError, warnings: Warning[] = []): ErrorEnvelope {
  return { status: 'error', schema_version: SCHEMA_VERSION, command, error: err.toJSON(), warnings };
}

/**
 * Collects warnings during one command. Library functions receive it through the context, so
 * a warning raised deep in the plan or state code reaches the envelope.
 */
export class WarningSink {
  readonly items: Warning[] = [];
  add(code: WarningSinkCode, message: string, details?: Details): void {
    this.items.push(details === undefined ? { code, message } : { code, message, details });
  }
  /** A plan validator's warning (`W…`, `P…`), whose codes docs/plan-format.md §3 lists. */
  plan(code: string, message: string, details?: Details): void {
    this.items.push(details === undefined ? { code, message } : { code, message, details });
  }
}

/** A plan validator's warning codes (docs/plan-format.md §3), as `state init` and `run` report them. */
const PLAN_WARNING = /^[WP]\d{3}$/;

/**
 * Warnings as the text-mode lines of stderr (docs/output.md §1): each in full, but a plan's validator
 * warnings, which `tugcode validate <plan>` lists in full, as one line per plan. JSON keeps every one.
 */
export function warningLines(warnings: readonly Warning[]): string[] {
  // A plan's line stands where its first warning did; its count is known once all are read.
  const counts = new Map<string, number>();
  const lines: (string | { plan: string })[] = [];
  for (const w of warnings) {
    const plan = w.details?.plan_path;
    if (typeof plan !== 'string' || !PLAN_WARNING.test(w.code)) {
      lines.push(`tugcode: warning: ${w.code}: ${w.message}`);
      continue;
    }
    if (!counts.has(plan)) lines.push({ plan });
    counts.set(plan, (counts.get(plan) ?? 0) + 1);
  }
  return lines.map((l) => {
    if (typeof l === 'string') return l;
    const n = counts.get(l.plan)!;
    return `tugcode: warning: ${l.plan}: ${n} validator warning${n === 1 ? '' : 's'}: tugcode validate ${shellArg(l.plan)} shows them`;
  });
}
