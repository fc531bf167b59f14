/**
 * The real agent CLIs for tests/agents-real (docs/run.md §2.1): Claude Code and codex at pinned versions,
 * installed from npm with `npm install --prefix` into a cache directory of the suite's own (never the
 * project's dependencies), once per machine and reused. Concurrency-safe across vitest workers and parallel
 * runs: one installer holds a lock directory, the others wait for its `complete` marker.
 *
 * No registry: the tests skip with the reason — except under `CI=true`, where that is a failure.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const AGENT_CLI_VERSIONS = { claude: '2.1.197', codex: '0.171.0' } as const;
const PACKAGES = [
  `@anthropic-ai/claude-code@${AGENT_CLI_VERSIONS.claude}`,
  `@openai/codex@${AGENT_CLI_VERSIONS.codex}`,
];

/** `~/.cache/tugcode-test-agents/claude-<v>+codex-<v>` (TUGCODE_AGENT_CLI_CACHE overrides the parent). */
export function agentCliDir(): string {
  const parent = process.env.TUGCODE_AGENT_CLI_CACHE || join(homedir(), '.cache', 'tugcode-test-agents');
  return join(parent, `claude-${AGENT_CLI_VERSIONS.claude}+codex-${AGENT_CLI_VERSIONS.codex}`);
}

export type AgentClis = { ok: true; bin: string } | { ok: false; reason: string };

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** The versions the installed binaries report, or a reason they do not run. */
function check(bin: string): string | null {
  const env = { ...process.env, DISABLE_AUTOUPDATER: '1', HOME: join(bin, '..', '..', 'home') };
  mkdirSync(env.HOME, { recursive: true });
  for (const [name, v] of Object.entries(AGENT_CLI_VERSIONS)) {
    const r = spawnSync(join(bin, name), ['--version'], { encoding: 'utf8', env, timeout: 60_000 });
    if (r.status !== 0 || !r.stdout.includes(v))
      return `${name} --version: exit ${r.status}: ${(r.stdout + r.stderr).trim().slice(0, 400)}`;
  }
  return null;
}

/** Installs the pinned CLIs once (or waits for the process installing them); the `.bin` directory. */
export function ensureAgentClis(): AgentClis {
  const dir = agentCliDir();
  const bin = join(dir, 'node_modules', '.bin');
  const marker = join(dir, 'complete');
  const lock = `${dir}.lock`;
  mkdirSync(join(dir, '..'), { recursive: true });
  const deadline = Date.now() + 10 * 60_000;
  while (!existsSync(marker)) {
    try {
      mkdirSync(lock);
    } catch {
      // Another worker installs; a lock older than 10 minutes was left by a killed installer.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 10 * 60_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        /* gone meanwhile */
      }
      if (Date.now() > deadline) return fail(`timed out waiting for ${lock}`);
      sleep(500);
      continue;
    }
    try {
      if (existsSync(marker)) break;
      const work = `${dir}.partial-${process.pid}`;
      rmSync(work, { recursive: true, force: true });
      mkdirSync(work, { recursive: true });
      // The claude package's postinstall links its platform binary into place: scripts must run.
      const r = spawnSync(
        'npm',
        ['install', '--prefix', work, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', ...PACKAGES],
        { encoding: 'utf8', timeout: 8 * 60_000, env: registryEnv() },
      );
      if (r.status !== 0) {
        rmSync(work, { recursive: true, force: true });
        return fail(
          `npm install ${PACKAGES.join(' ')} failed (registry unreachable?): ${(r.stderr || r.error?.message || '').trim().slice(-600)}`,
        );
      }
      const bad = check(join(work, 'node_modules', '.bin'));
      if (bad) {
        rmSync(work, { recursive: true, force: true });
        return fail(bad);
      }
      rmSync(dir, { recursive: true, force: true });
      renameSync(work, dir);
      writeFileSync(marker, JSON.stringify({ packages: PACKAGES, at: new Date().toISOString() }) + '\n');
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return { ok: true, bin };
}

/** The environment for npm's registry calls: the machine's extra CA bundle, which tests/helpers/suite-env.ts takes out of the tests' processes. */
function registryEnv(): NodeJS.ProcessEnv {
  const ca = process.env.TUGCODE_TEST_EXTRA_CA_CERTS;
  return ca === undefined ? process.env : { ...process.env, NODE_EXTRA_CA_CERTS: ca };
}

function fail(reason: string): AgentClis {
  if (process.env.CI === 'true')
    throw new Error(`the real agent CLIs are required under CI=true and could not be installed: ${reason}`);
  return { ok: false, reason };
}
