/**
 * `tugcode doctor` runs each kernel backend probe once per call, however many plans the repository has
 * (docs/git.md §7, docs/kernel.md §4.5), and the independent probes side by side: counted and ordered by
 * logging wrappers on PATH in front of the tools, no timing.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { initializedRepo } from '../helpers/plan.js';
import { PLAN } from './helpers.js';

/** The first `name` on PATH that is not in `skip`. */
function onPath(name: string, skip: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir || dir === skip) continue;
    if (existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

describe('doctor runs each kernel probe once', () => {
  it('starts python, rust-analyzer and cargo once each, with three plans', () => {
    const root = initializedRepo(PLAN, 'demo', {
      '.tugtool/tugplan-two.md': PLAN,
      '.tugtool/tugplan-three.md': PLAN,
    });
    const bin = tempDir('tugcode-doctor-bin-');
    const log = join(bin, 'calls.log');
    const wrapper = (name: string, then: string) => {
      const p = join(bin, name);
      writeFileSync(p, `#!/bin/sh\nprintf '%s\\n' "${name} $*" >> '${log}'\n${then}\n`);
      chmodSync(p, 0o755);
    };
    const python = onPath('python3', bin);
    // The real interpreter when there is one (pyright runs it too); the tools the kernel only asks for a
    // version answer one (a rustup proxy without the component would re-run itself through PATH).
    wrapper('python3', python ? `exec '${python}' "$@"` : 'exit 127');
    wrapper('rust-analyzer', 'echo "rust-analyzer 1.0.0 (fake)"');
    wrapper('cargo', 'echo "cargo 1.0.0 (fake)"');
    const r = runCli(['doctor', '--json'], {
      cwd: root,
      env: { PATH: `${bin}${delimiter}${process.env.PATH}`, VIRTUAL_ENV: undefined, CONDA_PREFIX: undefined },
    });
    const kernel = (r.json?.checks ?? []).find((c: { name: string }) => c.name === 'kernel-backends');
    expect(kernel, r.stdout + r.stderr).toBeDefined();
    const calls = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [];
    const count = (re: RegExp) => calls.filter((c) => re.test(c)).length;
    expect(count(/^python3 -c import sys;print\(sys\.version/)).toBe(python ? 1 : 0);
    expect(count(/^rust-analyzer --version$/)).toBe(1);
    expect(count(/^cargo --version$/)).toBe(1);
    expect(count(/^rust-analyzer|^cargo/)).toBe(2);
  }, 120_000);

  it('starts the rust-analyzer, cargo and git probes while the python probe is still running', () => {
    const root = initializedRepo(PLAN, 'demo');
    const bin = tempDir('tugcode-doctor-bin-');
    const log = join(bin, 'calls.log');
    const wrapper = (name: string, body: string) => {
      const p = join(bin, name);
      writeFileSync(p, `#!/bin/sh\n${body}\n`);
      chmodSync(p, 0o755);
    };
    const say = (what: string) => `printf '%s\\n' "${what}" >> '${log}'`;
    const python = onPath('python3', bin);
    const git = onPath('git', bin)!;
    // The interpreter's version query (the python probe) holds until the other probes have started, so it
    // ends only after them when they run beside it and never does when they run after it: sequential probes
    // then give up the wait (polled, bounded well inside the probe's 10 s timeout) and the order below
    // fails. The kernel's git probe is the second `git --version`: doctor's own git-version check runs the
    // first before the kernel starts.
    wrapper(
      'python3',
      [
        'case "$2" in',
        "  'import sys;print(sys.version'*)",
        `    ${say('python3 version start')}`,
        '    i=0',
        '    while [ $i -lt 100 ]; do',
        `      n=$(grep -c -e '^rust-analyzer --version start$' -e '^cargo --version start$' '${log}')`,
        `      g=$(grep -c '^git --version start$' '${log}')`,
        '      [ "$n" -ge 2 ] && [ "$g" -ge 2 ] && break',
        '      sleep 0.05; i=$((i + 1))',
        '    done',
        python ? `    '${python}' "$@"; rc=$?` : "    echo '3.12.0'; rc=0",
        `    ${say('python3 version end')}`,
        '    exit $rc;;',
        'esac',
        python ? `exec '${python}' "$@"` : 'exit 127',
      ].join('\n'),
    );
    const fake = (name: string) =>
      wrapper(name, `${say(`${name} $* start`)}\necho "${name} 1.0.0 (fake)"\n${say(`${name} $* end`)}`);
    fake('rust-analyzer');
    fake('cargo');
    wrapper(
      'git',
      `case "$*" in --version) ${say('git --version start')};; esac\n'${git}' "$@"; rc=$?\n` +
        `case "$*" in --version) ${say('git --version end')};; esac\nexit $rc`,
    );
    writeFileSync(log, '');
    const r = runCli(['doctor', '--json'], {
      cwd: root,
      env: { PATH: `${bin}${delimiter}${process.env.PATH}`, VIRTUAL_ENV: undefined, CONDA_PREFIX: undefined },
    });
    const kernel = (r.json?.checks ?? []).find((c: { name: string }) => c.name === 'kernel-backends');
    expect(kernel, r.stdout + r.stderr).toBeDefined();
    const calls = readFileSync(log, 'utf8').trim().split('\n');
    const count = (line: string) => calls.filter((c) => c === line).length;
    // Each probe once: the interpreter's query, rust-analyzer, cargo; git twice in all, doctor's git-version
    // check and the kernel's git probe.
    expect(count('python3 version start'), calls.join('\n')).toBe(1);
    expect(count('rust-analyzer --version start')).toBe(1);
    expect(count('cargo --version start')).toBe(1);
    expect(count('git --version start')).toBe(2);
    const pyEnd = calls.indexOf('python3 version end');
    expect(pyEnd, calls.join('\n')).toBeGreaterThan(-1);
    const kernelGit = calls.indexOf('git --version start', calls.indexOf('git --version start') + 1);
    for (const started of [
      calls.indexOf('rust-analyzer --version start'),
      calls.indexOf('cargo --version start'),
      kernelGit,
    ]) {
      expect(started, calls.join('\n')).toBeGreaterThan(-1);
      expect(started, calls.join('\n')).toBeLessThan(pyEnd);
    }
  }, 120_000);
});
