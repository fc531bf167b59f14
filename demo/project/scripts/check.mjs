#!/usr/bin/env node
// The demo plan's checkpoint: `node scripts/check.mjs <step-anchor>`. Needs nothing but Node: it reads the
// sources instead of compiling them. Always: every relative import in src/ names a file that exists and
// names exported from it. Then what the step promised (the table below). Exit 0 when all hold, else 1
// with one line per problem.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const root = process.cwd();

/** What each step leaves behind: exports per file, names gone from src/, sections of README.md. */
const EXPECT = {
  'step-1': { exports: { 'src/price.ts': ['price', 'Price'] } },
  'step-2': { exports: { 'src/cart.ts': ['cartTotal', 'CartLine'] } },
  'step-3': { exports: { 'src/format.ts': ['formatCents'] } },
  'step-4-1': { exports: { 'src/header.ts': ['receiptHeader'] } },
  'step-4': { exports: { 'src/receipt.ts': ['printReceipt'], 'src/header.ts': ['receiptHeader'] } },
  'step-5': {
    exports: { 'src/format.ts': ['formatPrice'] },
    gone: ['formatCents'],
    uses: { 'src/receipt.ts': ['formatPrice'] },
  },
  'step-6': { exports: { 'src/main.ts': ['receipt', 'cheapest'] } },
  'step-7': { readme: ['## Receipts'] },
};

function sources(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

function exportsOf(text) {
  const names = new Set();
  const decl =
    /export\s+(?:declare\s+)?(?:async\s+)?(?:function\*?|const|let|var|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/g;
  for (const m of text.matchAll(decl)) names.add(m[1]);
  for (const m of text.matchAll(/export\s*(?:type\s*)?\{([^}]*)\}/g))
    for (const part of m[1].split(','))
      if (part.trim())
        names.add(
          part
            .trim()
            .replace(/^type\s+/, '')
            .split(/\s+as\s+/)
            .pop()
            .trim(),
        );
  return names;
}

function resolveModule(fromFile, spec) {
  const base = join(dirname(fromFile), spec);
  const candidates = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')];
  if (/\.js$/.test(spec)) candidates.unshift(base.replace(/\.js$/, '.ts'));
  return candidates.find((c) => /\.tsx?$/.test(c) && existsSync(c) && statSync(c).isFile());
}

const problems = [];
const rel = (p) => relative(root, p).split('\\').join('/');
const files = sources(join(root, 'src'));
const text = new Map(files.map((f) => [f, readFileSync(f, 'utf8')]));
let imports = 0;
for (const [file, src] of text) {
  for (const m of src.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s*from\s*['"](\.[^'"]+)['"]/g)) {
    imports++;
    const target = resolveModule(file, m[3]);
    if (!target) {
      problems.push(`${rel(file)} imports '${m[3]}', which does not exist`);
      continue;
    }
    const exported = exportsOf(readFileSync(target, 'utf8'));
    for (const part of m[2].split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)[0]
        .trim();
      if (name && !exported.has(name))
        problems.push(`${rel(file)} imports ${name} from '${m[3]}', which does not export it`);
    }
  }
}

const step = process.argv[2];
const expect = step === undefined ? {} : EXPECT[step];
if (expect === undefined) {
  console.error(`check: unknown step ${step} (known: ${Object.keys(EXPECT).join(', ')})`);
  process.exit(2);
}
for (const [file, names] of Object.entries(expect.exports ?? {})) {
  const abs = join(root, file);
  if (!existsSync(abs)) {
    problems.push(`${file} is missing`);
    continue;
  }
  const exported = exportsOf(readFileSync(abs, 'utf8'));
  for (const n of names) if (!exported.has(n)) problems.push(`${file} does not export ${n}`);
}
for (const name of expect.gone ?? [])
  for (const [file, src] of text)
    if (new RegExp(`\\b${name}\\b`).test(src)) problems.push(`${rel(file)} still mentions ${name}`);
for (const [file, names] of Object.entries(expect.uses ?? {})) {
  const src = existsSync(join(root, file)) ? readFileSync(join(root, file), 'utf8') : null;
  if (src === null) problems.push(`${file} is missing`);
  else for (const n of names) if (!new RegExp(`\\b${n}\\b`).test(src)) problems.push(`${file} does not use ${n}`);
}
if (expect.readme) {
  const readme = existsSync(join(root, 'README.md')) ? readFileSync(join(root, 'README.md'), 'utf8') : '';
  for (const heading of expect.readme)
    if (!readme.split('\n').includes(heading)) problems.push(`README.md has no "${heading}"`);
  // Every `name()` the README mentions must be exported by some source file.
  const all = new Set([...text.values()].flatMap((src) => [...exportsOf(src)]));
  for (const m of readme.matchAll(/`([A-Za-z_$][\w$]*)\(\)`/g))
    if (!all.has(m[1])) problems.push(`README.md mentions ${m[1]}(), which no file in src/ exports`);
}

const label = step ?? 'imports';
if (problems.length > 0) {
  console.log(`check ${label}: FAILED`);
  for (const p of problems) console.log(`  - ${p}`);
  process.exit(1);
}
console.log(`check ${label}: ok (${files.length} files, ${imports} imports)`);
