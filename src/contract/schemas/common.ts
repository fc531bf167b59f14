/**
 * Shared zod pieces of every command's JSON output (docs/output.md §2).
 * Loaded only by `tugcode schema` and by tests: hot commands never import zod for their output.
 */
import { z } from 'zod';

/** A bare anchor: `step-2`, never `#step-2`. */
export const anchor = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'bare anchor');

/** Ready steps held back by Touches, each with the running step it overlaps (src/contract/touches.ts). */
export const touchesHeld = z.array(z.object({ step_anchor: anchor, overlaps: anchor }).strict());

/** ISO 8601 UTC with milliseconds. */
export const timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO 8601 UTC timestamp with milliseconds');
/** Repo-relative path with `/` separators. */
export const repoPath = z.string().refine((p) => !p.startsWith('/') && !p.includes('\\'), 'repo-relative path');
export const absPath = z.string().refine((p) => p.startsWith('/'), 'absolute path');
/** An owner: a worktree's canonical path, or `<host>:<path>` on the PostgreSQL backend (docs/state.md §8). */
export const ownerName = z
  .string()
  .refine((p) => p.startsWith('/') || /^[^/:\s]+:\//.test(p), 'absolute path or <host>:<absolute path>');
export const sha256 = z.string().regex(/^[0-9a-f]{64}$/);
export const commitHash = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/);

export const warning = z
  .object({ code: z.string(), message: z.string(), details: z.record(z.unknown()).optional() })
  .strict();

export const diagnostic = z
  .object({
    code: z.string(),
    severity: z.enum(['error', 'warning', 'info']),
    message: z.string(),
    line: z.number().int().positive().optional(),
    anchor: z.string().optional(),
  })
  .strict();

/** The error envelope, identical for every command. */
export const errorEnvelope = z
  .object({
    status: z.literal('error'),
    schema_version: z.literal('1'),
    command: z.string(),
    error: z
      .object({ code: z.string(), message: z.string(), details: z.record(z.unknown()), hint: z.string().optional() })
      .strict(),
    warnings: z.array(warning),
  })
  .strict();

/** Wrap a command's flat fields into its success envelope. */
export function okEnvelope<T extends z.ZodRawShape>(command: string, fields: T) {
  return z
    .object({
      status: z.literal('ok'),
      schema_version: z.literal('1'),
      command: z.literal(command),
      warnings: z.array(warning),
    })
    .extend(fields)
    .strict();
}

/**
 * The run holding a plan's run lock as `status` and `state show` report it (docs/git.md §6): `alive` false
 * when its pid on this host is gone, null when it is on another host; null when no run holds the lock.
 */
export const runDriverLine = z
  .object({
    pid: z.number().int(),
    host: z.string(),
    started_at: z.string(),
    alive: z.boolean().nullable(),
    claims_expire_at: z.string().nullable(),
    command: z.string(),
    workers: z.number().int().positive().nullable(),
    // Its `--workers` when it started fewer (docs/git.md §6).
    workers_requested: z.number().int().positive().optional(),
  })
  .strict()
  .nullable();

/**
 * The plan's last run that ended, as `status` and `state show` report it (docs/state.md §2): its flags
 * (`run_flags` words, secrets redacted), when it ended, and the `tugcode run` that repeats it; null when the
 * state records none.
 */
export const lastRunLine = z
  .object({
    run_flags: z.array(z.string()),
    ended_at: z.string(),
    command: z.string(),
  })
  .strict()
  .nullable();
