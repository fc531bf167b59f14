#!/usr/bin/env node
// The suite's CPU per test file, from a run with the probe on (tests/helpers/cpu-probe.ts):
//   TUGCODE_CPU_PROBE=/tmp/probe.jsonl npx vitest run [files…]; node bench/suite-cpu.mjs /tmp/probe.jsonl [--top N] [--forks 2]
// Prints the files by CPU seconds (their worker process and the children it reaped), the PostgreSQL servers'
// CPU (detached, so no worker counts it), the total, and how long the run had fewer workers busy than --forks.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i < 0 ? def : Number(args.splice(i, 2)[1]);
};
const top = opt('--top', 30);
const forks = opt('--forks', 2);
const lines = readFileSync(args[0], 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));
// A worker runs file after file (vitest's isolate: false), and its counters add up: each file's share is the
// difference from the worker's previous line, and it started when that file ended.
const files = [];
const last = new Map();
for (const l of lines.filter((x) => !x.daemon).sort((a, b) => a.end - b.end)) {
  const p = last.get(l.pid);
  last.set(l.pid, l);
  files.push(
    p === undefined
      ? l
      : {
          ...l,
          start: p.end,
          user: l.user - p.user,
          sys: l.sys - p.sys,
          cuser: l.cuser - p.cuser,
          csys: l.csys - p.csys,
        },
  );
}
const daemons = lines.filter((l) => l.daemon);
const cpu = (l) => l.user + l.sys + l.cuser + l.csys;

files.sort((a, b) => cpu(b) - cpu(a));
const f1 = (n) => n.toFixed(1).padStart(7);
console.log(`${'file'.padEnd(52)}    cpu    wall   self  child`);
for (const l of files.slice(0, top))
  console.log(
    `${relative(process.cwd(), l.file).padEnd(52)}${f1(cpu(l))}${f1((l.end - l.start) / 1000)}${f1(l.user + l.sys)}${f1(l.cuser + l.csys)}`,
  );
const rest = files.slice(top);
console.log(`${`(${rest.length} other files)`.padEnd(52)}${f1(rest.reduce((s, l) => s + cpu(l), 0))}`);
const pgCpu = daemons.reduce((s, l) => s + cpu(l), 0);
const filesCpu = files.reduce((s, l) => s + cpu(l), 0);
console.log(`${'(PostgreSQL servers)'.padEnd(52)}${f1(pgCpu)}`);
console.log(
  `total: ${files.length} files, ${filesCpu.toFixed(1)} CPU-s in the workers + ${pgCpu.toFixed(1)} in PostgreSQL`,
);

// Worker occupancy: from the first worker's start to the last file's end, how long k workers were busy.
const ev = files.flatMap((l) => [
  [l.start, 1],
  [l.end, -1],
]);
ev.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
const at = new Map();
let busy = 0;
for (let i = 0; i < ev.length; i++) {
  if (i > 0) at.set(busy, (at.get(busy) ?? 0) + (ev[i][0] - ev[i - 1][0]) / 1000);
  busy += ev[i][1];
}
const span = (ev.at(-1)[0] - ev[0][0]) / 1000;
let idle = 0;
for (const [k, s] of at) if (k < forks) idle += (forks - k) * s;
console.log(
  `span ${span.toFixed(0)} s; seconds with k workers busy: ${[...at]
    .sort((a, b) => a[0] - b[0])
    .map(([k, s]) => `${k}:${s.toFixed(0)}`)
    .join(' ')}; idle worker-seconds (of ${forks}): ${idle.toFixed(0)}`,
);
