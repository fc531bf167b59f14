// Preloaded with `node --import`: records every module the ESM loader resolves into the file named by
// TUGCODE_TRACE_IMPORTS, so tests can check that a command does not load modules it does not need.
import { register } from 'node:module';

register(new URL('./trace-imports-hooks.mjs', import.meta.url), { data: { file: process.env.TUGCODE_TRACE_IMPORTS } });
