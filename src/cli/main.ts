/**
 * The tugcode entry point: commander wiring, global flags, and the only place that sets the exit code.
 * Command groups are registered from cli/commands/*; their bodies lazy-load the libraries they need, so
 * `tugcode state heartbeat` never loads the markdown parser and `--help` loads nothing heavy.
 */
import { Command, CommanderError } from 'commander';
import { TugError } from '../contract/errors.js';
import { outcome } from './action.js';
import { renderError, toTugError } from './output.js';
import { registerAll } from './commands/index.js';
import { runRefactor, splitRefactorArgv } from '../commands/refactor.js';

const VERSION = '0.1.0';

function buildProgram(): Command {
  const program = new Command('tugcode')
    .description('Coordinate AI coding agents implementing one plan in parallel git worktrees.')
    .version(VERSION, '-V, --version')
    .option('--json', 'print exactly one JSON document on stdout')
    .option('-q, --quiet', 'no text output on success')
    .option('-v, --verbose', 'debug lines on stderr')
    .option('-C, --dir <dir>', 'run as if started in <dir>')
    .showHelpAfterError(false)
    .exitOverride()
    .configureOutput({ writeErr: () => {}, outputError: () => {} });
  registerAll(program);
  // Every subcommand inherits the error handling (commander configures each separately).
  const configure = (c: Command) => {
    c.exitOverride().configureOutput({
      writeErr: () => {},
      outputError: () => {},
      writeOut: (s) => process.stdout.write(s),
    });
    c.commands.forEach(configure);
  };
  program.commands.forEach(configure);
  return program;
}

/** Best-effort command name from argv (for error envelopes raised before a body runs). */
function commandNameFromArgv(program: Command, argv: string[]): string {
  const words: string[] = [];
  let cur: Command | undefined = program;
  for (const tok of argv) {
    if (tok.startsWith('-')) continue;
    const next: Command | undefined = cur?.commands.find((c) => c.name() === tok || c.aliases().includes(tok));
    if (!next) break;
    words.push(next.name());
    cur = next;
  }
  return words.join(' ') || 'tugcode';
}

function commanderToTugError(e: CommanderError, argv: string[]): TugError {
  const msg = e.message.replace(/^error:\s*/, '');
  if (e.code === 'commander.unknownCommand') {
    const m = /unknown command '([^']+)'/.exec(msg);
    return new TugError('UnknownCommand', { command: m?.[1] ?? argv.find((a) => !a.startsWith('-')) ?? '' });
  }
  return new TugError('InvalidArgument', { reason: msg, commander_code: e.code });
}

export async function main(argv: string[] = process.argv.slice(2)): Promise<number> {
  // `tugcode refactor …` bypasses commander: the kernel front door owns its argv (05-kernel.md §3.1).
  const refactor = splitRefactorArgv(argv, process.cwd());
  if (refactor) {
    // SIGINT/SIGTERM: the kernel releases its lock and sandboxes, then we exit 130/143 (05-kernel.md §3.4).
    const { installSignalHandlers } = await import('../kernel/cli/signals.js');
    const off = installSignalHandlers((code, errors) => {
      for (const e of errors) process.stderr.write(`tugcode: cleanup failed: ${e}\n`);
      process.exit(code);
    });
    const r = await runRefactor(refactor.rest, refactor.cwd, process.env, (line) => process.stderr.write(line));
    off();
    if (r.stdout) process.stdout.write(r.stdout);
    if (r.stderr) process.stderr.write(r.stderr);
    return r.exitCode;
  }
  const json = argv.includes('--json');
  const verbose = argv.includes('--verbose') || argv.includes('-v');
  const program = buildProgram();
  try {
    if (argv.length === 0) {
      process.stdout.write(program.helpInformation());
      return 0;
    }
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help')
        return 0;
      // A group called without a subcommand (e.g. `tugcode state`) prints its help, exit 2.
      outcome.rendered = renderError(commandNameFromArgv(program, argv), commanderToTugError(e, argv), [], json);
    } else {
      outcome.rendered = renderError(commandNameFromArgv(program, argv), toTugError(e, verbose), [], json);
    }
  }
  const r = outcome.rendered;
  if (!r) return 0;
  if (r.stdout) process.stdout.write(r.stdout);
  if (r.stderr) process.stderr.write(r.stderr);
  return r.exitCode;
}

process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
});

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    // Last resort: never a Node stack trace on stdout.
    process.stderr.write(`tugcode: InternalError: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 10;
  },
);
