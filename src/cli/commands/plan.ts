import { Option, type Command } from 'commander';
import { action } from '../action.js';

/** Registers `tugcode init` and `tugcode validate`. */
export function registerPlan(program: Command): void {
  program
    .command('init')
    .description('create .tugtool/ with a skeleton plan, config.toml and the ignore lines')
    .option('--force', 'overwrite existing files')
    .action(
      action('init', async (ctx, _args, opts) => {
        const { repo } = await ctx.load();
        const { initProject } = await import('../../project/init.js');
        const data = initProject(repo, ctx.clock, { force: Boolean(opts.force) });
        const text = [
          ...data.created.map((f) => `created ${f}`),
          ...data.skipped.map((f) => `exists  ${f} (kept; --force overwrites)`),
          ...(data.gitignore_added.length ? [`.gitignore: added ${data.gitignore_added.length} line(s)`] : []),
          ...(data.exclude_added.length ? [`info/exclude: added ${data.exclude_added.length} line(s)`] : []),
        ].join('\n');
        return { data, text };
      }),
    );

  program
    .command('validate [plan]')
    .description('validate one plan (path or slug) or every plan under .tugtool/')
    .addOption(
      new Option('--level <level>', 'lenient | normal | strict (default: config validate.level)').choices([
        'lenient',
        'normal',
        'strict',
      ]),
    )
    .action(
      action('validate', async (ctx, args, opts) => {
        const { repo, config } = await ctx.load();
        const { validatePlans, renderValidate } = await import('../../project/validate.js');
        const level = (opts.level as 'lenient' | 'normal' | 'strict' | undefined) ?? config.validate.level;
        const data = validatePlans(repo, args[0], level);
        return { data, text: renderValidate(data) };
      }),
    );
}
