/**
 * CPU seconds of a process from /proc (Linux), for the suite's measurement (TUGCODE_CPU_PROBE, see
 * tests/helpers/cpu-probe.ts). No vitest imports: the global setup uses it too.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ProcCpu {
  user: number;
  sys: number;
  /** Of the children it waited for (their own children included). */
  cuser: number;
  csys: number;
}

/** utime, stime, cutime, cstime in seconds from /proc/<pid>/stat; zeros where it cannot be read. */
export function procCpu(pid: number | 'self'): ProcCpu {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "pid (comm) ", the fields start at proc(5)'s field 3.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const t = (field: number) => Number(f[field - 3]) / 100;
    return { user: t(14), sys: t(15), cuser: t(16), csys: t(17) };
  } catch {
    return { user: 0, sys: 0, cuser: 0, csys: 0 };
  }
}

/**
 * A PostgreSQL server runs detached (pg_ctl), so no test process reaps it and its CPU (the backends', which the
 * postmaster reaps) shows in no worker's count: with TUGCODE_CPU_PROBE set, one line for it before it stops.
 */
export function probePostmaster(dataDir: string, label: string): void {
  const out = process.env.TUGCODE_CPU_PROBE;
  if (!out) return;
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    appendFileSync(out, JSON.stringify({ file: label, daemon: true, ...procCpu(pid) }) + '\n');
  } catch {
    /* not running */
  }
}
