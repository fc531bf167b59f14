/**
 * Measurement only (TUGCODE_CPU_PROBE=<file.jsonl>, see vitest.config.ts): after each test file, one line with
 * the file's worker process CPU (its own and that of the children it reaped: git, the CLI, pyright…), when the
 * worker started and when the file ended. bench/suite-cpu.mjs sums the lines into a per-file table and the
 * run's idle worker time.
 */
import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { procCpu } from './proc-cpu.js';

const out = process.env.TUGCODE_CPU_PROBE;
let file = '';

if (out) {
  beforeAll((suite) => {
    file = (suite as { filepath?: string }).filepath ?? suite.name;
  });
  afterAll(() => {
    const self = process.cpuUsage();
    const c = procCpu('self');
    appendFileSync(
      out,
      JSON.stringify({
        file,
        pid: process.pid,
        start: Date.now() - process.uptime() * 1000,
        end: Date.now(),
        user: self.user / 1e6,
        sys: self.system / 1e6,
        cuser: c.cuser,
        csys: c.csys,
      }) + '\n',
    );
  });
}
