/**
 * Kernel logs (docs/kernel.md §3.1 `--log-level`, §3.4, §12.1): lines at or above the level go to
 * `<session>/logs/kernel.log` (capped at 1 MiB: the older half is dropped) and to an optional sink that the
 * CLI writes to stderr. The default level `error` logs nothing; errors themselves reach stderr as the one
 * error line. Never throws: a log that cannot be written is skipped.
 */
import { appendFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };
const CAP = 1024 * 1024;

export class Logger {
  private file: string | null = null;
  /** Lines logged before the session dir was known (config notes); flushed by `attach`. */
  private early: string[] = [];

  constructor(
    readonly level: LogLevel = 'error',
    private readonly sink?: (line: string) => void,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  enabled(level: LogLevel): boolean {
    return RANK[level] <= RANK[this.level] && this.level !== 'error';
  }

  /** Start writing to `<sessionDir>/logs/kernel.log`. */
  attach(sessionDir: string): void {
    if (this.level === 'error') return;
    try {
      mkdirSync(join(sessionDir, 'logs'), { recursive: true });
      this.file = join(sessionDir, 'logs', 'kernel.log');
      this.write(this.early.join(''));
    } catch {
      this.file = null;
    }
    this.early = [];
  }

  private write(text: string): void {
    if (!this.file || text === '') return;
    try {
      let size = 0;
      try {
        size = statSync(this.file).size;
      } catch {
        size = 0;
      }
      if (size + text.length > CAP) {
        const old = readFileSync(this.file, 'utf8');
        const keep = old.slice(old.indexOf('\n', Math.floor(old.length / 2)) + 1);
        writeFileSync(this.file, keep);
      }
      appendFileSync(this.file, text);
    } catch {
      // logging never fails a command
    }
  }

  log(level: LogLevel, message: string, data?: Record<string, unknown>): void {
    if (!this.enabled(level)) return;
    const line = `${this.now()} ${level} [${process.pid}] ${message}${data ? ' ' + JSON.stringify(data) : ''}\n`;
    if (this.file) this.write(line);
    else this.early.push(line);
    this.sink?.(`${level}: ${message}${data ? ' ' + JSON.stringify(data) : ''}`.slice(0, 500));
  }

  warn(message: string, data?: Record<string, unknown>): void {
    this.log('warn', message, data);
  }

  info(message: string, data?: Record<string, unknown>): void {
    this.log('info', message, data);
  }

  debug(message: string, data?: Record<string, unknown>): void {
    this.log('debug', message, data);
  }

  /** Time an async step at `info` (debug gets the data too). */
  async time<T>(message: string, f: () => Promise<T> | T, data?: (r: T) => Record<string, unknown>): Promise<T> {
    if (!this.enabled('info')) return f();
    const t0 = performance.now();
    const r = await f();
    this.info(message, { ms: Math.round(performance.now() - t0), ...(data ? data(r) : {}) });
    return r;
  }
}

/** A logger that logs nothing (the default for library callers that pass no level). */
export const silentLogger = new Logger('error');
