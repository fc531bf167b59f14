#!/usr/bin/env node
// Regenerates docs/AGENT_API.md from the contract (src/contract/agent-api.ts, built to dist/).
// tests/docs/agent-api.test.ts fails when the committed file differs. Run `npm run docs` (builds first).
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { renderAgentApi } = await import(join(root, 'dist', 'contract', 'agent-api.js'));
const text = renderAgentApi();
writeFileSync(join(root, 'docs', 'AGENT_API.md'), text);
console.log(`docs/AGENT_API.md: ${text.split('\n').length} lines`);
