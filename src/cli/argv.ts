/**
 * A command line to its output: commander wiring, global flags, and the error envelopes of argv that names no
 * valid call. main.ts runs it for the process (and alone writes and sets the exit code); tests run it in a
 * process that serves many calls (tests/helpers/cli-in-process.ts), through the same code as the CLI.
 * Command groups are registered from cli/commands/*; their bodies lazy-load the libraries they need, so
 * `tugcode state heartbeat` never loads the markdown parser and `--help` loads nothing heavy.
 */
import { Command, CommanderError } from 'commander';
import { TugError } from '../contract/errors.js';
import { VERSION } from '../contract/version.js';
import { CliApp } from './define.js';
import { renderError, streamsLines, toTugError, type Rendered } from './output.js';
import { clockFromEnv } from '../clock.js';
import { registerAll } from './commands/index.js';
import { registerState } from './commands/state.js';

/** Where a call runs: its directory, its environment, and whether stdin and stdout are terminals. */
export interface ArgvIo {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Getters in the CLI: asking creates process.stdin/stdout, which loads net and the stream modules. */
  readonly stdinIsTTY: boolean;
  readonly stdoutIsTTY: boolean;
}

/**
 * The words of argv that are not options (nor the value of `-C`/`--dir`): the group and command called.
 * `state` is the group of the hot commands; only it is declared for them (the other groups' declarations are
 * ~5 ms of every call). Any other word, or a help flag, declares every command, so help, suggestions and
 * errors see them all. bin/tugcode.cjs reads argv the same way to run `state` commands from a bundle that
 * holds only that group (scripts/bundle.mjs).
 */
function wordsOfArgv(argv: string[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < argv.length && words.length < 2; i++) {
    const a = argv[i]!;
    if (a === '-C' || a === '--dir') i++;
    else if (!a.startsWith('-')) words.push(a);
  }
  return words;
}

function buildProgram(app: CliApp, argv: string[]): Command {
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
  const [group, sub] = wordsOfArgv(argv);
  const help = argv.includes('-h') || argv.includes('--help');
  if (group === 'state' && !help) registerState(program, app, sub);
  else registerAll(program, app);
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

/**
 * argv's words that are no flag, with their places. `-C <dir>`'s value is no word either: `-C repo state
 * bogus` names `state` as without it.
 */
function wordsOf(argv: string[]): { word: string; at: number }[] {
  const words: { word: string; at: number }[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-C' || a === '--dir') i++;
    else if (!a.startsWith('-')) words.push({ word: a, at: i });
  }
  return words;
}

/** The command argv names, as far as it names one (the program itself when it names none). */
function commandOfArgv(program: Command, argv: string[]): { name: string; cmd: Command } {
  const words: string[] = [];
  let cur: Command = program;
  for (const { word: tok } of wordsOf(argv)) {
    const next: Command | undefined = cur.commands.find((c) => c.name() === tok || c.aliases().includes(tok));
    if (!next) break;
    words.push(next.name());
    cur = next;
  }
  return { name: words.join(' ') || 'tugcode', cmd: cur };
}

/** Best-effort command name from argv (for error envelopes raised before a body runs). */
function commandNameFromArgv(program: Command, argv: string[]): string {
  return commandOfArgv(program, argv).name;
}

/**
 * A call missing a positional argument: commander checks required flags first, so `state claim` alone
 * would only say `--worktree` is missing. The first missing positional is named instead, with the usage,
 * and a missing plan with how to list the plans. Null when every positional was given.
 */
function missingPositional(program: Command, argv: string[]): TugError | null {
  const { name, cmd } = commandOfArgv(program, argv);
  if (cmd === program) return null;
  const missing = cmd.registeredArguments.filter((a) => a.required)[cmd.args.length];
  if (!missing) return null;
  const arg = missing.name();
  const usage = `tugcode ${name} ${cmd.usage()}`;
  if (arg === 'plan')
    return new TugError(
      'InvalidArgument',
      { reason: `${name} needs a plan (its path or slug): ${usage}`, argument: '<plan>' },
      { hint: 'tugcode status   (lists the plans)' },
    );
  return new TugError(
    'InvalidArgument',
    { reason: `${name} needs <${arg}>: ${usage}`, argument: `<${arg}>` },
    { hint: `tugcode ${name} --help   (its arguments and flags)` },
  );
}

/** `run`/`demo` write JSON Lines: a usage error is their summary line (output.ts). */
function linesOf(name: string, argv: string[], env: NodeJS.ProcessEnv): { at: string } | undefined {
  return streamsLines(name, argv.includes('--dry-run')) ? { at: clockFromEnv(env).now() } : undefined;
}

/**
 * The hint of an unknown command or subcommand: commander's own "Did you mean" (the one an unknown flag's
 * message carries) as full command lines, then where the commands are listed.
 */
function unknownCommandHint(program: Command, argv: string[], msg: string): string {
  const group = commandOfArgv(program, argv).name;
  const prefix = group === 'tugcode' ? 'tugcode' : `tugcode ${group}`;
  const help = `${prefix} --help`;
  const m = /\(Did you mean (?:one of )?(.+)\?\)/.exec(msg);
  if (!m) return help;
  const names = m[1]!.split(', ').map((n) => `${prefix} ${n}`);
  return `did you mean ${names.join(' or ')}?   (${help} lists the commands)`;
}

function commanderToTugError(e: CommanderError, argv: string[], program: Command): TugError {
  const msg = e.message.replace(/^error:\s*/, '');
  if (e.code === 'commander.missingArgument' || e.code === 'commander.missingMandatoryOptionValue') {
    const positional = missingPositional(program, argv);
    if (positional) return positional;
  }
  if (e.code === 'commander.unknownCommand') {
    const m = /unknown command '([^']+)'/.exec(msg);
    const command = m?.[1] ?? argv.find((a) => !a.startsWith('-')) ?? '';
    return new TugError('UnknownCommand', { command }, { hint: unknownCommandHint(program, argv, msg) });
  }
  // An unknown flag, a flag without its value, a value not among its choices, a word too many: the
  // command's help lists its flags and their values.
  const { name } = commandOfArgv(program, argv);
  return new TugError(
    'InvalidArgument',
    { reason: msg, commander_code: e.code },
    { hint: `${name === 'tugcode' ? 'tugcode' : `tugcode ${name}`} --help   (its arguments and flags)` },
  );
}

