/**
 * A TOML syntax error of config.toml names its line, column and table, with a hint that fixes the syntax
 * (not "fix the value"); `doctor` suggests editing that line, never a rewrite that discards the file. The
 * kernel's front doors (`tug`, `tugcode refactor`) word it the same (docs/kernel.md §3.1).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/config.js';
import { TugError } from '../../src/contract/errors.js';
import { configTemplate } from '../../src/project/templates.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { git, tempRepo, writeFiles } from '../helpers/repo.js';

const FILE = '.tugtool/config.toml';

async function refusal(text: string): Promise<TugError> {
  const e = await parseConfigText(text, FILE).then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(TugError);
  expect((e as TugError).code).toBe('ConfigInvalid');
  return e as TugError;
}

/** The line `[run]` is on in `text` (1-based). */
const lineOf = (text: string, l: string) => text.split('\n').indexOf(l) + 1;

describe('config.toml syntax errors', () => {
  it('a second [run] appended to the init template names both lines and says to merge them', async () => {
    const template = configTemplate();
    const text = `${template}[run]\nnotify = "notify-send tugcode"\n`;
    const first = lineOf(template, '[run]');
    const second = template.split('\n').length;
    expect(first).toBeGreaterThan(0);
    const e = await refusal(text);
    expect(e.message).toBe(
      `${FILE}: malformed TOML at line ${second}, column ${e.details.column}: [run] is defined twice (lines ${first} and ${second})`,
    );
    expect(e.details).toMatchObject({ source: FILE, line: second, table: 'run' });
    expect(typeof e.details.column).toBe('number');
    expect(e.hint).toContain(`into the [run] table at line ${first}`);
    expect(e.hint).not.toMatch(/fix the value|delete the key/);
  });

  it('a key set twice names the key and both lines', async () => {
    const e = await refusal('[state]\nmax_attempts = 2\n\n[run]\nworkers = 2\n# more\nworkers = 3\n');
    expect(e.message).toBe(`${FILE}: malformed TOML at line 7, column 1: run.workers is set twice (lines 5 and 7)`);
    expect(e.details).toMatchObject({ line: 7, column: 1, table: 'run' });
    expect(e.hint).toBe(`keep one of the two run.workers lines (5 and 7) of ${FILE}`);
  });

  it('any other syntax error names the line, column and table, and says to fix the syntax there', async () => {
    const e = await refusal('[state]\nmax_attempts = 2\n[run]\nworkers = \n');
    expect(e.message).toMatch(new RegExp(`^${FILE}: malformed TOML at line 4, column \\d+ \\(in \\[run\\]\\): `));
    expect(e.details).toMatchObject({ line: 4, table: 'run' });
    expect(e.hint).toMatch(new RegExp(`^fix the TOML syntax at line 4, column \\d+ of ${FILE}$`));
    // Before any table: no table named.
    const top = await refusal('x = "open\n');
    expect(top.message).toMatch(/^\.tugtool\/config\.toml: malformed TOML at line 1, column \d+: /);
    expect(top.details.table).toBeUndefined();
  });

  it('doctor suggests editing the line, and no rewrite that discards the file', () => {
    const root = tempRepo();
    expect(runCli(['init'], { cwd: root }).code).toBe(0);
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'init');
    const template = configTemplate();
    writeFiles(root, { [FILE]: `${template}[run]\nnotify = "x"\n` });
    const r = runCli(['doctor', '--json'], { cwd: root });
    expect(r.json.error.code).toBe('DoctorFailed');
    const check = r.json.error.details.checks.find((c: { name: string }) => c.name === 'config');
    expect(check.status).toBe('fail');
    expect(check.message).toContain('[run] is defined twice');
    expect(check.fix).toMatch(new RegExp(`^a table is written once: .* at line ${lineOf(template, '[run]')}`));
    expect(check.fix).not.toContain('--force');
    expect(check.fix).toContain(`mv ${FILE} ${FILE}.bak`);
  });
});

describe('the kernel reads config.toml and pyproject.toml with the same located errors', () => {
  const TUG = join(ROOT, 'bin', 'tug.js');
  const tug = (cwd: string, args: string[]) => {
    const r = spawnSync(process.execPath, [TUG, ...args], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    return { code: r.status, json: JSON.parse(r.stdout || 'null'), stderr: r.stderr };
  };

  it('tug and tugcode refactor name the line, column and table, in the words of tugcode itself', () => {
    const root = tempRepo({ 'a.py': 'x = 1\n' });
    writeFiles(root, { [FILE]: '[kernel]\nverify = "none"\ntest_timeout = = 5\n' });
    const path = join(root, FILE);
    const own = runCli(['status', '--json'], { cwd: root }).json.error;
    expect(own.details).toMatchObject({ line: 3, table: 'kernel' });
    const want = {
      code: 'ConfigInvalid',
      message: `${path}: ${own.details.reason}`,
      details: { path, key: null, reason: own.details.reason, line: 3, column: own.details.column, table: 'kernel' },
    };
    expect(own.details.reason).toMatch(/^malformed TOML at line 3, column \d+ \(in \[kernel\]\): /);
    const k = tug(root, ['snapshot', '--json']);
    expect([k.code, k.json.error]).toEqual([2, want]);
    expect(k.stderr).toBe(`tug: ConfigInvalid: ${want.message}\n`);
    const r = runCli(['refactor', 'snapshot', '--json'], { cwd: root });
    expect([r.code, r.json.error]).toEqual([2, want]);
  });

  it('a [kernel] written twice names both lines; a pyproject.toml mistake names its [tool.tug]', () => {
    const root = tempRepo({ 'a.py': 'x = 1\n' });
    writeFiles(root, { [FILE]: '[kernel]\nverify = "none"\n\n[kernel]\nmax_edits = 3\n' });
    const twice = tug(root, ['snapshot', '--json']).json.error;
    expect(twice.details.reason).toMatch(
      /^malformed TOML at line 4, column \d+: \[kernel\] is defined twice \(lines 1 and 4\)$/,
    );
    const py = tempRepo({ 'a.py': 'x = 1\n', 'pyproject.toml': '[project]\nname = "a"\n\n[tool.tug]\nverify = \n' });
    const e = tug(py, ['snapshot', '--json']).json.error;
    expect(e.details).toMatchObject({ path: join(py, 'pyproject.toml'), line: 5, table: 'tool.tug' });
    expect(e.message).toMatch(/pyproject\.toml: malformed TOML at line 5, column \d+ \(in \[tool\.tug\]\): /);
  });
});
