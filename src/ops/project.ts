/** `tugcode init`, `validate` and `schema` (docs/git.md §2, docs/plan-format.md §3, docs/output.md §2). */
import type { Call, OpsContext } from './context.js';

export async function init(ctx: OpsContext, input: { force?: boolean }, call: Call) {
  const { repo } = await ctx.load(call);
  const { initProject } = await import('../project/init.js');
  return initProject(repo, ctx.clock, { force: Boolean(input.force) });
}

export async function validate(
  ctx: OpsContext,
  input: { plan?: string; level?: 'lenient' | 'normal' | 'strict' },
  call: Call,
) {
  const { repo, config } = await ctx.load(call);
  const { validatePlans } = await import('../project/validate.js');
  return validatePlans(repo, input.plan, input.level ?? config.validate.level);
}

/** The JSON Schema of a command's output (or, with `input`, of its input). */
export async function schema(_ctx: OpsContext, input: { command: string[]; input?: boolean }) {
  const name = input.command.join(' ');
  if (input.input) {
    const { inputTableFor } = await import('../contract/inputs/index.js');
    const { inputSchema } = await import('../contract/inputs/zod.js');
    const { zodToJsonSchema } = await import('zod-to-json-schema');
    const json = zodToJsonSchema(inputSchema(inputTableFor(name)), { $refStrategy: 'none' });
    return { schema_command: name, json_schema: json as Record<string, unknown> };
  }
  const { jsonSchemaFor } = await import('../contract/schemas/index.js');
  return { schema_command: name, json_schema: await jsonSchemaFor(name) };
}
