/**
 * Every command's output schema, by command name (`state claim`, `validate`, …).
 * `tugcode schema <command>` prints the JSON Schema generated from these; tests parse every real
 * output with them.
 */
import type { z } from 'zod';
import { TugError } from '../errors.js';
import { errorEnvelope } from './common.js';
import { miscSchemas } from './misc.js';
import { stateSchemas } from './state.js';
import { gitSchemas } from './git.js';
import { runSchemas } from './run.js';

export const OUTPUT_SCHEMAS: Record<string, z.ZodTypeAny> = {
  ...miscSchemas,
  ...stateSchemas,
  ...gitSchemas,
  ...runSchemas,
};

export { errorEnvelope };

export function schemaFor(command: string): z.ZodTypeAny {
  const s = OUTPUT_SCHEMAS[command];
  if (!s) {
    throw new TugError('InvalidArgument', {
      reason: `no output schema for ${JSON.stringify(command)}; known: ${Object.keys(OUTPUT_SCHEMAS).sort().join(', ')}`,
    });
  }
  return s;
}

export async function jsonSchemaFor(command: string): Promise<Record<string, unknown>> {
  const s = schemaFor(command);
  const { zodToJsonSchema } = await import('zod-to-json-schema');
  return zodToJsonSchema(s, { $refStrategy: 'none' }) as Record<string, unknown>;
}
