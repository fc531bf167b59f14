// Transpiles src/ and tests/ with the TypeScript compiler named by TS_LIB_TYPESCRIPT (or a local one) and
// runs every tests/*.check.ts module. A test module exports `tests`: an object of name → function.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const ts = require(process.env.TS_LIB_TYPESCRIPT ?? 'typescript');
const out = mkdtempSync(join(tmpdir(), 'ts-lib-test-'));
writeFileSync(join(out, 'package.json'), '{"type":"module"}');
const walk = (d) => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
for (const f of [...walk(join(root, 'src')), ...walk(join(root, 'tests'))]) {
  if (!/\.tsx?$/.test(f)) continue;
  const js = ts.transpileModule(readFileSync(f, 'utf8'), {
    fileName: f,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, jsx: ts.JsxEmit.React, jsxFactory: 'h' },
  }).outputText;
  const dest = join(out, relative(root, f)).replace(/\.tsx?$/, '.js');
  mkdirSync(dirname(dest), { recursive: true });
  const spec = (p) => (existsSync(join(dirname(f), p)) && statSync(join(dirname(f), p)).isDirectory() ? `${p}/index.js` : `${p}.js`);
  writeFileSync(dest, js.replace(/from '(\.[^']+)'/g, (m, p) => (p.endsWith('.js') ? m : `from '${spec(p)}'`)));
}
let failed = 0;
let passed = 0;
for (const f of readdirSync(join(out, 'tests')).filter((n) => n.endsWith('.check.js')).sort()) {
  const mod = await import(pathToFileURL(join(out, 'tests', f)).href);
  for (const [name, fn] of Object.entries(mod.tests)) {
    try {
      await fn();
      passed++;
    } catch (e) {
      failed++;
      console.log(`FAILED ${f} ${name}: ${e instanceof Error ? e.message : e}`);
    }
  }
}
rmSync(out, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
