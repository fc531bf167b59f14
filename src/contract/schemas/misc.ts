import { z } from 'zod';
import { diagnostic, okEnvelope, repoPath } from './common.js';

export const miscSchemas = {
  schema: okEnvelope('schema', { schema_command: z.string(), json_schema: z.record(z.unknown()) }),
  init: okEnvelope('init', {
    initialized: z.boolean(),
    created: z.array(repoPath),
    skipped: z.array(repoPath),
    gitignore_added: z.array(z.string()),
    exclude_added: z.array(z.string()),
  }),
  validate: okEnvelope('validate', {
    valid: z.boolean(),
    level: z.enum(['lenient', 'normal', 'strict']),
    plans: z.array(
      z
        .object({
          plan_path: repoPath,
          valid: z.boolean(),
          steps: z.number().int().nonnegative(),
          substeps: z.number().int().nonnegative(),
          implicit_sequential: z.boolean(),
          error_count: z.number().int().nonnegative(),
          warning_count: z.number().int().nonnegative(),
          diagnostics: z.array(diagnostic),
        })
        .strict(),
    ),
  }),
};
