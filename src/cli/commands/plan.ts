/** `tugcode init`, `tugcode validate` and `tugcode schema`. */
import type { Command } from 'commander';
import * as T from '../../contract/inputs/git.js';
import type { CliApp, CliCommand } from '../define.js';

const op =
  (name: keyof typeof import('../../ops/project.js')): CliCommand['op'] =>
  async () =>
    (await import('../../ops/project.js'))[name] as never;

export function registerPlan(program: Command, app: CliApp): void {
  app.register(program, {
    table: T.init,
    op: op('init'),
    text: (d) =>
      [
        ...d.created.map((f: string) => `created ${f}`),
        ...d.skipped.map((f: string) => `exists  ${f} (kept; --force overwrites)`),
        ...(d.gitignore_added.length ? [`.gitignore: added ${d.gitignore_added.length} line(s)`] : []),
        ...(d.exclude_added.length ? [`info/exclude: added ${d.exclude_added.length} line(s)`] : []),
        // What a later `merge` would otherwise trip on (an untracked index, a changed .gitignore).
        ...(d.created.length || d.gitignore_added.length
          ? ['next: commit them with your plan: git add .gitignore .tugtool && git commit (runtime files stay ignored)']
          : []),
      ].join('\n'),
  });
  app.register(program, {
    table: T.validate,
    op: op('validate'),
    text: async (d) => (await import('../../project/validate.js')).renderValidate(d),
  });
  app.register(program, { table: T.schema, op: op('schema'), text: (d) => JSON.stringify(d.json_schema, null, 2) });
}
