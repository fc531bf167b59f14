/**
 * Files no tsconfig includes (docs/kernel.md §6.2, §11.2): a TypeScript rename finds the workspace files
 * outside the tsconfig `include` that import the renamed module (an ES import in a script, a `require`
 * destructuring in a loose JavaScript file) and renames them in the same atomic patch, and `--verify
 * typecheck` type-checks them too. Runs the built `tug` as a user would.
 */
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/cli.js';
import { kernelEnv, readTree, tempWs } from './helpers.js';

const TUG = join(ROOT, 'bin', 'tug.js');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

function tug(argv: string[], cwd: string) {
  const r = spawnSync(process.execPath, [TUG, ...argv], { cwd, encoding: 'utf8', env: kernelEnv() });
  return { code: r.status, json: JSON.parse(r.stdout), stderr: r.stderr };
}

/** The user's repro: tsconfig includes only src/, a script and a loose CommonJS file import src/util. */
const REPRO = {
  'tsconfig.json': '{"include":["src"]}\n',
  'src/util.ts': 'export function loadConfig(path: string): string {\n  return path;\n}\n',
  'src/main.ts': 'import { loadConfig } from "./util";\nconsole.log(loadConfig("x"));\n',
  'scripts/tool.ts': 'import { loadConfig } from "../src/util";\nconsole.log(loadConfig("y"));\n',
  'legacy.js': 'const { loadConfig } = require("./src/util");\nmodule.exports = loadConfig;\n',
};

const RENAME = ['rename-symbol', '--symbol', 'src/util.ts::loadConfig', '--to', 'readCfg'];

describe('a TypeScript rename reaches the files no tsconfig includes', () => {
  it('renames scripts/tool.ts and legacy.js with src/, and tsc passes on the script afterwards', () => {
    const ws = tempWs(REPRO);
    const r = tug(['run', '--apply', '--verify', 'typecheck', ...RENAME], ws);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.applied).toBe(true);
    expect(r.json.files_written).toEqual(['legacy.js', 'scripts/tool.ts', 'src/main.ts', 'src/util.ts']);
    const tree = readTree(ws);
    expect(tree['scripts/tool.ts']).toBe('import { readCfg } from "../src/util";\nconsole.log(readCfg("y"));\n');
    expect(tree['legacy.js']).toBe('const { readCfg } = require("./src/util");\nmodule.exports = readCfg;\n');
    expect(tree['src/main.ts']).toBe('import { readCfg } from "./util";\nconsole.log(readCfg("x"));\n');
    // The typecheck covered the files outside the include: one tsc check, the loose files named.
    const tsc = r.json.verification.checks.find((c: any) => c.name === 'tsc');
    expect(tsc.status).toBe('passed');
    expect(tsc.command).toEqual(expect.arrayContaining(['-p', 'tsconfig.json', 'legacy.js', 'scripts/tool.ts']));
    // What the user ran after the probe's apply: tsc on the script.
    const check = spawnSync(
      process.execPath,
      [TSC, '--noEmit', '--moduleResolution', 'bundler', '--module', 'esnext', 'scripts/tool.ts'],
      { cwd: ws, encoding: 'utf8' },
    );
    expect(check.status, check.stdout).toBe(0);
  });

  it('fails --verify typecheck on a new type error in a file outside the include, writing nothing', () => {
    // The new name collides with a local of the script: only a typecheck that covers the script sees it.
    const ws = tempWs({ ...REPRO, 'scripts/tool.ts': REPRO['scripts/tool.ts'] + 'const readCfg = 1;\n' });
    const before = readTree(ws, ['.git', '.tug']);
    const r = tug(['run', '--apply', '--verify', 'typecheck', ...RENAME], ws);
    expect([r.code, r.json.error.code]).toEqual([5, 'TypecheckFailed']);
    expect(r.json.error.details.errors.map((e: any) => e.file)).toContain('scripts/tool.ts');
    expect(readTree(ws, ['.git', '.tug'])).toEqual(before);
    expect(readFileSync(join(ws, 'legacy.js'), 'utf8')).toContain('loadConfig');
  });

  it('renames a `require` destructuring in a JavaScript file the tsconfig does include (allowJs)', () => {
    // The same CommonJS binding inside the project: TypeScript's search from the export misses it there too,
    // and left alone the file would call a function that no longer exists (docs/kernel.md §6.2).
    const ws = tempWs({
      ...REPRO,
      'tsconfig.json': '{"compilerOptions":{"allowJs":true},"include":["src"]}\n',
      'src/legacy.js': 'const { loadConfig } = require("./util");\nmodule.exports = () => loadConfig("z");\n',
    });
    const r = tug(['run', '--verify', 'none', ...RENAME], ws);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.patch.unified_diff).toContain('+const { readCfg } = require("./util");');
    expect(r.json.patch.unified_diff).toContain('+module.exports = () => readCfg("z");');
  });
});
