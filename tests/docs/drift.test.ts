/**
 * The prose cannot drift from the tool (docs/run.md §5, issue 13 item 7). Every `tugcode …` / `tug …`
 * command line in skills/, agents/, the plugin manifest, README.md and docs/*.md must name a real
 * (sub)command and use only flags that command accepts; every JSON field a skill or agent file names in
 * backticks must exist in the output of a command that file uses (zod schemas; the kernel's real output),
 * in the implementer brief, in the config, or in a JSON contract the agent files declare.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTPUT_SCHEMAS } from '../../src/contract/schemas/index.js';
import { runEventSchema } from '../../src/contract/schemas/run.js';
import { INPUT_TABLES } from '../../src/contract/inputs/index.js';
import { fieldRows, namesAndValues, objectVariants } from '../../src/contract/zod-fields.js';
import { CONFIG_KEYS } from '../../src/config/defaults.js';
import { parsePlan } from '../../src/plan/parse.js';
import { stepBrief } from '../../src/run/brief.js';
import { ROOT } from '../helpers/cli.js';
import { loadCliModel, type CliModel } from './cli-model.js';
import { checkCommand, codeOf, commandLines, type CodeText } from './extract.js';

function listFiles(): string[] {
  const out: string[] = ['README.md', '.claude-plugin/plugin.json'];
  for (const d of readdirSync(join(ROOT, 'skills'))) out.push(`skills/${d}/SKILL.md`);
  for (const f of readdirSync(join(ROOT, 'agents'))) out.push(`agents/${f}`);
  for (const f of readdirSync(join(ROOT, 'docs'))) if (f.endsWith('.md')) out.push(`docs/${f}`);
  return out.filter((f) => existsSync(join(ROOT, f))).sort();
}

const FIELD_FILES = (f: string) => f.startsWith('skills/') || (f.startsWith('agents/') && f.endsWith('.md'));

let model: CliModel;
let code: CodeText[];
let kernelDocs: unknown[] = [];
let tmp: string;

/** Real kernel output on a tiny workspace: the field names of analyze-impact, run and verify. */
function kernelOutputs(): unknown[] {
  tmp = mkdtempSync(join(tmpdir(), 'tug-drift-'));
  spawnSync('git', ['init', '-q'], { cwd: tmp });
  writeFileSync(
    join(tmp, 'a.ts'),
    'export function parseConfig(x: number) { return x; }\nexport const y = parseConfig(1);\n',
  );
  writeFileSync(join(tmp, 'tsconfig.json'), '{"compilerOptions":{"strict":true}}');
  const tug = (args: string[]) => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'tug.js'), ...args], { cwd: tmp, encoding: 'utf8' });
    return JSON.parse(r.stdout) as unknown;
  };
  const target = ['rename-symbol', '--at', 'a.ts:1:17', '--to', 'loadConfig'];
  return [
    tug(['analyze-impact', ...target]),
    tug(['run', '--verify', 'syntax', ...target]),
    tug(['verify', 'syntax']),
    tug(['analyze-impact', 'rename-symbol', '--at', 'a.ts:1:1', '--to', 'x']), // an error envelope
  ];
}

