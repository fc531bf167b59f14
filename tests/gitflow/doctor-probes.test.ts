/**
 * `tugcode doctor` runs each kernel backend probe once per call, however many plans the repository has
 * (docs/git.md §7, docs/kernel.md §4.5): counted by logging wrappers on PATH in front of the tools, no timing.
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
});
