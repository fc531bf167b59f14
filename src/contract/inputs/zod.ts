/**
 * The zod schema of an operation's input, built from its table (fields.ts): what an MCP tool publishes
 * as `inputSchema` and what `tugcode schema --input <command>` prints. Loaded only off the hot path.
 */
import { z } from 'zod';
import { ITEM_STATUSES } from '../status.js';
import { toolSpelling, type Field, type InputTable } from './fields.js';

function fieldSchema(f: Field, spell: (text: string) => string): z.ZodTypeAny {
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
      s = f.oneOf ? z.enum(f.oneOf as [string, ...string[]]) : z.string().max(f.max);
      break;
    case 'items':
      s = z.array(
        z
          .object({
            kind: z.enum(['task', 'test', 'checkpoint']),
            ordinal: z.number().int().min(0),
            status: z.enum(ITEM_STATUSES),
            reason: z.string().max(4000).optional(),
          })
          .strict(),
      );
      break;
    case 'list':
      s = z.array(z.string().max(f.max)).max(f.maxItems);
      break;
  }
  // An enum's values are said in its description too (a client may show only the text): from the schema.
  const text = spell(f.description);
  s = s.describe(s instanceof z.ZodEnum ? `${text} (one of: ${(s.options as string[]).join(', ')})` : text);
  return f.required ? s : s.optional();
}

/**
 * The strict zod object of a table's non-CLI-only fields. `tool`: the descriptions as a tool caller reads
 * them (field names, not flags: fields.ts `toolSpelling`).
 */
export function inputSchema(table: InputTable, o: { tool?: boolean } = {}): z.ZodObject<Record<string, z.ZodTypeAny>> {
  const spell = o.tool ? (t: string) => toolSpelling(table, t) : (t: string) => t;
  const shape: Record<string, z.ZodTypeAny> = {};
  for (const [name, f] of Object.entries(table.fields)) if (!f.cliOnly) shape[name] = fieldSchema(f, spell);
  return z
    .object(shape)
    .strict()
    .describe(o.tool ? spell(table.toolDescription ?? table.description) : table.description);
}
