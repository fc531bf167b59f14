/**
 * The `tugcode state` command group (docs/state.md §4): each command is its input table, its operation
 * (src/ops, loaded on first use) and a text renderer. `state heartbeat` loads neither markdown-it nor zod,
 * and `--help` loads nothing heavy.
 */
import type { Command } from 'commander';
import * as T from '../../contract/inputs/state.js';
import type { CliApp, CliCommand, CliEnv } from '../define.js';

const writeOp =
  (name: keyof typeof import('../../ops/state-write.js')): CliCommand['op'] =>
  async () =>
    (await import('../../ops/state-write.js'))[name] as never;
const readOp =
  (name: keyof typeof import('../../ops/state-read.js')): CliCommand['op'] =>
  async () =>
    (await import('../../ops/state-read.js'))[name] as never;
const moveOp =
  (name: keyof typeof import('../../ops/state-move.js')): CliCommand['op'] =>
  async () =>
    (await import('../../ops/state-move.js'))[name] as never;
const text =
  (name: keyof typeof import('./state-text.js')): CliCommand['text'] =>
  async (data, cli, input) =>
    ((await import('./state-text.js'))[name] as (d: unknown, c: CliEnv, i: unknown) => string | Promise<string>)(
      data,
      cli,
      input,
    );

/**
 * `only`: the subcommand argv names (argv.ts). When it is one of the group's, it is declared alone (declaring
 * all ~25 is ~3 ms of every hot call); otherwise all are, so errors and suggestions see every name.
 */
export function registerState(program: Command, app: CliApp, only?: string): void {
  const state = program
    .command('state')
    .description('the shared state database: claims, leases, checklists, completion');
  const specs: { spec: CliCommand; options?: (c: Command) => void }[] = [];
  const reg = (spec: CliCommand, options?: (c: Command) => void) =>
    specs.push({ spec, ...(options ? { options } : {}) });

  reg({
    table: T.stateInit,
    op: writeOp('stateInit'),
    text: text('init'),
    // The .gitignore lines added are reported in the text only (the output schema has no such field).
    json: ({ gitignore_added: _, ...data }) => data,
  });
  reg({ table: T.stateClaim, op: writeOp('stateClaim'), text: text('claim') });
  reg({ table: T.stateStart, op: writeOp('stateStart'), text: text('start') });
  reg({ table: T.stateHeartbeat, op: writeOp('stateHeartbeat'), text: text('heartbeat') });
  reg({
    table: T.stateUpdate,
    op: writeOp('stateUpdate'),
    text: text('update'),
    prepare: async (raw, cli) => (await import('./state-prepare.js')).updateInput(raw, cli),
  });
  reg({
    table: T.stateArtifact,
    op: writeOp('stateArtifact'),
    text: text('artifact'),
  });
  reg({ table: T.stateComplete, op: writeOp('stateComplete'), text: text('complete') });
  reg({ table: T.stateRelease, op: writeOp('stateRelease'), text: text('release') });
  reg({ table: T.stateFail, op: writeOp('stateFail'), text: text('fail') });
  reg({ table: T.stateReset, op: writeOp('stateReset'), text: text('reset') });
  reg({ table: T.stateDecide, op: writeOp('stateDecide'), text: text('decide') });
  reg({ table: T.stateReconcile, op: writeOp('stateReconcile'), text: text('reconcile') });
  reg({ table: T.statePrune, op: writeOp('statePrune'), text: text('prune') });
  reg(
    {
      table: T.stateShow,
      op: readOp('stateShow'),
      text: async (data, cli) => (await import('./state-prepare.js')).showText(data, cli),
      loop: (input, cli) => {
        const watch = (cli.cmd.opts() as { watch?: unknown }).watch;
        if (watch === undefined) return undefined;
        return import('./state-prepare.js').then((m) => m.watchShow(input, watch, cli));
      },
    },
    (c) => c.option('--watch [seconds]', 'redraw every SECONDS (default 2) until interrupted'),
  );
  reg({ table: T.stateReady, op: readOp('stateReady'), text: text('ready') });
  reg({ table: T.stateLog, op: readOp('stateLog'), text: text('log') });
  reg({ table: T.stateList, op: readOp('stateList'), text: text('list') });
  reg({ table: T.stateGraph, op: readOp('stateGraph'), text: text('graph') });
  // Without --output, the text output is the document itself (`state export demo > demo.json`).
  reg({ table: T.stateExport, op: moveOp('stateExport'), text: text('exported') });
  reg({
    table: T.stateImport,
    op: moveOp('stateImport'),
    text: text('imported'),
    prepare: async (raw, cli) => (await import('./state-prepare.js')).importInput(raw, cli),
  });
  const one = specs.filter((s) => s.spec.table.command === `state ${only}`);
  for (const { spec, options } of one.length === 1 ? one : specs) {
    const c = app.register(state, spec);
    options?.(c);
  }
}
