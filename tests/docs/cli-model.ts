/**
 * The real command-line surface, for the drift test: tugcode's commander tree as the CLI registers it
 * (built from the input tables, plus the options a command adds itself), its global options from
 * `tugcode --help`, and the kernel's commands and flags from `tug --help` and the run-step usage.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Command } from 'commander';
import { registerAll } from '../../src/cli/commands/index.js';
import { CliApp } from '../../src/cli/define.js';
import { RUN_STEP_HELP } from '../../src/commands/refactor-step.js';
import { CLI, ROOT } from '../helpers/cli.js';

export interface CmdNode {
  name: string;
  options: Set<string>;
  subcommands: Map<string, CmdNode>;
}

function nodeOf(c: Command): CmdNode {
  const options = new Set<string>(['--help', '-h']);
  for (const o of c.options) {
    if (o.long) options.add(o.long);
    if (o.short) options.add(o.short);
  }
  const subcommands = new Map<string, CmdNode>();
  for (const s of c.commands) subcommands.set(s.name(), nodeOf(s));
  return { name: c.name(), options, subcommands };
}

function helpText(bin: string, args: string[]): string {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: ROOT, timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

export interface KernelModel {
  commands: Set<string>;
  ops: Set<string>;
  valueFlags: Set<string>;
  boolFlags: Set<string>;
  /** `refactor run-step` / `refactor skip` flags. */
  stepFlags: Map<string, Set<string>>;
}

export interface CliModel {
  program: CmdNode;
  globals: Set<string>;
  /** Global options that take a value. */
  globalValues: Set<string>;
  kernel: KernelModel;
}

export function loadCliModel(): CliModel {
  const program = new Command('tugcode');
  registerAll(program, new CliApp(ROOT, {}, { stdinIsTTY: false, stdoutIsTTY: false }));
  const root = nodeOf(program);

  // Global options, as `tugcode --help` prints them (main.ts declares them on the program).
  const top = helpText(CLI, ['--help']);
  const globals = new Set<string>();
  const globalValues = new Set<string>();
  const opts = top.slice(top.indexOf('Options:'), top.indexOf('Commands:'));
  for (const m of opts.matchAll(/^\s+(?:(-\w), )?(--[a-z-]+)( <\w+>)?/gm)) {
    if (m[1]) globals.add(m[1]);
    globals.add(m[2]!);
    if (m[3]) {
      globalValues.add(m[2]!);
      if (m[1]) globalValues.add(m[1]);
    }
  }

  const tug = helpText(join(ROOT, 'bin', 'tug.js'), ['--help']);
  const section = (from: string, to: string) => tug.slice(tug.indexOf(from), to ? tug.indexOf(to) : undefined);
  const commands = new Set<string>();
  for (const m of section('commands:', 'operations:').matchAll(/^ {2}([a-z-]+)/gm)) commands.add(m[1]!);
  const ops = new Set<string>();
  for (const m of section('operations:', 'global flags:').matchAll(/^ {2}([a-z-]+)/gm)) ops.add(m[1]!);
  const valueFlags = new Set<string>();
  const boolFlags = new Set<string>(['--help', '--version', '-h']);
  for (const m of tug.matchAll(/(--[a-z-]+)(?=([^\n]*))/g)) {
    const after = m[2]!;
    if (/^ ([A-Z]|[a-z]+\|)/.test(after)) valueFlags.add(m[1]!);
    else boolFlags.add(m[1]!);
  }
  const stepFlags = new Map<string, Set<string>>();
  for (const m of RUN_STEP_HELP.matchAll(/tugcode refactor (run-step|skip)([^\n]*)/g))
    stepFlags.set(m[1]!, new Set([...m[2]!.matchAll(/--[a-z-]+/g)].map((x) => x[0]).concat(['--json', '--help'])));
  return { program: root, globals, globalValues, kernel: { commands, ops, valueFlags, boolFlags, stepFlags } };
}
