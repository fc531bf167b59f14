/**
 * `tugcode board` over HTTP, without a browser (docs/board.md §1–§2, §5–§6): the token, Host and Origin
 * refusals, the bounds, the event stream (a snapshot only when the state changed, Last-Event-ID resume), the
 * actions behind --allow-actions with the CLI's envelope and events, the kept token and port.
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir, tempRepo } from '../helpers/repo.js';
import { planText, runRepo, startRun, step } from '../run/helpers.js';
import { applyPlans, expectRefused, http, own, sse, startBoardCli, whereOf, type BoardChild } from './helpers.js';
import { until } from './page.js';

const started: BoardChild[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((b) => b.stop()));
});

async function board(cwd: string, args: string[] = [], env: Record<string, string> = {}) {
  const b = await startBoardCli(cwd, args, env);
  started.push(b);
  return b;
}

function repo(): string {
  const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three', { deps: [1] })]));
  const r = runCli(['state', 'init', 'demo', '--json'], { cwd: root });
  expect(r.code, r.stderr).toBe(0);
  return root;
}

const cli = (root: string, args: string[]) => {
  const r = runCli([...args, '--json'], { cwd: root });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return r.json;
};

describe('tugcode board: who may ask', () => {
  it('prints its URL on 127.0.0.1; 401 without the token; 403 for a foreign Host or Origin; the page under a CSP', async () => {
    const root = repo();
    const b = await board(root);
    expect(b.line).toMatchObject({ host: '127.0.0.1', allow_actions: false, warnings: [] });
    expect(b.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{32}$/);
    for (const path of ['/', '/events', '/api/snapshot', '/api/step?plan=demo&step=step-1', '/api/graph?plan=demo'])
      expectRefused(await http(b.base, path, { headers: own(b) }), 401, 'Unauthorized');
    expectRefused(await http(b.base, '/?token=wrong', { headers: own(b) }), 401, 'Unauthorized');
    const q = `/?token=${b.token}`;
    expectRefused(
      await http(b.base, q, { headers: own(b, { Origin: 'http://evil.example' }) }),
      403,
      'ForbiddenOrigin',
    );
    // DNS rebinding: a foreign name resolving to 127.0.0.1 still names itself in Host.
    expectRefused(await http(b.base, q, { headers: { Host: `evil.example:${b.port}` } }), 403, 'ForbiddenHost');
    const page = await http(b.base, q, { headers: own(b, { Origin: `http://127.0.0.1:${b.port}` }) });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'; script-src 'nonce-[^']+'/);
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.body).toContain('<title>tugcode board</title>');
    // Everything inline: no script or style from elsewhere, nothing fetched from outside.
    expect(page.body).not.toMatch(
      /<script[^>]*\ssrc=|<link[^>]*stylesheet|(?:src|href)=["']?https?:|@import|url\(\s*['"]?https?:/,
    );
    // localhost names the same board.
    expect((await http(b.base, q, { headers: { Host: `localhost:${b.port}` } })).status).toBe(200);
  }, 60_000);

  it('bounds every input: methods, URL length, unknown paths, bad parameters, actions when read-only', async () => {
    const root = repo();
    const b = await board(root);
    const h = own(b, { 'X-Tug-Token': b.token });
    expect((await http(b.base, '/', { method: 'DELETE', headers: h })).status).toBe(405);
    expect((await http(b.base, `/?x=${'a'.repeat(5000)}`, { headers: h })).status).toBe(414);
    expectRefused(await http(b.base, '/nope', { headers: h }), 404, 'NotFound');
    expectRefused(await http(b.base, '/api/step?plan=demo', { headers: h }), 400, 'InvalidArgument');
    const missing = await http(b.base, '/api/step?plan=demo&step=step-9', { headers: h });
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ status: 'error', error: { code: 'StepNotFound' } });
    const post = await http(b.base, '/api/action', {
      method: 'POST',
      headers: { ...h, 'Content-Type': 'application/json' },
      body: JSON.stringify({ action: 'reset', plan: 'demo', step: 'step-1' }),
    });
    expectRefused(post, 403, 'ActionsNotAllowed');
  }, 60_000);

  it('--host beyond loopback warns; --port in use and a bad --host are InvalidArgument', async () => {
    const root = repo();
    const wide = await board(root, ['--host', '0.0.0.0']);
    expect(wide.line.warnings).toEqual([expect.objectContaining({ code: 'BoardNotLoopback' })]);
    expect(wide.url.startsWith('http://127.0.0.1:')).toBe(true);
    const busy = runCli(['board', '--port', String(wide.port), '--host', '0.0.0.0', '--json'], { cwd: root });
    expect(busy.code).toBe(2);
    expect(busy.json.error).toMatchObject({ code: 'InvalidArgument', details: { argument: '--port' } });
    const bad = runCli(['board', '--host', 'no such host', '--json'], { cwd: root });
    expect(bad.code).toBe(2);
    expect(bad.json).toMatchObject({ command: 'board', error: { code: 'InvalidArgument' } });
  }, 60_000);

  it.runIf(process.platform === 'linux')(
    '--open hands the URL to xdg-open; without one, a warning',
    async () => {
      const root = repo();
      const bin = tempDir('tugcode-open-');
      const seen = join(bin, 'seen');
      writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > '${seen}'\n`, { mode: 0o755 });
      const b = await board(root, ['--open'], { PATH: `${bin}:${process.env.PATH}` });
      expect(b.line.warnings).toEqual([]);
      expect(await until('xdg-open to run', () => existsSync(seen) && readFileSync(seen, 'utf8'))).toBe(b.url);
      const none = await board(root, ['--open'], { PATH: tempDir('tugcode-noopen-') });
      expect(none.line.warnings).toEqual([expect.objectContaining({ code: 'BoardNotOpened' })]);
    },
    60_000,
  );

  it('in a repository without tugcode init: NotInitialized, exit 3', () => {
    const r = runCli(['board', '--json'], { cwd: tempRepo() });
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ status: 'error', command: 'board', error: { code: 'NotInitialized' } });
  });
});

describe('tugcode board: the event stream', () => {
  it('hello, then the snapshot with its hash as id; nothing while unchanged; one frame per change; Last-Event-ID resumes', async () => {
    const root = repo();
    const b = await board(root);
    const h = own(b);
    const s1 = sse(b.base, `/events?token=${b.token}`, h);
    expect(await s1.status).toBe(200);
    const hello = await s1.next((e) => e.event === 'hello');
    expect(hello.data).toMatchObject({ allow_actions: false });
    const first = await s1.next((e) => e.event === 'snapshot');
    expect(first.id).toBe(first.data.hash);
    const plan = first.data.snapshot.plans[0];
    expect(plan.cards.map((c: any) => [c.anchor, c.lane])).toEqual([
      ['step-1', 'ready'],
      ['step-2', 'blocked'],
      ['step-3', 'blocked'],
    ]);
    const snapshot = await http(b.base, `/api/snapshot?token=${b.token}`, { headers: h });
    expect(snapshot.json.hash).toBe(first.data.hash);
    // Unchanged: not one message in 2 s (the board keeps probing the state meanwhile).
    const count = s1.events.length;
    await new Promise((r) => setTimeout(r, 2000));
    expect(s1.events.length).toBe(count);
    // A change: one `plans` frame on top of the snapshot, with step-1 running.
    cli(root, ['state', 'claim', 'demo', '--worktree', root]);
    const second = await s1.next((e) => e.event === 'plans', count);
    expect(second.id).toBe(second.data.hash);
    expect(second.data.base).toBe(first.data.hash);
    expect(second.data.hash).not.toBe(first.data.hash);
    // The rebuilt state hashes to the frame's hash (helpers.ts applyPlans) and is the board's.
    expect(second.state).toBeDefined();
    const running = second.state.plans[0].cards[0];
    expect(running).toMatchObject({ anchor: 'step-1', lane: 'running', attempt: 1 });
    expect(running.owner.worktree).toBe(root);
    expect(second.state).toEqual((await http(b.base, `/api/snapshot?token=${b.token}`, { headers: h })).json.snapshot);
    expect(s1.events.slice(count).filter((e) => e.event === 'snapshot' || e.event === 'plans')).toHaveLength(1);
    // Held now, the step is read again every 2 s: its timestamps did not move, so still not one message.
    const held = s1.events.length;
    await new Promise((r) => setTimeout(r, 2500));
    expect(s1.events.length).toBe(held);
    // A page that has this snapshot reconnects: hello, and no snapshot again.
    const s2 = sse(b.base, `/events?token=${b.token}`, { ...h, 'Last-Event-ID': second.data.hash });
    await s2.next((e) => e.event === 'hello');
    // …and one that has an older one gets the whole current one.
    const s3 = sse(b.base, `/events?token=${b.token}`, { ...h, 'Last-Event-ID': first.data.hash });
    const whole = await s3.next((e) => e.event === 'snapshot');
    expect(whole.data.hash).toBe(second.data.hash);
    expect(whole.data.snapshot).toEqual(second.state);
    await new Promise((r) => setTimeout(r, 1000));
    expect(s2.events.map((e) => e.event)).toEqual(['hello']);
    // The next change reaches the reconnected page as a frame on top of the hash it gave.
    cli(root, ['state', 'heartbeat', 'demo', 'step-1', '--worktree', root]);
    const beat = await s2.next((e) => e.event === 'plans');
    expect(beat.data.base).toBe(second.data.hash);
    // This reader never had a snapshot: the page's is the one its Last-Event-ID named.
    const after = applyPlans({ hash: second.data.hash, snapshot: second.state }, beat.data);
    expect(after.plans[0].cards[0].heartbeat_at).not.toBeNull();
    for (const s of [s1, s2, s3]) s.close();
  }, 60_000);

  it('a change sends that plan only, with only its changed cards; nothing for the plans that did not change', async () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three', { deps: [1] })]));
    writeFileSync(join(root, '.tugtool', 'tugplan-other.md'), planText([step(1, 'Alpha'), step(2, 'Beta')]));
    for (const p of ['demo', 'other']) cli(root, ['state', 'init', p]);
    const b = await board(root);
    const h = own(b);
    const s = sse(b.base, `/events?token=${b.token}`, h);
    const first = await s.next((e) => e.event === 'snapshot');
    const paths = first.data.snapshot.plans.map((p: any) => p.plan_path).sort();
    expect(paths).toEqual(['.tugtool/tugplan-demo.md', '.tugtool/tugplan-other.md']);
    const frames = () => s.events.filter((e) => e.event === 'plans' || e.event === 'snapshot');

    // A claim in demo: the frame carries demo alone, and of its cards step-1 alone (step-2 and 3 stay blocked).
    cli(root, ['state', 'claim', 'demo', '--worktree', root]);
    const claimed = await s.next((e) => e.event === 'plans');
    expect(claimed.data).toMatchObject({ base: first.data.hash, removed: [] });
    expect(claimed.data.order).toBeUndefined();
    expect(claimed.data.board).toBeUndefined();
    expect(claimed.data.plans.map((p: any) => p.plan_path)).toEqual(['.tugtool/tugplan-demo.md']);
    expect(claimed.data.plans[0].cards.map((c: any) => [c.anchor, c.lane])).toEqual([['step-1', 'running']]);
    expect(claimed.data.plans[0].anchors).toBeUndefined();
    expect(claimed.data.plans[0].lanes).toMatchObject({ running: 1, ready: 0, blocked: 2 });
    expect(claimed.state).toBeDefined();

    // A heartbeat in demo, then a claim in other: each its own frame of its own plan, nothing in between
    // (demo is held, so the board reads everything again every 2 s meanwhile, and the other plan is unchanged).
    cli(root, ['state', 'heartbeat', 'demo', 'step-1', '--worktree', root]);
    const beat = await s.next((e) => e.event === 'plans' && e !== claimed);
    expect(beat.data.base).toBe(claimed.data.hash);
    expect(beat.data.plans.map((p: any) => [p.plan_path, p.cards.map((c: any) => c.anchor)])).toEqual([
      ['.tugtool/tugplan-demo.md', ['step-1']],
    ]);
    expect(beat.data.plans[0].cards[0].heartbeat_at).not.toBeNull();
    cli(root, ['state', 'claim', 'other', '--worktree', root]);
    const other = await s.next((e) => e.event === 'plans' && e !== claimed && e !== beat);
    expect(other.data.base).toBe(beat.data.hash);
    expect(other.data.plans.map((p: any) => [p.plan_path, p.cards.map((c: any) => c.anchor)])).toEqual([
      ['.tugtool/tugplan-other.md', ['step-1']],
    ]);
    expect(frames()).toEqual([first, claimed, beat, other]);
    expect(other.state).toEqual((await http(b.base, `/api/snapshot?token=${b.token}`, { headers: h })).json.snapshot);

    // A plan gone from the state (pruned: its file removed) is said to be removed; the order follows.
    cli(root, ['state', 'release', 'other', 'step-1', '--worktree', root]);
    const released = await s.next((e) => e.event === 'plans' && e.data.base === other.data.hash);
    rmSync(join(root, '.tugtool', 'tugplan-other.md'));
    cli(root, ['state', 'prune']);
    const gone = await s.next((e) => e.event === 'plans' && e.data.base === released.data.hash);
    expect(gone.data).toMatchObject({
      removed: ['.tugtool/tugplan-other.md'],
      order: ['.tugtool/tugplan-demo.md'],
      plans: [],
    });
    expect(gone.state.plans.map((p: any) => p.plan_path)).toEqual(['.tugtool/tugplan-demo.md']);
    s.close();
  }, 60_000);
  it('the step detail: items, attempts with reasons, artifacts, events', async () => {
    const root = repo();
    cli(root, ['state', 'claim', 'demo', '--worktree', root]);
    cli(root, [
      'state',
      'artifact',
      'demo',
      'step-1',
      '--worktree',
      root,
      '--kind',
      'note',
      '--summary',
      'looked at it',
    ]);
    cli(root, ['state', 'fail', 'demo', 'step-1', '--worktree', root, '--reason', 'CheckpointFailed: it broke']);
    const b = await board(root);
    const d = await http(b.base, `/api/step?plan=demo&step=step-1&token=${b.token}`, { headers: own(b) });
    expect(d.status, d.body).toBe(200);
    expect(d.json.units[0]).toMatchObject({ anchor: 'step-1', status: 'pending' });
    expect(d.json.units[0].items[0]).toMatchObject({ kind: 'task', text: 'write one', status: 'open' });
    expect(d.json.attempts).toEqual([
      expect.objectContaining({ attempt: 1, owner: root, outcome: 'failed', reason: 'CheckpointFailed: it broke' }),
    ]);
    expect(d.json.artifacts).toEqual([
      expect.objectContaining({ kind: 'note', summary: 'looked at it', step_anchor: 'step-1' }),
    ]);
    expect(d.json.events.map((e: any) => e.command)).toContain('state fail');
    expect(d.json.log).toBeNull();
  }, 60_000);

  it('a started board again: the same token and port, so an open page reconnects; another board then gets another port', async () => {
    const root = repo();
    const a = await board(root);
    expect(await a.stop()).toBe(143);
    started.splice(started.indexOf(a), 1);
    const b = await board(root);
    expect([b.port, b.token]).toEqual([a.port, a.token]);
    const c = await board(root);
    expect(c.port).not.toBe(b.port);
    expect(c.token).toBe(b.token);
  }, 60_000);
});

describe('tugcode board --allow-actions', () => {
  it('a reset from the page is `state reset`: its envelope, its event with actor admin; POSTs are guarded', async () => {
    const root = repo();
    for (let i = 0; i < 3; i++) {
      cli(root, ['state', 'claim', 'demo', '--worktree', root]);
      cli(root, ['state', 'fail', 'demo', 'step-1', '--worktree', root, '--reason', `broke ${i}`]);
    }
    const b = await board(root, ['--allow-actions']);
    expect(b.line.allow_actions).toBe(true);
    const s = sse(b.base, `/events?token=${b.token}`, own(b));
    const before = await s.next((e) => e.event === 'snapshot');
    const card = before.data.snapshot.plans[0].cards[0];
    expect(card).toMatchObject({ lane: 'needs_you', need: { kind: 'failed', reason: 'broke 2', actions: ['reset'] } });
    const body = JSON.stringify({ action: 'reset', plan: '.tugtool/tugplan-demo.md', step: 'step-1' });
    const json = { 'Content-Type': 'application/json' };
    // The token only in the URL is not enough for a POST; a foreign Origin is refused; so is a form's type.
    expectRefused(
      await http(b.base, `/api/action?token=${b.token}`, { method: 'POST', headers: own(b, json), body }),
      401,
      'Unauthorized',
    );
    const tok = { 'X-Tug-Token': b.token };
    expectRefused(
      await http(b.base, '/api/action', {
        method: 'POST',
        headers: own(b, { ...json, ...tok, Origin: 'http://evil.example' }),
        body,
      }),
      403,
      'ForbiddenOrigin',
    );
    expect(
      (
        await http(b.base, '/api/action', {
          method: 'POST',
          headers: own(b, { ...tok, 'Content-Type': 'text/plain' }),
          body,
        })
      ).status,
    ).toBe(415);
    expect(
      (
        await http(b.base, '/api/action', {
          method: 'POST',
          headers: own(b, { ...json, ...tok }),
          body: 'x'.repeat(17_000),
        })
      ).status,
    ).toBe(413);
    const ok = await http(b.base, '/api/action', {
      method: 'POST',
      headers: own(b, { ...json, ...tok, Origin: `http://127.0.0.1:${b.port}` }),
      body,
    });
    expect(ok.status, ok.body).toBe(200);
    const viaCli = runCli(['state', 'reset', 'demo', 'step-1', '--json'], { cwd: root });
    // The same envelope as the CLI's (which now finds nothing to reset: pending, failures 0).
    expect(Object.keys(ok.json)).toEqual(Object.keys(viaCli.json));
    expect(ok.json).toMatchObject({
      status: 'ok',
      command: 'state reset',
      reset: true,
      step_anchor: 'step-1',
      previous_status: 'failed',
      previous_owner: null,
      warnings: [],
    });
    const log = cli(root, ['state', 'log', 'demo', '--step', 'step-1', '--limit', '2']);
    expect(log.events.find((e: any) => e.details.reset)).toMatchObject({ command: 'state reset', actor: 'admin' });
    const after = await s.next((e) => e.event === 'plans' && e.data.hash !== before.data.hash);
    expect(after.data.base).toBe(before.data.hash);
    expect(after.state.plans[0].cards[0]).toMatchObject({ lane: 'ready', failures: 0 });
    // A refusal is the CLI's error envelope: step-1 is no longer failed or claimed, decide is not in this build.
    const live = await http(b.base, '/api/action', {
      method: 'POST',
      headers: own(b, { ...json, ...tok }),
      body: JSON.stringify({ action: 'decide', plan: 'demo', step: 'step-1', decision: 'approve' }),
    });
    expect(live.status).toBe(409);
    expect(live.json).toMatchObject({ status: 'error', command: 'state decide' });
    const noNotes = await http(b.base, '/api/action', {
      method: 'POST',
      headers: own(b, { ...json, ...tok }),
      body: JSON.stringify({ action: 'decide', plan: 'demo', step: 'step-1', decision: 'revise' }),
    });
    expectRefused(noNotes, 400, 'InvalidArgument');
    // The operation's own validation (notes of blanks only) is invalid input too: 400 with its envelope, not 409.
    const blankNotes = await http(b.base, '/api/action', {
      method: 'POST',
      headers: own(b, { ...json, ...tok }),
      body: JSON.stringify({ action: 'decide', plan: 'demo', step: 'step-1', decision: 'revise', notes: '   ' }),
    });
    expectRefused(blankNotes, 400, 'InvalidArgument');
    expect(blankNotes.json).toMatchObject({ status: 'error', command: 'state decide' });
    // A field of another decision is refused, as the CLI refuses `--approve --revise …`, never ignored.
    for (const body of [
      { decision: 'approve', notes: 'looks good' },
      { decision: 'approve', reason: 'why not' },
      { decision: 'revise', notes: 'more', reason: 'and this' },
      { decision: 'reject', reason: 'no', notes: 'also' },
    ]) {
      const stray = await http(b.base, '/api/action', {
        method: 'POST',
        headers: own(b, { ...json, ...tok }),
        body: JSON.stringify({ action: 'decide', plan: 'demo', step: 'step-1', ...body }),
      });
      expectRefused(stray, 400, 'InvalidArgument');
    }
    // A step that does not resolve is 404 (exit 3), as the reads answer it.
    const noStep = await http(b.base, '/api/action', {
      method: 'POST',
      headers: own(b, { ...json, ...tok }),
      body: JSON.stringify({ action: 'reset', plan: 'demo', step: 'step-9' }),
    });
    expectRefused(noStep, 404, 'StepNotFound');
    expect(noStep.json).toMatchObject({ status: 'error', command: 'state reset' });
    const forced = await http(b.base, '/api/action', {
      method: 'POST',
      headers: own(b, { ...json, ...tok }),
      body: JSON.stringify({ action: 'reset', plan: 'demo', step: 'step-1', force: true }),
    });
    // `force` is no field of any action: ignored, and a pending step is not reset by it.
    expect(forced.json).toMatchObject({ status: 'ok', previous_status: 'pending' });
    s.close();
  }, 90_000);
});

describe('tugcode run --board: last activity', () => {
  it("a running card's last activity is the watchdog's: an implementer silent on its output that edits files", async () => {
    const root = runRepo(planText([step(1, 'One')]));
    const dir = tempDir('tugcode-busy-');
    const gate = join(dir, 'gate');
    const script = join(dir, 'busy.sh');
    // One line of output, then only file changes in its worktree (every 100 ms) until the test opens the gate.
    writeFileSync(
      script,
      `#!/bin/sh
cat > /dev/null
echo "working on $TUG_STEP"
while [ ! -e '${gate}' ]; do date +%s%N > "$TUG_WORKTREE/busy.txt"; sleep 0.1; done
rm -f "$TUG_WORKTREE/busy.txt"
echo "$TUG_STEP" > "$TUG_WORKTREE/$TUG_STEP.txt"
`,
      { mode: 0o755 },
    );
    // --stall-seconds 2: the watchdog looks at the worktree every 500 ms (docs/run.md §7.3).
    const run = startRun(root, [
      'demo',
      '--implementer',
      JSON.stringify(script),
      '--board',
      '--stall-seconds',
      '2',
      '--heartbeat',
      '600',
    ]);
    try {
      const w = whereOf(
        await until('the board line', () => {
          if (run.child.exitCode !== null) throw new Error(`run ended: ${JSON.stringify(run.events().at(-1))}`);
          return run.events().find((e) => e.type === 'board');
        }),
      );
      const card = async () =>
        (await http(w.base, `/api/snapshot?token=${w.token}`, { headers: own(w) })).json?.snapshot?.plans[0]?.cards[0];
      await until('step-1 in its implementer', async () => (await card())?.phase === 'implementer');
      const log = join(root, '.tugtool', 'logs', 'demo', 'step-1-attempt1.log');
      await until('its output', () => existsSync(log) && readFileSync(log, 'utf8').includes('working on step-1'));
      const said = statSync(log).mtimeMs;
      // Nothing the state or the log says moves after its one line: only the watchdog sees the file changes.
      const c = await until(
        'a last activity 1.5 s after the last output',
        async () => {
          const x = await card();
          return x && Date.parse(x.last_activity_at) > said + 1500 ? x : null;
        },
        20_000,
      );
      expect(c).toMatchObject({ lane: 'running', phase: 'implementer', owner: { worker: 'w1' } });
      expect(Date.parse(c.last_activity_at)).toBeLessThanOrEqual(Date.now());
      writeFileSync(gate, '');
      const r = await run.done;
      expect(r.code, r.stderr).toBe(0);
    } finally {
      // Open the gate first: a SIGKILLed driver cannot stop its implementer, which would loop on.
      writeFileSync(gate, '');
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  }, 90_000);
});
