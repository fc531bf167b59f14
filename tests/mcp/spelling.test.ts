/**
 * `tugcode mcp` speaks in its callers' terms (docs/run.md §5): a tool call passes JSON fields (`force`,
 * `reason`, `attempt`), so its descriptions and error messages name those, never the CLI's flags; an enum
 * argument lists its values (from the published schema). The CLI's wording is the envelope goldens'.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeMcpClients, connectMcp, mcpStderr } from './client.js';
import { runJson } from '../helpers/cli.js';
import { ARTIFACT_KINDS } from '../../src/contract/status.js';
import { planRepo, T0 } from '../gitflow/helpers.js';

afterEach(async () => {
  await closeMcpClients();
});

const errorOf = (r: any) => {
  expect(r.isError, JSON.stringify(r)).toBe(true);
  return JSON.parse(r.content[0].text).error;
};

describe('tugcode mcp spelling', () => {
  it('describes the state tools with field names and lists the values of enum arguments', async () => {
    const root = planRepo();
    const client = await connectMcp(root);
    const { tools } = await client.listTools();
    for (const t of tools.filter((x) => x.name.startsWith('tug_state_'))) {
      // The description's tail names the CLI command whose JSON it is; before it, no flag.
      expect(t.description!.replace(/\(the JSON of `tugcode [^`]*`\)$/, ''), t.name).not.toMatch(/--[a-z]/);
      for (const [k, p] of Object.entries(t.inputSchema.properties ?? {}))
        expect((p as { description?: string }).description ?? '', `${t.name}.${k}`).not.toMatch(/--[a-z]/);
    }
    const update = tools.find((t) => t.name === 'tug_state_update')!;
    const allTasks = update.inputSchema.properties!.all_tasks as { enum: string[]; description: string };
    expect(allTasks.enum).toEqual(['open', 'in_progress', 'completed', 'deferred']);
    expect(allTasks.description).toBe('every task of the step (one of: open, in_progress, completed, deferred)');
    expect(update.description).toMatch(/^change checklist items \(items, or all_tasks/);
    // Every fixed set is an enum (docs/run.md §5): show's items, artifact's kind (the catalogue's kinds).
    const prop = (tool: string, k: string) =>
      tools.find((t) => t.name === tool)!.inputSchema.properties![k] as { enum?: string[]; description: string };
    expect(prop('tug_state_show', 'items').enum).toEqual(['active', 'all', 'none']);
    expect(prop('tug_state_artifact', 'kind').enum).toEqual([...ARTIFACT_KINDS]);
    expect(prop('tug_state_artifact', 'kind').enum).toContain('conflict_resolution');
    const input = runJson('schema', ['schema', '--input', 'state show'], { cwd: root }).json;
    expect(JSON.stringify(input)).toContain('"enum":["active","all","none"]');
  });

  it('words its errors with the fields of the call, not the CLI flags', async () => {
    const root = planRepo();
    runJson('state init', ['state', 'init', 'demo'], { cwd: root, env: { TUGCODE_NOW: T0 } });
    const client = await connectMcp(root);
    const owner = { plan: 'demo', step: 'step-1', worktree: '.' };
    const claimed: any = await client.callTool({ name: 'tug_state_claim', arguments: { plan: 'demo', worktree: '.' } });
    expect(claimed.structuredContent).toMatchObject({ claimed: true, step_anchor: 'step-1', attempt: 1 });
    const call = async (name: string, args: Record<string, unknown>) =>
      errorOf(await client.callTool({ name, arguments: { ...owner, ...args } }));

    const bad = await call('tug_state_update', { all_tasks: 'done' });
    expect(bad).toMatchObject({ code: 'InvalidArgument', details: { argument: 'all_tasks' } });
    expect(bad.message).toBe('all_tasks must be one of open, in_progress, completed, deferred, got "done"');
    expect((await call('tug_state_update', {})).message).toBe(
      'nothing to update: give items, all_tasks, all_tests, all_checkpoints, all or complete_remaining',
    );
    expect((await call('tug_state_update', { all_tasks: 'deferred' })).message).toBe('deferring items needs reason');
    const force = await call('tug_state_complete', { force: '' });
    expect(force).toMatchObject({ code: 'InvalidArgument', details: { argument: 'force' } });
    expect(force.message).toBe('force reason must not be empty');
    expect((await call('tug_state_complete', { force: ' ' })).details.argument).toBe('force');
    const kind = await call('tug_state_artifact', { kind: 'memo', summary: 's' });
    expect(kind).toMatchObject({ code: 'InvalidArgument', details: { argument: 'kind' } });
    const show = errorOf(await client.callTool({ name: 'tug_state_show', arguments: { plan: 'demo', items: 'some' } }));
    expect(show).toMatchObject({ code: 'InvalidArgument', details: { argument: 'items' } });
    expect((await call('tug_state_fail', { reason: ' ' })).message).toBe('reason must not be empty');
    const stale = await call('tug_state_start', { attempt: 7 });
    expect(stale.message).toBe('attempt 7 is not the current attempt 1 of step-1 in .tugtool/tugplan-demo.md');
    // A hint is a command to run: its flags stay.
    const other = await call('tug_state_start', { worktree: '/nowhere' });
    expect(other.code).toBe('WorktreeNotFound');
  });

  it('names the force field in the TextTruncated warning of a long force reason (the CLI says force reason)', async () => {
    const root = planRepo();
    runJson('state init', ['state', 'init', 'demo'], { cwd: root, env: { TUGCODE_NOW: T0 } });
    const client = await connectMcp(root);
    const owner = { plan: 'demo', step: 'step-1', worktree: '.' };
    await client.callTool({ name: 'tug_state_claim', arguments: { plan: 'demo', worktree: '.' } });
    const r: any = await client.callTool({
      name: 'tug_state_complete',
      arguments: { ...owner, force: 'x'.repeat(600) },
    });
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    const warnings = r.structuredContent.warnings;
    expect(warnings).toEqual([
      {
        code: 'TextTruncated',
        message: 'force was cut to 500 characters',
        details: { field: 'force', max_code_points: 500 },
      },
    ]);
    // The command line keeps the wording of docs/state.md §4.5.
    runJson('state claim', ['state', 'claim', 'demo', '--worktree', '.'], { cwd: root });
    const cli = runJson(
      'state complete',
      ['state', 'complete', 'demo', 'step-2', '--worktree', '.', '--force', 'y'.repeat(600)],
      {
        cwd: root,
      },
    );
    expect(cli.json.warnings.map((w: any) => [w.code, w.details.field])).toEqual([['TextTruncated', 'force reason']]);
  });

  it("words the kernel tools' errors with their fields too (the op text keeps its flags)", async () => {
    const root = planRepo();
    const client = await connectMcp(root);
    const neither = errorOf(await client.callTool({ name: 'tug_rename_symbol', arguments: { to: 'b' } }));
    expect(neither).toMatchObject({ code: 'InvalidArgument', details: { argument: 'at' } });
    expect(neither.message).toBe('rename-symbol needs at FILE:LINE:COL or symbol FILE::Name');
    const op = errorOf(
      await client.callTool({ name: 'tug_analyze_impact', arguments: { op: 'rename-symbol --to b' } }),
    );
    expect(op.message).toBe('rename-symbol needs --at FILE:LINE:COL or --symbol FILE::Name');
  });

  it("never prints a plan's validator warnings on stderr (they are validate's to list)", async () => {
    const root = planRepo();
    runJson('state init', ['state', 'init', 'demo'], { cwd: root, env: { TUGCODE_NOW: T0 } });
    // The plan has warnings (validate lists them); the server's log does not repeat them.
    expect(runJson('validate', ['validate', 'demo'], { cwd: root }).json.plans[0].warning_count).toBeGreaterThan(0);
    const client = await connectMcp(root);
    const r: any = await client.callTool({ name: 'tug_state_ready', arguments: { plan: 'demo' } });
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    await client.close();
    expect(mcpStderr(client)).not.toMatch(/warning|W00\d/i);
  });
});