beforeAll(() => {
  model = loadCliModel();
  code = listFiles().flatMap((f) => codeOf(join(ROOT, f), f));
  kernelDocs = kernelOutputs();
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

function resolveAll(c: CodeText) {
  return commandLines(c).map((line) => checkCommand(line, model));
}

describe('command lines in the prose', () => {
  it('finds command lines in every front-door file', () => {
    const files = new Set(code.filter((c) => commandLines(c).length > 0).map((c) => c.file));
    for (const f of [
      'skills/implement/SKILL.md',
      'skills/rename/SKILL.md',
      'skills/plan/SKILL.md',
      'agents/committer.md',
      'agents/implementer.sh',
      'README.md',
      '.claude-plugin/plugin.json',
      'docs/AGENT_API.md',
    ])
      expect(files, f).toContain(f);
  });

  it('names only real commands and flags each command accepts', () => {
    const problems = code.flatMap((c) => resolveAll(c).flatMap((r) => r.problems.map((p) => `${c.file}: ${p}`)));
    expect(problems).toEqual([]);
  });

  it('catches a wrong command, a wrong subcommand and a wrong flag (the checker itself)', () => {
    const check = (s: string) => checkCommand(s.split(' '), model).problems.length;
    expect(check('tugcode state claim hello --worktree . --json')).toBe(0);
    expect(check('tugcode state start|heartbeat|release <plan> <step> --worktree W [--attempt N]')).toBe(0);
    expect(check('tugcode state clam hello')).toBe(1);
    expect(check('tugcode commit --plan x --step s --messages m')).toBe(1);
    expect(check('tugcode state heartbeat x s --worktree W --lease 5')).toBe(1);
    expect(check('tugcode frobnicate')).toBe(1);
    expect(check('tug run --apply --verify syntax rename-symbol --at a.ts:1:1 --to b')).toBe(0);
    expect(check('tug run --aply rename-symbol --at a.ts:1:1 --to b')).toBe(1);
    expect(check('tug rename --at a.ts:1:1')).toBe(1);
    expect(check('tugcode refactor run-step p s --worktree W --attempt 2')).toBe(0);
    expect(check('tugcode refactor skip p s --worktree W --retry-failed')).toBe(1);
  });
});

/** Every key path (arrays transparent) of a JSON value. */
function jsonPaths(v: unknown, prefix = '', out = new Set<string>()): Set<string> {
  if (Array.isArray(v)) v.forEach((x) => jsonPaths(x, prefix, out));
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      const p = prefix ? `${prefix}.${k}` : k;
      out.add(p);
      jsonPaths(x, p, out);
    }
  return out;
}

function schemaPaths(s: Parameters<typeof fieldRows>[0]): Set<string> {
  return new Set(objectVariants(s).flatMap((v) => fieldRows(v).map((r) => r.path.replace(/\[\]|\{\}/g, ''))));
}

const FILE_EXT = /\.(db|md|json|toml|sh|ts|js|mjs|cjs|lock|yaml|txt)$/;

describe('JSON field names in skills and agents', () => {
  it('exist in the output of a command the file uses, the brief, the config or a declared contract', () => {
    // Declared JSON contracts: the agent files' ```json blocks (inputs and outputs of the agents).
    const contractPaths = new Set<string>();
    for (const c of code)
      if (c.file.startsWith('agents/') && c.lang === 'json')
        for (const p of jsonPaths(JSON.parse(c.text))) contractPaths.add(p);
    const plan = parsePlan(readFileSync(join(ROOT, 'demo', ...findDemoPlan())));
    const brief = stepBrief(plan, plan.steps[0]!.anchor, { plan_path: '.tugtool/x.md', attempt: 1 });
    const briefPaths = jsonPaths({ ...brief, items: [{ kind: 'task', ordinal: 0, text: '', status: 'open' }] });
    const config = Object.entries(CONFIG_KEYS).flatMap(([t, keys]) => keys.flatMap((k) => [k, `${t}.${k}`]));
    const envelope = [
      'status',
      'schema_version',
      'command',
      'warnings',
      'error',
      'error.code',
      'error.message',
      'error.details',
      'error.hint',
    ];
    const kernelPaths = new Set<string>();
    for (const d of kernelDocs) for (const p of jsonPaths(d)) kernelPaths.add(p);

    const problems: string[] = [];
    const files = [...new Set(code.map((c) => c.file))].filter(FIELD_FILES);
    for (const file of files) {
      const texts = code.filter((c) => c.file === file);
      const used = new Set(texts.flatMap((c) => resolveAll(c).flatMap((r) => r.commands)));
      const paths = new Set<string>([...contractPaths, ...briefPaths, ...config, ...envelope]);
      const values = new Set<string>();
      for (const cmd of used) {
        if (cmd.startsWith('tug ')) for (const p of kernelPaths) paths.add(p);
        const s = OUTPUT_SCHEMAS[cmd];
        const schemas = s ? [s] : [];
        if (cmd === 'run') schemas.push(runEventSchema);
        for (const sc of schemas) {
          for (const p of schemaPaths(sc)) paths.add(p);
          for (const v of namesAndValues(sc).values) values.add(v);
        }
        for (const f of Object.keys(INPUT_TABLES[cmd]?.fields ?? {})) paths.add(f);
      }
      const known = (p: string) => [...paths].some((k) => k === p || k.endsWith('.' + p));
      for (const c of texts) {
        if (!c.inline) continue;
        const t = c.text.trim();
        let name: string | undefined;
        if (/^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/.test(t)) name = t;
        else if (/^([a-z][a-z0-9_]*): \S/.test(t)) name = t.split(':')[0];
        else if (/^[a-z_]+(?:\[\])?(?:\.[a-z_]+(?:\[\])?)+$/.test(t) && !FILE_EXT.test(t))
          name = t.replace(/\[\]/g, '');
        if (name === undefined) continue;
        if (!known(name) && !values.has(name))
          problems.push(`${file}: \`${t}\` is no field of ${[...used].join(', ') || 'any command it uses'}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

function findDemoPlan(): string[] {
  const walk = (dir: string, rel: string[]): string[] | undefined => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) {
        const r = walk(join(dir, e.name), [...rel, e.name]);
        if (r) return r;
      } else if (/^tugplan-.*\.md$/.test(e.name)) return [...rel, e.name];
    }
    return undefined;
  };
  const r = walk(join(ROOT, 'demo'), []);
  if (!r) throw new Error('no plan under demo/');
  return r;
}
