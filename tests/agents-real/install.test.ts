/**
 * The installer of the real agent CLIs (tests/helpers/agent-clis.ts): with the registry unreachable the
 * real-agent tests are skipped with the reason, and under CI=true that is an error instead.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureAgentClis } from '../helpers/agent-clis.js';
import { tempDir } from '../helpers/repo.js';

const saved = { ...process.env };
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
});

describe('ensureAgentClis without a registry', () => {
  it('gives the reason to skip; under CI=true it throws', () => {
    const cache = tempDir('tugcode-clis-');
    Object.assign(process.env, {
      TUGCODE_AGENT_CLI_CACHE: cache,
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_fetch_retries: '0',
      npm_config_cache: join(cache, 'npm-cache'),
    });
    delete process.env.CI;
    const r = ensureAgentClis();
    expect(r).toEqual({
      ok: false,
      reason: expect.stringMatching(
        /^npm install @anthropic-ai\/claude-code@2\.1\.197 @openai\/codex@0\.171\.0 failed/,
      ),
    });
    process.env.CI = 'true';
    expect(() => ensureAgentClis()).toThrow(/required under CI=true/);
  });
});
