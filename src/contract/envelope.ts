/**
 * The success / error envelope shared by every front door (docs/output.md §2).
 * Pure functions: they build documents, they never print.
 */
import { TugError, type Details } from './errors.js';

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
  add(code: string, message: string, details?: Details): void {
    this.items.push(details === undefined ? { code, message } : { code, message, details });
  }
}
