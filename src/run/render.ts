/**
 * What a user sees while `tugcode run` works (docs/run.md §1): `json` writes the JSON Lines event stream
 * (`--json`; every event, the summary last), `lines` one readable line per event (off a TTY), `live` the
 * in-place worker view with the plan's progress bar (on a TTY), `quiet` nothing (`-q`: a success prints nothing,
 * a failure only the summary and the error line the caller prints, docs/output.md §1). The renderer only writes through
 * `o.write`; it never touches `process`. In `lines` and `live` the summary event is not printed: the
 * caller prints `summaryText` (a table) after `close()`.
 */
import { LiveView } from './render-live.js';
import { eventLine } from './render-text.js';
import type { RunEvent, WorkerName } from './types.js';

export { summaryText } from './render-summary.js';
export { eventLine } from './render-text.js';

export type RenderMode = 'json' | 'lines' | 'live' | 'quiet';

export interface RenderOptions {
  write: (s: string) => void;
  /** Colour codes allowed (a TTY without NO_COLOR). `live` still moves the cursor without colour. */
  color: boolean;
  /** Milliseconds, for elapsed times; injected so tests are deterministic. */
  now: () => number;
  steps_total: number;
  /** Steps already completed when the run starts (the bar starts there). */
  steps_done: number;
  workers: WorkerName[];
  plan_path: string;
  /** `live` only: terminal width; frame lines are clipped to it. */
  columns?: number;
  /** `live` only: the epoch ms of a worker's implementer's last activity (the watchdog's), if it runs one. */
  last_activity?: (worker: WorkerName) => number | undefined;
}

export interface Renderer {
  event(e: RunEvent): void;
  /** `live`: stops the 1 s redraw timer and leaves the final frame, the cursor on the line after it. */
  close(): void;
  /** Runs `print` (a line on stderr) where it does not break the live block, which is drawn again below it. */
  aside(print: () => void): void;
}

export function createRenderer(mode: RenderMode, o: RenderOptions): Renderer {
  switch (mode) {
    case 'json':
      return { event: (e) => o.write(JSON.stringify(e) + '\n'), close: () => {}, aside: (print) => print() };
    case 'lines': {
      // A worker that keeps waiting for the same reason gets one line, not one per look.
      const lastWait = new Map<string, string>();
      return {
        event: (e) => {
          const line = eventLine(e, o);
          if ('worker' in e && typeof e.worker === 'string') {
            if (e.type === 'waiting' && lastWait.get(e.worker) === line) return;
            if (e.type === 'waiting' && line !== null) lastWait.set(e.worker, line);
            else lastWait.delete(e.worker);
          }
          if (line !== null) o.write(line + '\n');
        },
        close: () => {},
        aside: (print) => print(),
      };
    }
    case 'live': {
      const view = new LiveView(o);
      return { event: (e) => view.event(e), close: () => view.close(), aside: (print) => view.aside(print) };
    }
    case 'quiet':
      return { event: () => {}, close: () => {}, aside: (print) => print() };
  }
}
