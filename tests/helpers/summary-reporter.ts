/**
 * Prints one plain closing line, `Tests: N passed, N failed, N skipped`, after vitest's own summary, so
 * CI logs carry a runner-independent count.
 */
import type { Reporter, File, Task } from 'vitest';

function count(tasks: Task[], acc = { passed: 0, failed: 0, skipped: 0 }) {
  for (const t of tasks) {
    if (t.type === 'suite') count(t.tasks, acc);
    else if (t.mode === 'skip' || t.mode === 'todo' || t.result?.state === 'skip') acc.skipped++;
    else if (t.result?.state === 'pass') acc.passed++;
    else if (t.result?.state === 'fail') acc.failed++;
  }
  return acc;
}

export default class SummaryReporter implements Reporter {
  onFinished(files: File[] = []): void {
    const c = count(files);
    for (const f of files) if (f.result?.state === 'fail' && f.tasks.length === 0) c.failed++;
    process.stdout.write(`\nTests: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped\n`);
  }
}