/**
 * `tugcode help <group> <command>` as `tugcode <group> <command> --help`: commander's `help` looks one level
 * down only, and would print the group's help (`tugcode <group> help <command>` already works). main.ts
 * applies it too, so `tugcode help refactor` is the refactor front door's help.
 */
export function helpOfSubcommand(argv: string[]): string[] {
  const at = wordsOf(argv)
    .slice(0, 2)
    .map((w) => w.at);
  if (at.length < 2 || argv[at[0]!] !== 'help') return argv;
  return [...argv.slice(0, at[0]), ...argv.slice(at[0]! + 1), '--help'];
}

/**
 * Help asked of a command that does not exist (`tugcode state help bogus`, `tugcode help state bogus`, which
 * main.ts made `state bogus --help`, `tugcode help bogus`): commander would print the group's help, or say the
 * group needs a subcommand. `asked` is whether help was asked at all, `help` as a group's word counting
 * (`tugcode state help init` is init's help, exit 0); `unknown` is then argv without the help words, so the
 * call fails as `tugcode state bogus` does (docs/output.md §1).
 */
function helpAsked(program: Command, argv: string[]): { asked: boolean; unknown: string[] | null } {
  const flags = argv.includes('-h') || argv.includes('--help');
  let asked = flags;
  let cur: Command = program;
  const helpAt: number[] = [];
  for (const { word: tok, at: i } of wordsOf(argv)) {
    // Only a group (subcommands, no arguments of its own) has the `help` command and unknown subcommands.
    if (cur.commands.length === 0 || cur.registeredArguments.length > 0) break;
    if (tok === 'help' && helpAt.length === 0) {
      asked = true;
      helpAt.push(i);
      continue;
    }
    const next = cur.commands.find((c) => c.name() === tok || c.aliases().includes(tok));
    if (!next) {
      if (!asked) break;
      const rest = argv.filter((a, j) => !helpAt.includes(j) && a !== '-h' && a !== '--help');
      return { asked, unknown: rest };
    }
    cur = next;
  }
  return { asked, unknown: null };
}

/**
 * Runs the commander-parsed call `argv` and returns what to print and the exit code; the empty output with
 * exit 0 when commander printed help or the version itself.
 */
export async function runArgv(argv: string[], io: ArgvIo): Promise<Rendered> {
  argv = helpOfSubcommand(argv);
  const json = argv.includes('--json');
  const verbose = argv.includes('--verbose') || argv.includes('-v');
  const app = new CliApp(io.cwd, io.env, io);
  let program = buildProgram(app, argv);
  const help = helpAsked(program, argv);
  if (help.unknown) {
    argv = help.unknown;
    program = buildProgram(app, argv);
  }
  const printed: Rendered = { stdout: '', stderr: '', exitCode: 0 };
  try {
    if (argv.length === 0) return { ...printed, stdout: program.helpInformation() };
    await program.parseAsync(argv, { from: 'user' });
    return app.rendered ?? printed; // --help or --version, already printed
  } catch (e) {
    if (e instanceof CommanderError) {
      if (
        e.code === 'commander.version' ||
        (help.asked && (e.code === 'commander.helpDisplayed' || e.code === 'commander.help'))
      )
        return printed;
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.help') {
        // A group called without a subcommand (`tugcode state`, `tugcode --json`): its help, exit 2.
        const name = commandNameFromArgv(program, argv);
        const group = name === 'tugcode' ? program : program.commands.find((c) => c.name() === name.split(' ')[0]);
        const err = new TugError(
          'InvalidArgument',
          {
            reason: `${name === 'tugcode' ? 'no command given' : `${name} needs a subcommand`}; see tugcode ${name === 'tugcode' ? '' : name + ' '}--help`,
          },
          { hint: `tugcode ${name === 'tugcode' ? '' : name + ' '}--help   (lists the commands)` },
        );
        const r = renderError(name, err, [], { json });
        if (!json && group) r.stderr = group.helpInformation() + r.stderr;
        return r;
      }
      const name = commandNameFromArgv(program, argv);
      return renderError(name, commanderToTugError(e, argv, program), [], {
        json,
        lines: linesOf(name, argv, io.env),
      });
    }
    const name = commandNameFromArgv(program, argv);
    return renderError(name, toTugError(e, { verbose }), [], { json, lines: linesOf(name, argv, io.env) });
  }
}
