import type { Command } from 'commander';
import { action } from '../action.js';

export function registerMisc(program: Command): void {
  program
    .command('schema <command...>')
    .description("print the JSON Schema of a command's --json output")
    .action(
      action('schema', async (_ctx, args) => {
        const { jsonSchemaFor } = await import('../../contract/schemas/index.js');
        const name = args.join(' ');
        const schema = await jsonSchemaFor(name);
        return { data: { schema_command: name, json_schema: schema }, text: JSON.stringify(schema, null, 2) };
      }),
    );
}
