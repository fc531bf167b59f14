import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { CONFIG_DEFAULTS } from '../../src/config/defaults.js';
import { loadConfig, parseConfigText } from '../../src/config/config.js';
import { WarningSink } from '../../src/contract/envelope.js';
import { TugError } from '../../src/contract/errors.js';
import { configTemplate } from '../../src/project/templates.js';
import { tempDir, writeFiles } from '../helpers/repo.js';

async function configError(p: Promise<unknown>): Promise<TugError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(TugError);
    return e as TugError;
  }
  throw new Error('expected ConfigInvalid');
}

describe('config', () => {
  it('keeps the plain-data defaults equal to the zod schema defaults', () => {
    expect(configSchema.parse({})).toEqual(CONFIG_DEFAULTS);
  });

  it('uses the defaults when there is no config.toml', async () => {
    expect(await loadConfig(tempDir(), {})).toEqual(CONFIG_DEFAULTS);
  });

  it('reads values from .tugtool/config.toml', async () => {
    const root = tempDir();
    writeFiles(root, {
      '.tugtool/config.toml': '[state]\nlease_seconds = 120\n[kernel]\ntest_command = ["npm", "test"]\n',
    });
    const c = await loadConfig(root, {});
    expect(c.state.lease_seconds).toBe(120);
    expect(c.state.max_attempts).toBe(3);
    expect(c.kernel.test_command).toEqual(['npm', 'test']);
  });

  it('reads [run] agent_allow, a list of command patterns an agent may run (docs/agents.md §1.3)', async () => {
    const root = tempDir();
    writeFiles(root, { '.tugtool/config.toml': '[run]\nagent_allow = ["npm test *", "make check"]\n' });
    expect((await loadConfig(root, {})).run.agent_allow).toEqual(['npm test *', 'make check']);
    expect(CONFIG_DEFAULTS.run.agent_allow).toEqual([]);
    const e = await configError(parseConfigText('[run]\nagent_allow = "npm test"\n', '.tugtool/config.toml'));
    expect(e.details.key).toBe('run.agent_allow');
  });

  it('lets the environment override the file, TUGCODE_ names winning over TUG_ names', async () => {
    const root = tempDir();
    writeFiles(root, { '.tugtool/config.toml': '[state]\nlease_seconds = 60\n' });
    const c = await loadConfig(root, {
      TUGCODE_STATE_LEASE_SECONDS: '90',
      TUG_VERIFY: 'tests',
      TUGCODE_KERNEL_SAFETY: 'aggressive',
      TUG_SAFETY: 'strict',
    });
    expect(c.state.lease_seconds).toBe(90);
    expect(c.kernel.verify).toBe('tests');
    expect(c.kernel.safety).toBe('aggressive');
  });

  it('refuses malformed TOML with ConfigInvalid (exit 2)', async () => {
    const e = await configError(parseConfigText('[state\nlease_seconds = ', '.tugtool/config.toml'));
    expect(e.code).toBe('ConfigInvalid');
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain('malformed TOML');
  });

  it('refuses a value of the wrong type and names the key', async () => {
    const e = await configError(parseConfigText('[state]\nlease_seconds = "long"\n', '.tugtool/config.toml'));
    expect(e.code).toBe('ConfigInvalid');
    expect(e.details.key).toBe('state.lease_seconds');
  });

  it('refuses a malformed environment value', async () => {
    const e = await configError(loadConfig(tempDir(), { TUGCODE_STATE_LEASE_SECONDS: 'soon' }));
    expect(e.code).toBe('ConfigInvalid');
    expect(e.message).toContain('TUGCODE_STATE_LEASE_SECONDS');
  });

  it('bounds every numeric key the same from the file and the environment, naming the source that was wrong', async () => {
    const { MAX_LEASE_SECONDS } = await import('../../src/config/defaults.js');
    expect(MAX_LEASE_SECONDS).toBe(366 * 24 * 3600);
    const file = '.tugtool/config.toml';
    // The longest heartbeat needs a lease longer than it (a lease must outlive its heartbeat interval).
    const longLease = { toml: `[state]\nlease_seconds = ${MAX_LEASE_SECONDS}\n`, env: String(MAX_LEASE_SECONDS) };
    const cases: [string, string, number, typeof longLease?][] = [
      ['state', 'lease_seconds', MAX_LEASE_SECONDS],
      ['state', 'max_attempts', 1000],
      ['run', 'workers', 64],
      ['run', 'heartbeat_seconds', 86400, longLease],
      ['run', 'step_timeout_seconds', 7 * 86400],
    ];
    for (const [table, key, max, ctx] of cases) {
      const ok = await parseConfigText(`${ctx?.toml ?? ''}[${table}]\n${key} = ${max}\n`, file);
      expect((ok as any)[table][key]).toBe(max);
      for (const bad of [max + 1, 999999999999, 0]) {
        const e = await configError(parseConfigText(`${ctx?.toml ?? ''}[${table}]\n${key} = ${bad}\n`, file));
        expect([e.code, e.exitCode, e.details.source, e.details.key]).toEqual([
          'ConfigInvalid',
          2,
          file,
          `${table}.${key}`,
        ]);
        expect(e.message).toContain(`${file}: ${table}.${key}`);
      }
      const name = `TUGCODE_${table.toUpperCase()}_${key.toUpperCase()}`;
      const lease = ctx ? { TUGCODE_STATE_LEASE_SECONDS: ctx.env } : {};
      expect(((await loadConfig(tempDir(), { ...lease, [name]: String(max) })) as any)[table][key]).toBe(max);
      for (const bad of [String(max + 1), '999999999999', '99999999999999999999999', '0', '-5']) {
        const e = await configError(loadConfig(tempDir(), { ...lease, [name]: bad }));
        expect([e.code, e.details.source, e.details.key]).toEqual(['ConfigInvalid', name, `${table}.${key}`]);
        expect(e.message).toContain(name);
        expect(e.message).toContain(`from 1 to ${max}`);
      }
    }
  });

  it('bounds [run.prices] so a priced report stays within the ledger (docs/run.md §7.1), from the file and the environment', async () => {
    const { USAGE_MAX_PRICE } = await import('../../src/contract/usage.js');
    expect(USAGE_MAX_PRICE).toBe(1000);
    const file = '.tugtool/config.toml';
    const ok = await parseConfigText(`[run.prices]\ninput = ${USAGE_MAX_PRICE}\noutput = 10\n`, file);
    expect(ok.run.prices).toEqual({ input: USAGE_MAX_PRICE, output: 10 });
    for (const bad of ['1e300', String(USAGE_MAX_PRICE + 0.5)]) {
      const e = await configError(parseConfigText(`[run.prices]\ncache_write = ${bad}\n`, file));
      expect([e.code, e.exitCode, e.details.source]).toEqual(['ConfigInvalid', 2, file]);
      expect(e.message).toContain('run.prices');
      expect(e.message).toContain('1000');
      const env = await configError(loadConfig(tempDir(), { TUGCODE_RUN_PRICES: `{"output": ${bad}}` }));
      expect([env.code, env.details.source, env.details.key]).toEqual([
        'ConfigInvalid',
        'TUGCODE_RUN_PRICES',
        'run.prices',
      ]);
      expect(env.message).toContain('numbers from 0 to 1000');
    }
  });

  it('blames a bad environment value on the variable even when config.toml exists, and a bad file value on the file', async () => {
    const root = tempDir();
    writeFiles(root, { '.tugtool/config.toml': '[state]\nmax_attempts = 5\n' });
    const env = await configError(loadConfig(root, { TUGCODE_STATE_LEASE_SECONDS: '999999999999' }));
    expect(env.details.source).toBe('TUGCODE_STATE_LEASE_SECONDS');
    const bad = tempDir();
    writeFiles(bad, { '.tugtool/config.toml': '[state]\nlease_seconds = 999999999999\n' });
    const file = await configError(loadConfig(bad, { TUGCODE_STATE_MAX_ATTEMPTS: '4' }));
    expect([file.details.source, file.details.key]).toEqual(['.tugtool/config.toml', 'state.lease_seconds']);
    const alias = await configError(loadConfig(tempDir(), { TUG_VERIFY: 'everything' }));
    expect([alias.details.source, alias.details.key]).toEqual(['TUG_VERIFY', 'kernel.verify']);
  });

  it('warns about unknown keys and tables instead of failing', async () => {
    const w = new WarningSink();
    const c = await parseConfigText('[state]\nlease = 5\n[nonsense]\nx = 1\n', 'config.toml', w);
    expect(c).toEqual(CONFIG_DEFAULTS);
    expect(w.items.map((i) => i.details?.key)).toEqual(['state.lease', 'nonsense']);
  });

  it('writes a template whose every key is commented out and which parses to the defaults', async () => {
    const text = configTemplate();
    const w = new WarningSink();
    expect(await parseConfigText(text, 'template', w)).toEqual(CONFIG_DEFAULTS);
    expect(w.items).toEqual([]);
    // Uncommenting every key gives the defaults too: the template documents real keys and values.
    const uncommented = text.replace(/^# ([a-z_]+ = .*?)\s+#.*$/gm, '$1');
    expect(await parseConfigText(uncommented, 'template', w)).toEqual(CONFIG_DEFAULTS);
    expect(w.items).toEqual([]);
    expect(text).not.toMatch(/docs\//);
    for (const [table, keys] of Object.entries(CONFIG_DEFAULTS)) {
      // Every key is explained (its description in the config schema), without citing docs a user's repo lacks.
      for (const key of Object.keys(keys))
        expect(text, `${table}.${key}`).toMatch(new RegExp(`^# ${key} = .*\\S\\s+# \\S.{8,}$`, 'm'));
    }
  });
});

describe('config fast path', () => {
  it('recognizes the init template as setting nothing, and anything else as setting something', async () => {
    const { setsNothing } = await import('../../src/config/config.js');
    expect(setsNothing(configTemplate())).toBe(true);
    expect(setsNothing('[state]\nlease_seconds = 5\n')).toBe(false);
    expect(setsNothing('[bogus]\n')).toBe(false);
    expect(setsNothing('[state\n')).toBe(false);
    expect(setsNothing('  # only a comment\n\n')).toBe(true);
  });
});

describe('config rules without zod', () => {
  it('accept exactly what the zod schema accepts, key by key', async () => {
    const { CONFIG_RULES, satisfies } = await import('../../src/config/rules.js');
    const { CONFIG_TABLES } = await import('../../src/config/schema.js');
    const samples: unknown[] = [
      -1,
      0,
      1,
      2,
      30,
      300,
      3600,
      3601,
      1.5,
      7200,
      64,
      65,
      1000,
      1001,
      86400,
      86401,
      604800,
      604801,
      31622400,
      31622401,
      999999999999,
      '',
      'x',
      'main',
      'normal',
      'strict',
      'lenient',
      'pedantic',
      'none',
      'syntax',
      'tests',
      'typecheck',
      'safe',
      'aggressive',
      true,
      false,
      null,
      [],
      ['a'],
      [1],
      {},
      { input: 1000 },
      { input: 1000.5 },
      { output: 1e300 },
      'npm test',
      'node "unbalanced',
      "sh -c 'unbalanced",
      'trailing \\',
      'sh -c "echo \\"hi\\""',
    ];
    for (const [table, schema] of Object.entries(CONFIG_TABLES)) {
      const rules = (CONFIG_RULES as Record<string, Record<string, Parameters<typeof satisfies>[0]>>)[table]!;
      expect(Object.keys(rules).sort()).toEqual(Object.keys(schema.shape).sort());
      for (const key of Object.keys(rules)) {
        for (const v of samples) {
          const zodOk = schema.safeParse({ [key]: v }).success;
          expect(satisfies(rules[key]!, v), `${table}.${key} = ${JSON.stringify(v)}`).toBe(zodOk);
        }
      }
    }
  });
});
