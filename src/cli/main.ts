/**
 * The tugcode entry point: commander wiring, global flags, and the only place that sets the exit code.
 * Command groups are registered from cli/commands/*; their bodies lazy-load the libraries they need, so
 * `tugcode state heartbeat` never loads the markdown parser and `--help` loads nothing heavy.
 */
import { writeSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { TugError } from '../contract/errors.js';
import { VERSION } from '../contract/version.js';
import { CliApp } from './define.js';
import { renderError, streamsLines, toTugError, type Rendered } from './output.js';
import { clockFromEnv } from '../clock.js';
import { registerAll } from './commands/index.js';
import { registerState } from './commands/state.js';
import { runRefactor, splitRefactorArgv } from '../commands/refactor.js';

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

/** The command argv names, as far as it names one (the program itself when it names none). */
function commandOfArgv(program: Command, argv: string[]): { name: string; cmd: Command } {
  const words: string[] = [];
  let cur: Command = program;
  for (const tok of argv) {
    if (tok.startsWith('-')) continue;
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
  return new TugError('InvalidArgument', { reason: `${name} needs <${arg}>: ${usage}`, argument: `<${arg}>` });
}

/** `run`/`demo` write JSON Lines: a usage error is their summary line (output.ts). */
function linesOf(name: string, argv: string[]): { at: string } | undefined {
  return streamsLines(name, argv.includes('--dry-run')) ? { at: clockFromEnv(process.env).now() } : undefined;
}

function commanderToTugError(e: CommanderError, argv: string[], program: Command): TugError {
  const msg = e.message.replace(/^error:\s*/, '');
  if (e.code === 'commander.missingArgument' || e.code === 'commander.missingMandatoryOptionValue') {
    const positional = missingPositional(program, argv);
    if (positional) return positional;
  }
  if (e.code === 'commander.unknownCommand') {
    const m = /unknown command '([^']+)'/.exec(msg);
    return new TugError('UnknownCommand', { command: m?.[1] ?? argv.find((a) => !a.startsWith('-')) ?? '' });
  }
  return new TugError('InvalidArgument', { reason: msg, commander_code: e.code });
}

export async function main(argv: string[] = process.argv.slice(2)): Promise<number> {
  // `tugcode refactor …` bypasses commander: the kernel front door owns its argv (docs/kernel.md §3.1).
  const refactor = splitRefactorArgv(argv, process.cwd());
  if (refactor) {
    // SIGINT/SIGTERM: the kernel releases its lock and sandboxes, then we exit 130/143 (docs/kernel.md §3.4).
    const { installSignalHandlers } = await import('../kernel/light.js');
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
  // Under `tugcode run`, an agent's state commands go through the driver (docs/agents.md §1.5).
  const relay = process.env.TUG_STATE_RELAY;
  if (relay) {
    const { relayed, sendToRelay } = await import('../run/state-relay.js');
    if (relayed(argv)) {
      const r = await sendToRelay(relay, argv, process.cwd());
      process.stdout.write(r.stdout);
      process.stderr.write(r.stderr);
      return r.exit;
    }
  }
  const json = argv.includes('--json');
  const verbose = argv.includes('--verbose') || argv.includes('-v');
  // Asked only when needed (text colours, reading stdin): creating process.stdin or process.stdout loads net
  // and the stream modules.
  const app = new CliApp(process.cwd(), process.env, {
    get stdinIsTTY() {
      return Boolean(process.stdin.isTTY);
    },
    get stdoutIsTTY() {
      return Boolean(process.stdout.isTTY);
    },
  });
  const program = buildProgram(app, argv);
  let r: Rendered | undefined;
  try {
    if (argv.length === 0) {
      writeAll(1, program.helpInformation());
      return 0;
    }
    await program.parseAsync(argv, { from: 'user' });
    r = app.rendered;
  } catch (e) {
    if (e instanceof CommanderError) {
      const asked = argv.includes('-h') || argv.includes('--help') || argv[0] === 'help';
      if (
        e.code === 'commander.version' ||
        (asked && (e.code === 'commander.helpDisplayed' || e.code === 'commander.help'))
      )
        return 0;
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.help') {
        // A group called without a subcommand (`tugcode state`, `tugcode --json`): its help, exit 2.
        const name = commandNameFromArgv(program, argv);
        const group = name === 'tugcode' ? program : program.commands.find((c) => c.name() === name.split(' ')[0]);
        const err = new TugError('InvalidArgument', {
          reason: `${name === 'tugcode' ? 'no command given' : `${name} needs a subcommand`}; see tugcode ${name === 'tugcode' ? '' : name + ' '}--help`,
        });
        r = renderError(name, err, [], { json });
        if (!json && group) r.stderr = group.helpInformation() + r.stderr;
      } else {
        const name = commandNameFromArgv(program, argv);
        r = renderError(name, commanderToTugError(e, argv, program), [], { json, lines: linesOf(name, argv) });
      }
    } else {
      const name = commandNameFromArgv(program, argv);
      r = renderError(name, toTugError(e, { verbose }), [], { json, lines: linesOf(name, argv) });
    }
  }
  if (!r) return 0; // --help or --version, already printed
  writeAll(1, r.stdout);
  writeAll(2, r.stderr);
  return r.exitCode;
}

/**
 * Writes a command's output with fs.writeSync: the process.stdout stream would load net and the stream
 * modules (~5 ms of a hot command). A full non-blocking pipe (EAGAIN) hands the rest to the stream; a reader
 * gone (EPIPE) ends the process as the stream's handler below does.
 */
function writeAll(fd: 1 | 2, text: string): void {
  if (!text) return;
  const bytes = Buffer.from(text, 'utf8');
  let done = 0;
  try {
    while (done < bytes.length) done += writeSync(fd, bytes, done);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EAGAIN') (fd === 1 ? process.stdout : process.stderr).write(bytes.subarray(done));
    else if (code === 'EPIPE') {
      if (fd === 1) process.exit(0);
    } else throw e;
  }
}

/**
 * A reader gone from stdout ends the process quietly, whoever writes to the stream. The handler is attached
 * when the stream is first used, since creating it costs what writeAll saves.
 */
function onStdoutCreated(attach: (s: NodeJS.WriteStream) => void): void {
  const d = Object.getOwnPropertyDescriptor(process, 'stdout');
  if (!d?.get || !d.configurable) return attach(process.stdout);
  const get = d.get;
  Object.defineProperty(process, 'stdout', {
    configurable: true,
    enumerable: d.enumerable,
    get() {
      Object.defineProperty(process, 'stdout', d);
      const s = get.call(process) as NodeJS.WriteStream;
      attach(s);
      return s;
    },
  });
}

onStdoutCreated((s) =>
  s.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
  }),
);

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
