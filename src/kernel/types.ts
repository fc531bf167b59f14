/**
 * Public kernel types (docs/kernel.md §2.3, §4): op specs, options, and the result shapes the CLI serializes.
 */
import type { KernelWarning } from './envelope.js';
import type { KernelLocation } from './errors.js';
import type { EditJson, PatchSet } from './patch/ir.js';
import type { ReferenceKind, SymbolKind } from './backends/types.js';

/** The kernel's clock, injected by its front door: `now()` is ISO 8601 UTC with milliseconds. */
export interface KernelClock {
  now(): string;
}

export type VerifyMode = 'none' | 'syntax' | 'tests' | 'typecheck';
export type OrganizeMode = 'all' | 'sort' | 'remove-unused';
export type OpSpec =
  | {
      op: 'rename-symbol';
      at?: { file: string; line: number; col: number };
      symbol?: string;
      to: string;
      expect?: string;
      safety?: 'strict' | 'aggressive';
    }
  | { op: 'organize-imports'; file: string; mode: OrganizeMode };

/**
 * What a program that embeds the kernel (its host) tells it about itself. The kernel names no host: `tug`
 * passes none of these, and a host passes its own.
 */
export interface HostOptions {
  /**
   * Environment names `<prefix><KEY>` (the setting's key upper-cased: `MAX_EDITS`) that set a kernel
   * setting, stronger than its `TUG_*` name. Default: none.
   */
  settingsEnvPrefix?: string;
  /** Directory names that hold the host's own files: left out, at any depth, of every workspace listing. */
  hostDirs?: readonly string[];
  /** Workspace-relative files of the host (a database and its journals): left out of every listing. */
  hostFiles?: readonly string[];
}

/** A front door of the kernel's command table: `tug` itself, or a host that serves the same commands. */
export interface FrontDoor extends HostOptions {
  /** The program that starts each stderr line: `<prog>: <Code>: <message>`. */
  prog: string;
  /** How the commands are invoked, as `--version` prints it. Default: `prog`. */
  invokedAs?: string;
}

export interface KernelOptions extends HostOptions {
  workspace: string;
  sessionDir?: string;
  fresh?: boolean;
  lockTimeoutS?: number;
  noWait?: boolean;
  python?: string;
  rustAnalyzer?: string;
  safety?: 'strict' | 'aggressive';
  include?: string[];
  exclude?: string[];
  testCommand?: string[];
  testTimeoutS?: number;
  typecheckCommand?: string[];
  typecheckTimeoutS?: number;
  keepSandbox?: boolean;
  logLevel?: 'error' | 'warn' | 'info' | 'debug';
  /** Receives each log line (the CLI writes them to stderr); the session's logs/kernel.log gets them too. */
  logSink?: (line: string) => void;
  /** A logger made by the caller (the CLI logs config notes before the kernel opens); wins over logLevel. */
  logger?: import('./log.js').Logger;
  /** Recorded in lock.json. */
  command?: string;
  /**
   * The front door's environment (the kernel never reads process.env): configuration (TUG_*, and a host's
   * `settingsEnvPrefix` names), test seams, and the base environment of every child process (verifiers,
   * language servers, git). Default: empty.
   */
  env?: Record<string, string | undefined>;
  /** The clock for session files, lock.json, journals and logs (a host's own clock fits). Default: the system's. */
  clock?: KernelClock;
  /**
   * Hold the session lock from open to close (a one-shot CLI call; run-step, §12.2). By default the lock is
   * taken per operation (snapshot, analyzeImpact, prepare, verifyPrepared, apply, run, verify), so a warm
   * kernel in a long-lived process never locks out another `tug` call between its operations.
   */
  holdLock?: boolean;
  /** Already resolved settings (the CLI resolves them once); skips reading the configuration. */
  settings?: import('./config.js').KernelSettings;
}

export interface SymbolInfo {
  id: string;
  name: string;
  kind: SymbolKind;
  location: KernelLocation;
  qualified_name: string | null;
  container: string | null;
  selector: string | null;
}

export interface Reference {
  location: KernelLocation;
  kind: ReferenceKind;
}

export interface Summary {
  files_changed: number;
  edits_count: number;
  bytes_added: number;
  bytes_removed: number;
}

export interface Diagnostic {
  file: string;
  line: number;
  col: number | null;
  code: string | null;
  message: string;
}

export type CheckName = 'ts-syntax' | 'py-compile' | 'cargo-check' | 'tests' | 'tsc' | 'pyright' | 'typecheck-command';

export interface Check {
  name: CheckName;
  language: 'typescript' | 'python' | 'rust' | null;
  /** `skipped`: a lower stage with nothing to run in a cumulative mode (§11.4). */
  status: 'passed' | 'failed' | 'unavailable' | 'skipped';
  command: string[] | null;
  exit_code: number | null;
  duration_ms: number;
  baseline: { diagnostics: number } | null;
  diagnostics: Diagnostic[];
  output: string | null;
  reason: string | null;
}

export interface Verification {
  status: 'passed' | 'failed' | 'skipped';
  mode: VerifyMode;
  sandbox: 'minimal' | 'full' | null;
  checks: Check[];
}

export interface AnalyzeResult {
  snapshot_id: string;
  operation: 'rename-symbol' | 'organize-imports';
  op_hash: string;
  symbol?: SymbolInfo;
  new_name?: string;
  file?: string;
  references?: Reference[];
  impact: { files_affected: number; references_count: number; edits_estimated: number };
  warnings: KernelWarning[];
}

export interface Prepared {
  op: OpSpec;
  snapshot_id: string;
  operation: 'rename-symbol' | 'organize-imports';
  op_hash: string;
  symbol?: SymbolInfo;
  oldName?: string;
  newName?: string;
  references: Reference[];
  patchSet: PatchSet;
  edits: EditJson[];
  unified_diff: string;
  summary: Summary;
  snapshot_after: string;
  warnings: KernelWarning[];
  /** Before bytes of every changed file. */
  before: Map<string, Uint8Array>;
}

export interface RunResult {
  snapshot_id: string;
  operation: 'rename-symbol' | 'organize-imports';
  op_hash: string;
  symbol?: SymbolInfo;
  patch: { edits: EditJson[]; unified_diff: string };
  summary: Summary;
  verification: Verification;
  warnings: KernelWarning[];
  undo_token: string;
  applied: boolean;
  files_written: string[];
  snapshot_after: string;
}

export interface ApplyResult {
  snapshot_id: string;
  applied: boolean;
  files_written: string[];
  snapshot_after: string;
}

export interface VerifyResult {
  snapshot_id: string;
  mode: 'syntax' | 'tests' | 'typecheck';
  passed: true;
  verification: Verification;
  warnings: KernelWarning[];
}

export interface SnapshotResult {
  snapshot_id: string;
  file_count: number;
  total_bytes: number;
  files_by_language: { typescript: number; javascript: number; python: number; rust: number; config: number };
  stored: true;
  warnings: KernelWarning[];
}
