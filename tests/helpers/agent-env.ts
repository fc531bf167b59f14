/**
 * The environment a real agent CLI runs in under the tests: its pinned binary first on PATH, a scratch
 * HOME (and CODEX_HOME with a model provider pointing at the scripted server), no telemetry, no updater,
 * and retry counts low so an error reply fails fast.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './repo.js';
import type { Agent } from './model-server.js';

export interface AgentEnv {
  env: Record<string, string>;
  home: string;
}

export function agentEnv(agent: Agent, bin: string, serverUrl: string): AgentEnv {
  // codex warns that it will not create its helper links under a CODEX_HOME in the temp dir: harmless.
  const home = tempDir(`tugcode-${agent}-home-`);
  const env: Record<string, string> = {
    HOME: home,
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
  };
  if (agent === 'claude') {
    mkdirSync(join(home, '.claude'), { recursive: true });
    Object.assign(env, {
      ANTHROPIC_BASE_URL: serverUrl,
      ANTHROPIC_API_KEY: 'test-key',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      CLAUDE_CODE_MAX_RETRIES: '0',
    });
  } else {
    const codexHome = join(home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        'model = "test-model"',
        'model_provider = "scripted"',
        '',
        '[model_providers.scripted]',
        'name = "scripted"',
        `base_url = "${serverUrl}/v1"`,
        'env_key = "TUG_TEST_MODEL_KEY"',
        'wire_api = "responses"',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        'stream_idle_timeout_ms = 300000',
        '',
      ].join('\n'),
    );
    Object.assign(env, { CODEX_HOME: codexHome, TUG_TEST_MODEL_KEY: 'test-key' });
  }
  return { env, home };
}
