/**
 * The state relay on PostgreSQL (docs/agents.md §1.5): an agent's `tugcode state update` reaches the
 * state through the driver, so the agent needs no connection of its own. The agent here is a fake `codex`
 * first on PATH that runs the literal command its prompt gives, through the `tugcode` launcher on its PATH,
 * with a state URL that leads nowhere (as from a sandbox without network).
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/pg.js';
import { tempDir } from '../helpers/repo.js';
import { planText, runRepo, startRun, step, stepCommits, tugJson } from '../run/helpers.js';

const FAKE = `#!/usr/bin/env node
const fs = require('node:fs');
const { execSync } = require('node:child_process');
const prompt = fs.readFileSync(0, 'utf8');
const cmd = /^\\s+(tugcode state update .*) --task ORD completed$/m.exec(prompt)[1] + ' --task 0 completed';
fs.writeFileSync(process.env.TUG_STEP + '.txt', 'done\\n');
fs.appendFileSync(process.env.FAKE_URL_SEEN, String(process.env.TUGCODE_STATE_URL) + '\\n');
const env = { ...process.env, TUGCODE_STATE_URL: 'postgres://nobody@127.0.0.1:9/none' };
const out = execSync(cmd, { env, encoding: 'utf8' });
const argv = process.argv.slice(2);
fs.writeFileSync(argv[argv.indexOf('--output-last-message') + 1], 'Did it\\n\\n' + out);
`;

describe('the state relay on PostgreSQL', () => {
  it("the agent's own state update lands without its own connection", async () => {
    const db = await createTestDatabase();
    const root = runRepo(planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]));
    const bin = join(tempDir('tugcode-fake-'), 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'codex'), FAKE);
    chmodSync(join(bin, 'codex'), 0o755);
    const seen = join(tempDir('tugcode-fake-'), 'urls');
    const env = { TUGCODE_STATE_URL: db.url, PATH: `${bin}:${process.env.PATH}`, FAKE_URL_SEEN: seen };
    const r = await startRun(root, ['demo', '--workers', '1', '--agent', 'codex'], env).done;
    expect(r.events.at(-1), r.stdout + r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
    // The agent saw the state's address without its password: only the relay logs in.
    const password = decodeURIComponent(new URL(db.url).password);
    expect(password).not.toBe('');
    const urls = readFileSync(seen, 'utf8').trim().split('\n');
    expect(urls).toHaveLength(2);
    for (const u of urls) {
      expect(u).not.toContain(password);
      expect(new URL(u).host).toBe(new URL(db.url).host);
    }
    const log = tugJson(root, ['state', 'log', '.tugtool/tugplan-demo.md', '--limit', '100'], env);
    const own = log.json.events.filter(
      (e: any) => e.command === 'state update' && e.details.complete_remaining === false,
    );
    expect(own.map((e: any) => [e.step_anchor, e.actor])).toEqual([
      ['step-1', expect.stringMatching(/\.tugtree\/tugplan__demo--w1$/)],
      ['step-2', expect.stringMatching(/\.tugtree\/tugplan__demo--w1$/)],
    ]);
  });
});
