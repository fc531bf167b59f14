/**
 * The kernel front door (docs/kernel.md §3): argv → one JSON envelope (or `--text`), one stderr line on
 * errors, and the exit code. Pure: returns what to print; `bin/tug.js` and a host's front door print it.
 */
import { errorEnvelope } from '../envelope.js';
import { KernelError, toKernelError } from '../errors.js';
import { parseArgs, type ParsedArgs } from './args.js';
import { renderText } from './text.js';
import type { FrontDoor } from '../types.js';

export const KERNEL_CLI_VERSION = '0.1.0';

export interface CliOutput {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/**
 * The help text for a front door: `usage` is how it is invoked (`tug`, `tugcode refactor`), `extraCommands`
 * the host's own command lines, listed after the kernel's (docs/kernel.md §2.1).
 */
function kernelHelp(usage: string, extraCommands = ''): string {
  return `usage: ${usage} <command> [flags] [<op> <op-args>]

commands:
  analyze-impact <op> <op-args>                 resolve the target and compute the edit set
  run [--apply] [--verify none|syntax|tests|typecheck] <op> <op-args>
  verify <syntax|tests|typecheck>               verify the current content in a sandbox
  snapshot                                      compute and store the snapshot
  session status | session clean [--all]
  doctor                                        probe backends and verifiers
${extraCommands}
operations:
  rename-symbol (--at FILE:LINE:COL [--expect OLD] | --symbol FILE::Qualified.Name) --to NEW
  organize-imports --file FILE [--mode all|sort|remove-unused]

global flags: --workspace DIR --session-dir DIR --fresh --no-wait --lock-timeout S --safety strict|aggressive
  --include GLOB --exclude GLOB --text --json --log-level LEVEL --test-command JSON --test-timeout S
  --snapshot-id ID --keep-sandbox

Output is one JSON document on stdout; exit codes 0, 2, 3, 4, 5, 10 (see docs).
`;
}

export const HELP = kernelHelp('tug');

function stderrLine(prog: string, e: KernelError): string {
  const line = `${prog}: ${e.code}: ${e.message}`.replace(/[\r\n]+/g, ' ');
  return (line.length > 500 ? line.slice(0, 500) : line) + '\n';
}

/** Run the kernel CLI on argv (the words after `tug`, or after the host's command: `o.invokedAs`). */
export async function runKernelCli(
  argv: string[],
  o: FrontDoor & {
    env: Record<string, string | undefined>;
    cwd: string;
    /** Where log lines go as they happen (the binaries pass stderr); without it they are collected in `stderr`. */
    writeLog?: (line: string) => void;
    /**
     * The host's own commands: their help lines, listed after the kernel's under `invokedAs`, and their names,
     * for the missing-command message (docs/kernel.md §2.1). Without them the help is `tug`'s.
     */
    extraCommands?: readonly string[];
    extraCommandsHelp?: string;
  },
): Promise<CliOutput> {
  let args: ParsedArgs | null = null;
  const wantsText = argv.includes('--text');
  let command = 'unknown';
  const logs: string[] = [];
  const logSink = (line: string) => {
    if (o.writeLog) o.writeLog(`${o.prog}: ${line}\n`);
    else logs.push(`${o.prog}: ${line}\n`);
  };
  try {
    args = parseArgs(argv, o.env, o.extraCommands);
    if (args.command === 'help') {
      const help = o.extraCommandsHelp === undefined ? HELP : kernelHelp(o.invokedAs ?? o.prog, o.extraCommandsHelp);
      return { stdout: help, stderr: '', exitCode: 0 };
    }
    if (args.command === 'version')
      return {
        stdout: `${o.invokedAs ?? o.prog} ${KERNEL_CLI_VERSION}\n`,
        stderr: '',
        exitCode: 0,
      };
    command = args.command;
    const { executeCommand } = await import('./commands.js');
    const env = await executeCommand(args, {
      env: o.env,
      cwd: o.cwd,
      settingsEnvPrefix: o.settingsEnvPrefix,
      hostDirs: o.hostDirs,
      hostFiles: o.hostFiles,
      logSink,
    });
    const newName = args.op?.op === 'rename-symbol' ? args.op.to : undefined;
    const stdout = wantsText ? renderText(command, env, newName) : JSON.stringify(env) + '\n';
    return { stdout, stderr: logs.join(''), exitCode: 0 };
  } catch (e) {
    const err = toKernelError(e, args?.logLevel === 'debug');
    const env = errorEnvelope(err);
    const stdout = wantsText ? renderText(command, env) : JSON.stringify(env) + '\n';
    return { stdout, stderr: logs.join('') + stderrLine(o.prog, err), exitCode: err.exitCode };
  }
}
