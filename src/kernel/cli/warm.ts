/**
 * Warm kernels for a long-lived front door (the MCP server, docs/run.md §5): the same argv and envelopes as
 * `tug`, but one kernel per workspace (and settings) stays open between calls, with its backends warm, and
 * takes the session lock per operation, so a `tug` call in between is never locked out.
 */
import { resolve } from 'node:path';
import { KernelError, toKernelError } from '../errors.js';
import { errorEnvelope, type KernelWarning } from '../envelope.js';
import { openKernel, resolveWorkspace } from '../kernel.js';
import { Logger } from '../log.js';
import type { Kernel } from '../kernel.js';
import { parseArgs } from './args.js';
import { cliClock, kernelOptions, runOnKernel, settingsFor, withCallWarnings, type CommandEnv } from './commands.js';

export interface WarmResult {
  envelope: Record<string, unknown>;
  exitCode: number;
}

/** Warm kernels kept at once (each holds backends: a TypeScript program, maybe language servers). */
const MAX_WARM = 4;

export class KernelHost {
  /** In use order: the least recently used first. */
  private readonly kernels = new Map<string, Promise<Kernel>>();

  constructor(private readonly ce: CommandEnv) {}

  /** One `tug analyze-impact | run | verify …` argv, answered with the envelope `tug --json` prints. */
  async call(argv: string[]): Promise<WarmResult> {
    let debug = false;
    try {
      const a = parseArgs(argv, this.ce.env);
      debug = a.logLevel === 'debug';
      if (a.command !== 'analyze-impact' && a.command !== 'run' && a.command !== 'verify')
        throw new KernelError(
          'InvalidArgument',
          `only analyze-impact, run and verify are served warm, not ${a.command}`,
          {
            message: `unsupported command ${a.command}`,
          },
        );
      const ws = resolveWorkspace(a.workspace ? resolve(this.ce.cwd, a.workspace) : this.ce.cwd);
      const sessionDir = a.sessionDir ? resolve(this.ce.cwd, a.sessionDir) : resolve(ws, '.tug');
      const clock = cliClock(this.ce.env);
      const log = new Logger(a.logLevel ?? 'error', this.ce.logSink, () => clock.now());
      const warnings: KernelWarning[] = [];
      const settings = await settingsFor(a, ws, this.ce, log, warnings);
      const key = JSON.stringify([ws, sessionDir, settings]);
      let opening = this.kernels.get(key);
      if (opening)
        this.kernels.delete(key); // re-inserted below: now the most recently used
      else {
        while (this.kernels.size >= MAX_WARM) {
          const [oldest, k] = this.kernels.entries().next().value as [string, Promise<Kernel>];
          this.kernels.delete(oldest);
          void k.then((x) => x.close()).catch(() => undefined);
        }
        // Per-operation lock: the warm kernel never holds the session between calls.
        opening = openKernel({
          ...kernelOptions(a, ws, a.command, settings, this.ce, log),
          holdLock: false,
          sessionDir,
        });
        opening.catch(() => this.kernels.delete(key));
      }
      this.kernels.set(key, opening);
      // Each call reads the config again, so each reports its unknown keys.
      const envelope = await withCallWarnings(warnings, async () => runOnKernel(await opening, a, settings));
      return { envelope, exitCode: 0 };
    } catch (e) {
      const err = toKernelError(e, debug);
      return { envelope: errorEnvelope(err) as Record<string, unknown>, exitCode: err.exitCode };
    }
  }

  async close(): Promise<void> {
    const all = [...this.kernels.values()];
    this.kernels.clear();
    for (const k of all) await (await k.catch(() => null))?.close();
  }
}
