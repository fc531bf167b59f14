/**
 * `tugcode refactor …` (docs/kernel.md §2.1, §3): the same command table as `tug`, with byte-identical
 * stdout and exit codes; stderr says `tugcode:`. main.ts hands the raw argv after `refactor` here before
 * commander runs, so parse failures are kernel envelopes, never usage text. The kernel loads lazily.
 */
import type { Command } from 'commander';
import { resolve } from 'node:path';
import { kernelEnv, TUGCODE_REFACTOR } from '../config/kernel-env.js';

/** Registers `refactor` for `tugcode --help` only; main.ts dispatches it before commander parses. */
export function registerRefactor(program: Command): void {
  program
    .command('refactor')
    .description(
      'semantic, verified refactors (same commands as `tug`: analyze-impact, run, verify, snapshot, session, doctor; plus run-step and skip for plan steps)',
    )
    .allowUnknownOption(true)
    .helpOption(false);
}

/**
 * If argv (after tugcode's global flags) is `refactor …`, returns the kernel argv and the effective cwd.
 * Global flags: `--json`, `-q/--quiet`, `-v/--verbose`, `-C/--dir DIR`.
 */
export function splitRefactorArgv(argv: string[], cwd: string): { rest: string[]; cwd: string; json: boolean } | null {
  let dir = cwd;
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i]!;
    if (w === '--json') json = true;
    else if (w === '-q' || w === '--quiet' || w === '-v' || w === '--verbose') continue;
    else if (w === '-C' || w === '--dir') {
      const v = argv[++i];
      if (v === undefined) return null;
      dir = resolve(dir, v);
    } else if (w.startsWith('--dir=')) dir = resolve(dir, w.slice(6));
    else if (w === 'refactor') return { rest: argv.slice(i + 1), cwd: dir, json };
    else return null;
  }
  return null;
}

/** tugcode's own refactor commands (docs/kernel.md §7.3–§7.4), dispatched before the kernel parses. */
const STEP_COMMANDS = ['run-step', 'skip'] as const;

/** Their lines in `tugcode refactor --help`, after the kernel's table (which runs under `tugcode refactor`). */
const STEP_COMMANDS_HELP = `  run-step <plan> <step> --worktree W [--attempt N] [--retry-failed] [--verify MODE]
                                                run the step's open **Refactors:** rows in W
  skip <plan> <step> --worktree W --ordinal N --reason TEXT [--attempt N]
                                                skip an open or failed row
                                                (tugcode refactor run-step --help for both)
`;

export async function runRefactor(
  argv: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  writeLog?: (line: string) => void,
): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  // Plan integration (docs/kernel.md §7.3–§7.4): tugcode's own subcommands on top of the kernel's table.
  if ((STEP_COMMANDS as readonly string[]).includes(argv[0] ?? '')) {
    const { runRefactorStepCommand } = await import('./refactor-step.js');
    return runRefactorStepCommand(argv, cwd, env, kernelEnv(env));
  }
  const { runKernelCli } = await import('../kernel/index.js');
  return runKernelCli(argv, {
    ...TUGCODE_REFACTOR,
    env: kernelEnv(env),
    cwd,
    writeLog,
    extraCommands: STEP_COMMANDS,
    extraCommandsHelp: STEP_COMMANDS_HELP,
  });
}
