// The board's page (docs/board.md §3–§6): one EventSource, snapshots rendered in place (each card keyed by
// its step, moved between lanes, its HTML replaced only when it changed), a ticker for ages, the graph laid
// out here from `state graph`'s nodes and edges, the step detail with its live log, and the actions behind a
// confirmation. Plain browser JavaScript: no framework, no build step, nothing fetched from elsewhere.
'use strict';
(() => {
  const token = new URLSearchParams(location.search).get('token') || '';
  const LANES = [
    ['blocked', 'Blocked'],
    ['ready', 'Ready'],
    ['running', 'Running'],
    ['needs_you', 'Needs you'],
    ['done', 'Done'],
  ];
  const LANE_IDS = LANES.map((l) => l[0]);
  const LOG_MAX = 64 * 1024;

  const $ = (id) => document.getElementById(id);
  const esc = (s) =>
    String(s ?? '').replace(
      /[&<>"']/g,
      (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
    );
  const cls = (s) => String(s).replace(/[^a-z0-9_-]/gi, '_');
  /** A word a POSIX shell reads back as itself (the commands the page shows are pasted into terminals). */
  const shq = (s) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${String(s).replace(/'/g, `'\\''`)}'`);

  let snap = null;
  /** The hash of the snapshot the page shows: a `plans` frame applies on top of it only. */
  let hash = '';
  let skew = 0;
  let conn = '';
  let source = null;
  let retryMs = 1000;
  const planEls = new Map();
  let renders = 0;

  // ── time ───────────────────────────────────────────────────────────────────────────────────────────
  const serverNow = () => Date.now() + skew;
  function span(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return `${s}s`;
    if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
    if (s < 86400) return `${Math.floor(s / 3600)}h ${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
    return `${Math.floor(s / 86400)}d ${Math.floor(s / 3600) % 24}h`;
  }
  const ago = (iso) => (iso ? `${span(serverNow() - Date.parse(iso))} ago` : '—');
  function until(iso) {
    if (!iso) return '—';
    const ms = Date.parse(iso) - serverNow();
    return ms >= 0 ? `${span(ms)} left` : `expired ${span(-ms)} ago`;
  }
  const tickAge = (iso) => `<span class="tick" data-age="${esc(iso || '')}">${esc(ago(iso))}</span>`;
  const tickUntil = (iso) => `<span class="tick" data-until="${esc(iso || '')}">${esc(until(iso))}</span>`;
  function tick() {
    for (const el of document.querySelectorAll('[data-age]')) {
      const t = ago(el.dataset.age);
      if (el.textContent !== t) el.textContent = t;
    }
    for (const el of document.querySelectorAll('[data-until]')) {
      const t = until(el.dataset.until);
      if (el.textContent !== t) el.textContent = t;
    }
  }
  setInterval(tick, 1000);

  // ── messages ───────────────────────────────────────────────────────────────────────────────────────
  let toastTimer = 0;
  function toast(text, error) {
    const t = $('toast');
    t.textContent = text;
    t.classList.toggle('error', Boolean(error));
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => (t.hidden = true), error ? 10000 : 5000);
  }
  function setConn(state, text) {
    const c = $('conn');
    c.className = `conn conn-${state}`;
    c.textContent = text;
  }

  /** GET or POST one of the board's endpoints with the token; never throws (a network error is status 0). */
  async function api(path, init = {}) {
    try {
      const r = await fetch(path, { ...init, headers: { 'X-Tug-Token': token, ...(init.headers || {}) } });
      let body = null;
      try {
        body = await r.json();
      } catch {
        body = null;
      }
      return { status: r.status, body };
    } catch (e) {
      return { status: 0, body: { error: { message: String(e && e.message ? e.message : e) } } };
    }
  }

  // ── the event stream ───────────────────────────────────────────────────────────────────────────────
  let stopped = false;
  const STOPPED =
    'board stopped: the page shows the state when it stopped; tugcode board serves this page again (it reconnects by itself)';
  function connect() {
    if (source) source.close();
    source = new window.EventSource(`/events?token=${encodeURIComponent(token)}`);
    source.addEventListener('hello', (e) => {
      const m = JSON.parse(e.data);
      conn = m.conn;
      if (typeof m.now === 'string') skew = Date.parse(m.now) - Date.now();
      retryMs = 1000;
      stopped = false;
      setConn('live', 'live');
      if (selected) loadDetail();
    });
    source.addEventListener('snapshot', (e) => {
      const m = JSON.parse(e.data);
      render(m.snapshot);
      hash = m.hash;
      document.documentElement.dataset.hash = m.hash;
    });
    // What changed since the snapshot the page has (docs/board.md §5): only those plans are drawn again.
    source.addEventListener('plans', (e) => {
      const m = JSON.parse(e.data);
      // Not on top of what the page has (it cannot happen on one stream): a new stream sends the whole state.
      if (!snap || m.base !== hash) return connect();
      applyPlans(m);
      hash = m.hash;
      document.documentElement.dataset.hash = m.hash;
    });
    source.addEventListener('status', (e) => {
      const m = JSON.parse(e.data);
      if (m.ok) setConn('live', 'live');
      else setConn('down', `state unreadable: ${m.code} (retrying) — ${m.message}`);
    });
    source.addEventListener('log', (e) => appendLog(JSON.parse(e.data)));
    // The board stopped (Ctrl-C, or the run it ran beside ended): said until a board answers again.
    source.addEventListener('stopped', () => {
      stopped = true;
      setConn('down', STOPPED);
    });
    source.onerror = () => {
      if (source.readyState === 2) {
        // Refused (the server answered with an error, or went away for good): ask why, then try again.
        setConn('down', stopped ? STOPPED : 'disconnected');
        api('/api/snapshot').then((r) => {
          if (r.status === 401 || r.status === 403)
            setConn('down', 'this URL no longer opens the board (its token changed): open the URL tugcode printed');
          else setTimeout(connect, retryMs);
          retryMs = Math.min(retryMs * 2, 30000);
        });
      } else if (!stopped) setConn('wait', 'reconnecting…');
    };
  }

  // ── the plans ──────────────────────────────────────────────────────────────────────────────────────
  function fmtUsage(u) {
    if (!u) return '';
    const parts = [];
    if (u.cost_usd !== null && u.cost_usd !== undefined) parts.push(`$${u.cost_usd.toFixed(2)}`);
    if (u.tokens !== null && u.tokens !== undefined) parts.push(`${u.tokens.toLocaleString('en')} tokens`);
    return parts.join(' · ');
  }

  /** Usage per role (`implementer $0.25 · 1,115 tokens`), one line each; '' when none. */
  function fmtRoles(by) {
    if (!by) return '';
    return Object.keys(by)
      .sort()
      .map((r) => {
        const u = by[r];
        return `<span class="role" data-role="${esc(r)}">${esc(r)} ${fmtUsage(u)}${u.reports > 1 ? ` (${u.reports} runs)` : ''}</span>`;
      })
      .join('');
  }

  function planSection(p) {
    const el = document.createElement('section');
    el.className = 'plan';
    el.dataset.plan = p.plan_path;
    el.innerHTML = `
      <div class="plan-head">
        <h2></h2><span class="plan-path mono"></span>
        <div class="progress"><div class="bar"><i></i></div><span class="pct"></span></div>
        <span class="plan-usage"></span>
        <div class="plan-tools"><button type="button" data-graph>Graph</button></div>
      </div>
      <div class="lanes">${LANES.map(
        ([id, name]) =>
          `<div class="lane lane-${id}" data-lane="${id}"><h3><span>${name}</span><span class="n">0</span></h3><div class="cards"></div></div>`,
      ).join('')}</div>
      <div class="graph" hidden></div>`;
    const entry = { el, cards: new Map(), graph: null, graphKey: '' };
    planEls.set(p.plan_path, entry);
    return entry;
  }

  function stepLabel(c) {
    return `Step ${c.id}`;
  }

  function actionButtons(p, c) {
    if (!snap.allow_actions || !c.need || c.need.actions.length === 0) return '';
    const label = {
      reset: 'Reset',
      release: 'Release claim',
      approve: 'Approve',
      revise: 'Revise…',
      reject: 'Reject…',
    };
    return `<div class="card-actions">${c.need.actions
      .map(
        (a) =>
          `<button type="button" class="${a === 'approve' ? 'primary' : a === 'reject' ? 'danger' : ''}" data-act="${esc(a)}" data-plan="${esc(p.plan_path)}" data-step="${esc(c.anchor)}">${esc(label[a] || a)}</button>`,
      )
      .join('')}</div>`;
  }

  /**
   * The commands of a need: each on its own line (`compact`: one line, the choices after the first as their
   * flags, `… --approve | --revise "<notes>" | --reject "<reason>"`, for a card's fixed height).
   */
  function needCommands(n, compact) {
    const all = n.commands && n.commands.length ? n.commands : n.command ? [n.command] : [];
    if (!compact || all.length < 2) return all.join('\n');
    let head = all[0];
    for (const c of all) while (!c.startsWith(head)) head = head.slice(0, head.lastIndexOf(' ', head.length - 2) + 1);
    return [all[0], ...all.slice(1).map((c) => c.slice(head.length))].join(' | ');
  }

  // A substep's phase says which substep (docs/run.md §1.3): `implementer (step-4-1)`.
  function phaseText(c) {
    return c.phase ? (c.phase_substep ? `${c.phase} (${c.phase_substep})` : c.phase) : '';
  }

  function ownerText(c) {
    const o = c.owner;
    if (!o) return '';
    return `${o.worker || o.worktree}${o.host ? ` @ ${o.host}` : ''}`;
  }

  function cardHtml(p, c) {
    const head = `<div class="c-top"><span>${esc(stepLabel(c))}</span><span class="badge st-${cls(c.status)}">${esc(
      c.status.replace(/_/g, ' '),
    )}</span></div><div class="c-title" title="${esc(c.title)}">${esc(c.title)}</div>`;
    const items = c.items.total
      ? `items ${c.items.done}/${c.items.total}${c.items.deferred ? ` (${c.items.deferred} deferred)` : ''}`
      : '';
    const subs = c.substeps.total ? `substeps ${c.substeps.done}/${c.substeps.total}` : '';
    const line = (...parts) => {
      const t = parts.filter(Boolean).join(' · ');
      return t ? `<div class="c-line">${t}</div>` : '';
    };
    switch (c.lane) {
      case 'running':
        return (
          head +
          line(esc(ownerText(c)), esc(phaseText(c)), `attempt ${c.attempt}`) +
          line(
            `lease ${tickUntil(c.lease_expires_at)}`,
            c.heartbeat_at ? `beat ${tickAge(c.heartbeat_at)}` : 'no heartbeat yet',
          ) +
          line(`active ${tickAge(c.last_activity_at)}`, esc(items), fmtUsage(c.usage))
        );
      case 'done':
        return (
          head +
          line(
            c.commit ? `commit <code>${esc(c.commit.slice(0, 10))}</code>` : 'no commit',
            c.completed_via && c.completed_via !== 'complete' ? esc(`via ${c.completed_via}`) : '',
          ) +
          line(`done ${tickAge(c.completed_at)}`, fmtUsage(c.usage))
        );
      case 'blocked':
        return head + line(`waits for ${esc(c.blocked_by.join(', '))}`) + line(esc(items), esc(subs));
      case 'ready':
        return (
          head +
          (c.approved_commit
            ? line(`approved <code>${esc(c.approved_commit.slice(0, 10))}</code>`) + line('the next run integrates it')
            : line(c.failures ? `failed ${c.failures}× before` : 'ready to claim', esc(items), esc(subs))) +
          // The notes a person gave with Revise (docs/board.md §3): what the next attempt's brief carries.
          (c.human_notes ? line(esc(`your notes: ${JSON.stringify(c.human_notes)}`)) : '')
        );
      default: {
        const n = c.need || { reason: c.status, command: '', actions: [] };
        return (
          head +
          (c.owner ? line(esc(ownerText(c)), esc(phaseText(c)), `attempt ${c.attempt}`) : '') +
          `<div class="c-reason" title="${esc(n.reason)}">${esc(n.reason)}</div>` +
          (n.command ? `<pre class="command">${esc(needCommands(n, true))}</pre>` : '') +
          actionButtons(p, c)
        );
      }
    }
  }

  /**
   * A `plans` frame: the snapshot's own fields when they changed, the plans' order when it changed, the
   * removed plans, and each changed plan with only its changed cards (`anchors`: its cards in order, when the
   * set or the order changed). Only the changed plans are drawn again, only their changed cards' HTML made.
   */
  function applyPlans(m) {
    const byPath = new Map(snap.plans.map((p) => [p.plan_path, p]));
    const changed = new Map();
    for (const u of m.plans) {
      const old = byPath.get(u.plan_path);
      const cards = new Map(old ? old.cards.map((c) => [c.anchor, c]) : []);
      for (const c of u.cards) cards.set(c.anchor, c);
      const anchors = u.anchors || (old ? old.cards.map((c) => c.anchor) : []);
      const p = { ...u, cards: anchors.map((a) => cards.get(a)).filter(Boolean) };
      delete p.anchors;
      byPath.set(p.plan_path, p);
      changed.set(p.plan_path, new Set(u.cards.map((c) => c.anchor)));
    }
    for (const path of m.removed) byPath.delete(path);
    const order = m.order || snap.plans.map((p) => p.plan_path);
    const next = m.board ? { ...m.board } : { ...snap };
    next.plans = order.filter((path) => byPath.has(path)).map((path) => byPath.get(path));
    render(next, changed);
  }

  /** Draws the snapshot; with `only` (plan path → its changed cards), only those plans are drawn again. */
  function render(s, only) {
    snap = s;
    $('repo').textContent = `${s.repo.name} · ${s.backend.kind}`;
    $('repo').title = `${s.repo.root} · ${s.backend.location}`;
    const total = fmtUsage(s.usage);
    $('totals').textContent = total ? `cost ${total}` : '';
    $('empty').hidden = s.plans.length > 0;
    if (s.plans.length === 0)
      $('empty').textContent =
        'No plan in the state yet: tugcode state init <plan>, or tugcode run <plan> --implementer <your implementer>.';
    const main = $('plans');
    const seen = new Set();
    let prev = $('empty');
    for (const p of s.plans) {
      seen.add(p.plan_path);
      const known = planEls.get(p.plan_path);
      const entry = known || planSection(p);
      if (prev.nextSibling !== entry.el) main.insertBefore(entry.el, prev.nextSibling);
      prev = entry.el;
      if (!only || !known) renderPlan(p, entry);
      else if (only.has(p.plan_path)) renderPlan(p, entry, only.get(p.plan_path));
    }
    for (const [path, entry] of planEls)
      if (!seen.has(path)) {
        entry.el.remove();
        planEls.delete(path);
      }
    renders++;
    document.documentElement.dataset.renders = String(renders);
    requestAnimationFrame(() => performance.mark('board-rendered'));
    if (selected) {
      const c = cardOf(selected.plan, selected.step);
      const key = JSON.stringify(c || null);
      if (key !== detailKey) loadDetail();
    }
  }

  /** Draws one plan; `cardsChanged`: the only cards whose HTML may have changed (all when absent). */
  function renderPlan(p, entry, cardsChanged) {
    const el = entry.el;
    const head = el.querySelector('.plan-head');
    const title = p.title || p.slug || p.plan_path;
    if (head.querySelector('h2').textContent !== title) head.querySelector('h2').textContent = title;
    const pathLine =
      p.plan_path +
      (p.status !== 'active' ? ` · ${p.status}` : '') +
      (p.edited ? ' · edited since the state was made: the next tugcode run takes it over' : '') +
      // The run holding the plan, as tugcode status says it (docs/board.md §3).
      (p.run_driver?.note ? ` · ${p.run_driver.note}` : '') +
      // No run holds the lock: how the last one ran, to run the plan again the same way (docs/board.md §3).
      (!p.run_driver && p.last_run ? ` · last run: ${p.last_run.command} (ended ${p.last_run.ended_at})` : '');
    const pathEl = head.querySelector('.plan-path');
    if (pathEl.textContent !== pathLine) {
      pathEl.textContent = pathLine;
      pathEl.title = pathLine;
    }
    head.querySelector('.bar > i').style.width = `${p.progress.percent}%`;
    head.querySelector('.pct').textContent = `${p.progress.done}/${p.progress.total} steps · ${p.progress.percent}%`;
    head.querySelector('.plan-usage').textContent = fmtUsage(p.usage);
    const lanes = {};
    for (const id of LANE_IDS) {
      const lane = el.querySelector(`.lane[data-lane="${id}"]`);
      lanes[id] = { cards: lane.querySelector('.cards'), n: lane.querySelector('.n'), prev: null };
      const n = String(p.lanes[id] ?? 0);
      if (lanes[id].n.textContent !== n) lanes[id].n.textContent = n;
    }
    const seen = new Set();
    for (const c of p.cards) {
      seen.add(c.anchor);
      let card = entry.cards.get(c.anchor);
      if (!card) {
        card = document.createElement('div');
        card.className = 'card';
        card.tabIndex = 0;
        card.setAttribute('role', 'button');
        card.dataset.step = c.anchor;
        card.dataset.plan = p.plan_path;
        entry.cards.set(c.anchor, card);
      }
      const laneId = LANE_IDS.includes(c.lane) ? c.lane : 'needs_you';
      const lane = lanes[laneId];
      if (!cardsChanged || cardsChanged.has(c.anchor) || card._html === undefined) {
        const html = cardHtml(p, c);
        if (card._html !== html) {
          card.innerHTML = html;
          card._html = html;
        }
        card.classList.toggle('needs', laneId === 'needs_you');
        card.classList.toggle('acts', laneId === 'needs_you' && Boolean(actionButtons(p, c)));
        card.classList.toggle(
          'selected',
          Boolean(selected && selected.plan === p.plan_path && selected.step === c.anchor),
        );
        if (card.dataset.lane !== laneId) card.dataset.lane = laneId;
      }
      // In plan order within its lane: moved only when it is not where it belongs.
      const want = lane.prev ? lane.prev.nextSibling : lane.cards.firstChild;
      if (card.parentNode !== lane.cards || want !== card) lane.cards.insertBefore(card, want);
      lane.prev = card;
    }
    for (const [anchor, card] of entry.cards)
      if (!seen.has(anchor)) {
        card.remove();
        entry.cards.delete(anchor);
      }
    if (entry.graph && !el.querySelector('.graph').hidden) colorGraph(p, entry);
  }

  function planOf(path) {
    return snap && snap.plans.find((p) => p.plan_path === path);
  }
  function cardOf(path, anchor) {
    const p = planOf(path);
    return p && p.cards.find((c) => c.anchor === anchor);
  }

  // ── the graph ──────────────────────────────────────────────────────────────────────────────────────
  const GW = 150;
  const GH = 34;
  const GX = 26;
  const GY = 40;

  /** Layered layout: each node one row below its deepest prerequisite, rows ordered by barycentre sweeps. */
  function layout(nodes, edges) {
    const idx = new Map(nodes.map((n, i) => [n.anchor, i]));
    const preds = nodes.map(() => []);
    const succs = nodes.map(() => []);
    for (const [a, b] of edges) {
      const i = idx.get(a);
      const j = idx.get(b);
      if (i === undefined || j === undefined || i === j) continue;
      preds[j].push(i);
      succs[i].push(j);
    }
    const rank = nodes.map(() => 0);
    const indeg = preds.map((p) => p.length);
    const queue = [];
    indeg.forEach((d, i) => d === 0 && queue.push(i));
    for (let q = 0; q < queue.length; q++) {
      const i = queue[q];
      for (const j of succs[i]) {
        rank[j] = Math.max(rank[j], rank[i] + 1);
        if (--indeg[j] === 0) queue.push(j);
      }
    }
    const rows = [];
    nodes.forEach((_, i) => (rows[rank[i]] ||= []).push(i));
    const pos = new Map();
    const place = () => rows.forEach((row) => row && row.forEach((i, k) => pos.set(i, k)));
    place();
    const bary = (row, nb) =>
      row
        .map((i, k) => {
          const ns = nb[i];
          return [i, ns.length ? ns.reduce((s, n) => s + pos.get(n), 0) / ns.length : k];
        })
        .sort((x, y) => x[1] - y[1])
        .map((x) => x[0]);
    for (let sweep = 0; sweep < 4; sweep++) {
      for (let r = 1; r < rows.length; r++) if (rows[r]) rows[r] = bary(rows[r], preds);
      place();
      for (let r = rows.length - 2; r >= 0; r--) if (rows[r]) rows[r] = bary(rows[r], succs);
      place();
    }
    const widest = Math.max(1, ...rows.map((r) => (r ? r.length : 0)));
    const xy = nodes.map(() => [0, 0]);
    rows.forEach((row, r) => {
      if (!row) return;
      const off = ((widest - row.length) * (GW + GX)) / 2;
      row.forEach((i, k) => (xy[i] = [10 + off + k * (GW + GX), 10 + r * (GH + GY)]));
    });
    return { xy, preds, width: 20 + widest * (GW + GX) - GX, height: 20 + rows.length * (GH + GY) - GY };
  }

  function nodeLane(p, n) {
    const c = p.cards.find((x) => x.anchor === n.anchor);
    if (c) return c.lane === 'blocked' ? 'pending' : c.lane;
    return n.status === 'completed'
      ? 'done'
      : n.status === 'claimed' || n.status === 'in_progress'
        ? 'running'
        : n.status === 'pending'
          ? 'pending'
          : 'needs_you';
  }

  async function showGraph(planPath) {
    const entry = planEls.get(planPath);
    const box = entry.el.querySelector('.graph');
    if (!box.hidden) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    box.innerHTML = '<p class="g-note">Reading the graph…</p>';
    const r = await api(`/api/graph?plan=${encodeURIComponent(planPath)}`);
    if (r.status !== 200) {
      box.innerHTML = `<p class="g-note">${esc((r.body && r.body.error && r.body.error.message) || 'no graph')}</p>`;
      return;
    }
    entry.graph = r.body;
    const p = planOf(planPath);
    const { nodes, edges } = r.body;
    const t0 = performance.now();
    const { xy, preds, width, height } = layout(nodes, edges);
    const titles = new Map(p.cards.map((c) => [c.anchor, c.title]));
    const paths = [];
    nodes.forEach((n, j) => {
      for (const i of preds[j]) {
        const [x1, y1] = xy[i];
        const [x2, y2] = xy[j];
        const a = [x1 + GW / 2, y1 + GH];
        const b = [x2 + GW / 2, y2];
        const m = (a[1] + b[1]) / 2;
        paths.push(`<path d="M${a[0]},${a[1]} C${a[0]},${m} ${b[0]},${m} ${b[0]},${b[1]}"/>`);
      }
    });
    const rects = nodes.map((n, i) => {
      const [x, y] = xy[i];
      const label = `${n.anchor.replace(/^step-/, '')} ${titles.get(n.anchor) || ''}`.trim();
      const short = label.length > 22 ? `${label.slice(0, 21)}…` : label;
      return `<g class="node" data-node="${esc(n.anchor)}" transform="translate(${x},${y})"><title>${esc(
        `${n.anchor} · ${n.status}${titles.get(n.anchor) ? ` · ${titles.get(n.anchor)}` : ''}`,
      )}</title><rect width="${GW}" height="${GH}" class="g-${nodeLane(p, n)}"/><text x="8" y="21">${esc(short)}</text></g>`;
    });
    box.innerHTML =
      `<p class="g-note">${nodes.length} steps · ${edges.length} dependencies (from tugcode state graph; laid out in ${Math.round(
        performance.now() - t0,
      )} ms) · <button type="button" data-copy-mermaid>Copy as Mermaid</button></p>` +
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="dependency graph">${paths.join('')}${rects.join('')}</svg>`;
    entry.graphKey = String(p.cards.length);
  }

  function colorGraph(p, entry) {
    if (String(p.cards.length) !== entry.graphKey) return; // the plan changed shape: reopen to lay it out again
    for (const g of entry.el.querySelectorAll('.graph [data-node]')) {
      const n = entry.graph.nodes.find((x) => x.anchor === g.dataset.node);
      const rect = g.querySelector('rect');
      const want = `g-${nodeLane(p, n)}`;
      if (rect.getAttribute('class') !== want) rect.setAttribute('class', want);
    }
  }

  // ── the step detail ────────────────────────────────────────────────────────────────────────────────
  let selected = null;
  let detailKey = '';
  let inflight = false;
  let again = false;
  let logName = '';
  let logText = '';

  function openDetail(plan, step) {
    selected = { plan, step, log: '' };
    logName = '';
    logText = '';
    $('d-log').textContent = '';
    $('d-body').innerHTML = '<p class="muted">Reading…</p>';
    $('detail').hidden = false;
    for (const el of document.querySelectorAll('.card.selected')) el.classList.remove('selected');
    const entry = planEls.get(plan);
    const card = entry && entry.cards.get(step);
    if (card) card.classList.add('selected');
    loadDetail();
  }

  function closeDetail() {
    selected = null;
    $('detail').hidden = true;
    for (const el of document.querySelectorAll('.card.selected')) el.classList.remove('selected');
  }

  async function loadDetail() {
    if (!selected) return;
    if (inflight) {
      again = true;
      return;
    }
    inflight = true;
    const want = selected;
    detailKey = JSON.stringify(cardOf(want.plan, want.step) || null);
    try {
      const q = new URLSearchParams({ plan: want.plan, step: want.step, conn, log: want.log || '' });
      const r = await api(`/api/step?${q}`);
      if (selected !== want) return;
      if (r.status !== 200) {
        $('d-body').innerHTML =
          `<p>${esc((r.body && r.body.error && r.body.error.message) || `error ${r.status}`)}</p>`;
        return;
      }
      renderDetail(r.body);
    } finally {
      inflight = false;
      if (again) {
        again = false;
        loadDetail();
      }
    }
  }

  function dl(rows) {
    const body = rows
      .filter((r) => r[1] !== null && r[1] !== undefined && r[1] !== '')
      .map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`)
      .join('');
    return `<dl>${body}</dl>`;
  }

  function renderDetail(d) {
    const p = planOf(d.plan_path);
    const c = cardOf(d.plan_path, d.step);
    const top = d.units.find((u) => u.anchor === d.step) || d.units[0];
    $('d-title').textContent = top ? `Step ${top.id}: ${top.title}` : d.step;
    const body = $('d-body');
    const open = new Set([...body.querySelectorAll('details[open][data-key]')].map((x) => x.dataset.key));
    const scroll = body.scrollTop;
    let h = '';
    if (c) {
      h += dl([
        [
          'status',
          `<span class="badge st-${cls(c.status)}">${esc(c.status)}</span> in ${esc(c.lane.replace('_', ' '))}`,
        ],
        ['owner', c.owner ? esc(`${ownerText(c)} (${c.owner.claimed_by})`) : ''],
        ['phase', esc(phaseText(c))],
        ['attempt', c.attempt ? `${c.attempt}${c.failures ? ` · ${c.failures} failed before` : ''}` : ''],
        ['lease', c.lease_expires_at ? `${tickUntil(c.lease_expires_at)} (${esc(c.lease_expires_at)})` : ''],
        ['heartbeat', c.heartbeat_at ? tickAge(c.heartbeat_at) : ''],
        ['last activity', c.last_activity_at ? tickAge(c.last_activity_at) : ''],
        ['depends on', esc(c.depends_on.join(', '))],
        ['waits for', esc(c.blocked_by.join(', '))],
        ['commit', c.commit ? `<code>${esc(c.commit)}</code>` : ''],
        ['usage', d.usage && d.usage.total ? `${fmtUsage(d.usage.total)}${fmtRoles(d.usage.by_role)}` : ''],
      ]);
      if (c.need)
        h += `<h3>Needs you: ${esc(c.need.kind.replace('_', ' '))}</h3><p>${esc(c.need.reason)}</p>${
          c.kept_commit
            ? `<p class="kept">kept commit <code>${esc(c.kept_commit.slice(0, 10))}</code>: --approve integrates it, --revise and --reject drop it</p>`
            : ''
        }<pre class="command">${esc(
          needCommands(c.need, false),
        )}</pre>${snap.allow_actions && c.need.actions.length ? `<div class="d-actions">${actionButtons(p, c).replace(/^<div class="card-actions">|<\/div>$/g, '')}</div>` : ''}`;
    }
    h += '<h3>Items</h3>';
    for (const u of d.units) {
      if (d.units.length > 1)
        h += `<p><b>${esc(u.anchor)}</b> ${esc(u.title)} <span class="badge st-${cls(u.status)}">${esc(u.status)}</span></p>`;
      h += u.items.length
        ? `<ul class="items">${u.items
            .map(
              (i) =>
                `<li class="i-${cls(i.status)}"><span class="muted">${esc(i.kind)}</span> ${esc(i.text)}${i.reason ? ` <span class="muted">(${esc(i.reason)})</span>` : ''}</li>`,
            )
            .join('')}</ul>`
        : '<p class="muted">no items</p>';
    }
    h += '<h3>Attempts</h3>';
    h += d.attempts.length
      ? `<table class="attempts"><tr><th>#</th><th class="a-owner">owner</th><th>started</th><th>outcome</th><th>usage</th></tr>${d.attempts
          .map(
            (a) =>
              `<tr data-attempt="${a.attempt}"><td>${a.attempt}</td><td class="mono">${esc(a.owner || '')}</td><td class="a-at" title="${esc(a.started_at)}">${esc(String(a.started_at || '').replace('T', ' '))}</td><td>${esc(a.outcome)}${a.reason ? `: ${esc(a.reason)}` : ''}${a.commit ? ` <code>${esc(a.commit.slice(0, 10))}</code>` : ''}</td><td class="a-usage">${a.usage ? fmtUsage(a.usage) : ''}${fmtRoles(a.by_role)}</td></tr>`,
          )
          .join('')}</table>`
      : '<p class="muted">not claimed yet</p>';
    h += `<h3>Artifacts (${d.artifacts.length})</h3>`;
    h += d.artifacts.length
      ? d.artifacts
          .map(
            (a) =>
              `<details class="artifact" data-key="a${a.id}"><summary><b>${esc(a.kind)}</b> ${esc(a.summary)} <span class="muted">${esc(
                a.step_anchor,
              )} · ${esc(a.recorded_at)}</span></summary>${a.content !== null ? `<pre>${esc(a.content)}${a.truncated ? '\n…' : ''}</pre>` : ''}</details>`,
          )
          .join('')
      : '<p class="muted">none (reviewer verdicts, conflict resolutions and reports appear here)</p>';
    h += `<details data-key="events"><summary>Events (${d.events.length})</summary><table>${d.events
      .map(
        (e) =>
          `<tr><td>${esc(e.at)}</td><td>${esc(e.command)}${e.attempt ? ` #${e.attempt}` : ''}</td><td class="mono">${esc(e.details)}</td></tr>`,
      )
      .join('')}</table></details>`;
    body.innerHTML = h;
    for (const x of body.querySelectorAll('details[data-key]')) if (open.has(x.dataset.key)) x.open = true;
    body.scrollTop = scroll;
    // The log: the files of this step, the one shown, its tail (its new lines then come on the event stream).
    const sel = $('d-logs');
    sel.innerHTML = d.logs
      .map((l) => `<option value="${esc(l.name)}">${esc(`${l.name} (${Math.ceil(l.size / 1024)} KiB)`)}</option>`)
      .join('');
    sel.hidden = d.logs.length === 0;
    $('d-log').hidden = !d.log;
    if (d.log) {
      sel.value = d.log.name;
      logName = d.log.name;
      setLog(d.log.text, d.log.cut);
    } else {
      logName = '';
      setLog('', false);
    }
    const mine = c && c.owner && c.owner.host && snap.backend.kind === 'postgres';
    $('d-log-note').textContent = d.log
      ? d.log.cut
        ? 'last 64 KiB'
        : ''
      : mine
        ? `no log on this machine (the step runs on ${c.owner.host})`
        : 'no log yet';
  }

  function setLog(text, cut) {
    const pre = $('d-log');
    const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    logText = text.length > LOG_MAX ? text.slice(text.indexOf('\n', text.length - LOG_MAX) + 1) : text;
    pre.textContent = (cut ? '…\n' : '') + logText;
    if (atEnd || !pre.dataset.seen) pre.scrollTop = pre.scrollHeight;
    pre.dataset.seen = '1';
  }

  function appendLog(m) {
    if (!selected || m.plan !== selected.plan || m.step !== selected.step || m.name !== logName) return;
    setLog(m.cut ? m.text : logText + m.text, m.cut || logText.length + m.text.length > LOG_MAX);
  }

  // ── actions ────────────────────────────────────────────────────────────────────────────────────────
  const ACTIONS = {
    reset: { title: 'Reset the failed step', field: null, flag: '' },
    release: { title: 'Release the claim', field: null, flag: '' },
    approve: { title: 'Approve the kept work', field: null, flag: '--approve' },
    revise: {
      title: 'Ask for a revision',
      field: ['notes', 'Notes for the next attempt (they join its brief)'],
      flag: '--revise',
    },
    reject: { title: 'Reject the step', field: ['reason', 'Why (the step becomes failed)'], flag: '--reject' },
  };

  function commandOf(act, plan, step, text) {
    const p = planOf(plan);
    const planArg = shq((p && p.slug) || plan);
    if (act === 'reset' || act === 'release') return `tugcode state reset ${planArg} ${shq(step)}`;
    const a = ACTIONS[act];
    return `tugcode state decide ${planArg} ${shq(step)} ${a.flag}${a.field ? ` ${shq(text || `<${a.field[0]}>`)}` : ''}`;
  }

  /** When a claim's lease ends, in the server's clock: the dialog says "ran out" only when it did. */
  function leaseWords(at) {
    const left = Date.parse(at) - serverNow();
    return left <= 0 ? `ran out at ${at}` : `holds until ${at}`;
  }

  /** The action the open confirmation is about (kept here: a `data-act` on the dialog would be a button). */
  let pending = null;

  function askAction(act, plan, step) {
    const a = ACTIONS[act];
    if (!a) return;
    const c = cardOf(plan, step);
    const dlg = $('confirm');
    $('c-title').textContent = a.title;
    $('c-text').textContent =
      act === 'release'
        ? `${step}'s claim${c && c.owner ? ` (${c.owner.claimed_by})` : ''}${
            c && c.lease_expires_at ? ` ${leaseWords(c.lease_expires_at)}` : ''
          }: releasing it discards its attempt and the step is pending again (a claim whose lease has not run out is refused). The same as:`
        : act === 'reset'
          ? `${step} returns to pending with its failures cleared, so the next run tries it again. The same as:`
          : `${step}: the same as`;
    const field = $('c-field');
    field.value = '';
    $('c-field-label').hidden = !a.field;
    $('c-field-name').textContent = a.field ? a.field[1] : '';
    field.required = Boolean(a.field);
    const update = () => {
      field.setCustomValidity('');
      $('c-command').textContent = commandOf(act, plan, step, field.value);
    };
    update();
    field.oninput = update;
    pending = { act, plan, step };
    dlg.showModal();
    if (a.field) field.focus();
    else $('c-ok').focus();
  }

  async function runAction(act, plan, step, text) {
    const body =
      act === 'reset' || act === 'release'
        ? { action: 'reset', plan, step }
        : {
            action: 'decide',
            plan,
            step,
            decision: act,
            ...(ACTIONS[act].field ? { [ACTIONS[act].field[0]]: text } : {}),
          };
    const r = await api('/api/action', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const env = r.body;
    if (env && env.status === 'ok') toast(`done: ${env.command} ${step}`);
    else if (env && env.error)
      toast(
        `${env.command || 'refused'}: ${env.error.code}: ${env.error.message}${env.error.hint ? ` — ${env.error.hint}` : ''}`,
        true,
      );
    else toast(`the action failed (HTTP ${r.status})`, true);
  }

  $('confirm-form').addEventListener('submit', (e) => {
    const text = $('c-field').value.trim();
    if (!pending) return;
    const field = ACTIONS[pending.act].field;
    if (field && text === '') {
      // Blanks pass the textarea's own `required`: say why nothing is sent (state decide refuses them too).
      e.preventDefault();
      $('c-field').setCustomValidity(`the ${field[0]} must be given, not only blanks`);
      $('c-field').reportValidity();
      $('c-field').focus();
      return;
    }
    const { act, plan, step } = pending;
    pending = null;
    runAction(act, plan, step, text);
  });
  $('c-cancel').addEventListener('click', () => $('confirm').close());
  $('confirm').addEventListener('close', () => (pending = null));

  // ── input ──────────────────────────────────────────────────────────────────────────────────────────
  document.addEventListener('click', (e) => {
    const t = e.target instanceof Element ? e.target : null;
    if (!t) return;
    const act = t.closest('[data-act]');
    if (act) {
      e.stopPropagation();
      askAction(act.dataset.act, act.dataset.plan, act.dataset.step);
      return;
    }
    const graphBtn = t.closest('[data-graph]');
    if (graphBtn) {
      showGraph(graphBtn.closest('.plan').dataset.plan);
      return;
    }
    const copy = t.closest('[data-copy-mermaid]');
    if (copy) {
      const entry = planEls.get(copy.closest('.plan').dataset.plan);
      if (navigator.clipboard && entry.graph)
        navigator.clipboard.writeText(entry.graph.text).then(
          () => toast('Mermaid text copied'),
          () => toast('the browser refused the clipboard', true),
        );
      return;
    }
    const node = t.closest('[data-node]');
    if (node) {
      openDetail(node.closest('.plan').dataset.plan, node.dataset.node);
      return;
    }
    const card = t.closest('.card');
    if (card) openDetail(card.dataset.plan, card.dataset.step);
  });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && selected && !$('confirm').open) closeDetail();
    const card = e.target instanceof Element && e.target.closest('.card');
    if (card && (e.key === 'Enter' || e.key === ' ') && e.target === card) {
      e.preventDefault();
      openDetail(card.dataset.plan, card.dataset.step);
    }
  });
  $('d-close').addEventListener('click', closeDetail);
  $('d-logs').addEventListener('change', (e) => {
    if (!selected) return;
    selected.log = e.target.value;
    loadDetail();
  });

  connect();
})();
