/**
 * The zod schema of an operation's input, built from its table (fields.ts): what an MCP tool publishes
 * as `inputSchema` and what `tugcode schema --input <command>` prints. Loaded only off the hot path.
 */
import { z } from 'zod';
import type { Field, InputTable } from './fields.js';

function fieldSchema(f: Field): z.ZodTypeAny {
  let s: z.ZodTypeAny;
  switch (f.type) {
    case 'bool':
      s = z.boolean();
      break;
    case 'int':
      s = z.number().int().min(f.min).max(f.max);
      break;
    case 'number':
      s = z.number().min(f.min).max(f.max);
      break;
    case 'enum':
      s = z.enum(f.values as [string, ...string[]]);
      break;
    case 'string':
      s = z.string().max(f.max);
      break;
    case 'items':
      s = z.array(
        z
          .object({
            kind: z.enum(['task', 'test', 'checkpoint']),
            ordinal: z.number().int().min(0),
            status: z.enum(['open', 'in_progress', 'completed', 'deferred']),
            reason: z.string().max(4000).optional(),
          })
          .strict(),
      );
      break;
    case 'list':
      s = z.array(z.string().max(f.max)).max(f.maxItems);
      break;
  }
  s = s.describe(f.description);
  return f.required ? s : s.optional();
}

/** The strict zod object of a table's non-CLI-only fields. */
export function inputSchema(table: InputTable): z.ZodObject<Record<string, z.ZodTypeAny>> {
  const shape: Record<string, z.ZodTypeAny> = {};
  for (const [name, f] of Object.entries(table.fields)) if (!f.cliOnly) shape[name] = fieldSchema(f);
  return z.object(shape).strict().describe(table.description);
}
