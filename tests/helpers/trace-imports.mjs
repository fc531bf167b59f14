// Preloaded with `node --import`: records every module the ESM loader resolves, and every file `require`
// resolves (the CLI bundle is CommonJS), into the file named by TUGCODE_TRACE_IMPORTS, so tests can check
// that a command does not load modules it does not need.
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';
import { pathToFileURL } from 'node:url';

const file = process.env.TUGCODE_TRACE_IMPORTS;
register(new URL('./trace-imports-hooks.mjs', import.meta.url), { data: { file } });

if (file) {
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function (...args) {
    const r = resolveFilename.apply(this, args);
    if (typeof r === 'string' && r.startsWith('/')) appendFileSync(file, pathToFileURL(r).href + '\n');
    return r;
  };
}
