// SPDX-License-Identifier: Apache-2.0
// Tally's web console (docs/console.md): plain JavaScript, SVG charts, the broker's JSON API
// at /api/ and its Prometheus text at /metrics. Views are chosen by the URL's #fragment
// (#records?topic=t&partition=0 opens the record browser there).
'use strict';

const view = document.getElementById('view');
let overview = null; // the last /api/overview
let timer = null;

function esc(s) {
  return String(s).replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

async function api(path, opts) {
  const r = await fetch(path, opts);
  const body = await r.json().catch(() => ({ error: 'not JSON' }));
  if (!r.ok) {
    const e = new Error(body.error || ('HTTP ' + r.status));
    e.status = r.status;
    throw e;
  }
  return body;
}

function table(id, head, rows) {
  return '<table id="' + id + '"><thead><tr>' + head.map(h => '<th>' + esc(h) + '</th>').join('') +
    '</tr></thead><tbody>' + rows.join('') + '</tbody></table>';
}

function td(v, cls) {
  return '<td' + (cls ? ' class="' + cls + '"' : '') + '>' + esc(v) + '</td>';
}

function ago(ms) {
  if (ms < 0) return '?';
  const s = Math.round(ms / 1000);
  return s < 120 ? s + ' s' : Math.round(s / 60) + ' min';
}

function bytes(n) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + ' ' + u[i];
}

// An SVG line chart of series [{name, color, points: [[t, v], ...]}].
function chart(id, series, w = 560, h = 160) {
  const all = series.flatMap(s => s.points);
  if (all.length < 2) return '<svg id="' + id + '" class="chart" width="' + w + '" height="' + h + '"><text x="10" y="20">collecting samples…</text></svg>';
  const t0 = Math.min(...all.map(p => p[0])), t1 = Math.max(...all.map(p => p[0]));
  const vmax = Math.max(1e-9, ...all.map(p => p[1]));
  const x = t => 40 + (t1 > t0 ? (t - t0) / (t1 - t0) : 0) * (w - 50);
  const y = v => h - 20 - (v / vmax) * (h - 35);
  let out = '<svg id="' + id + '" class="chart" width="' + w + '" height="' + h + '" viewBox="0 0 ' + w + ' ' + h + '">';
  out += '<text x="4" y="14" font-size="11">' + esc(vmax.toPrecision(3)) + '</text><text x="4" y="' + (h - 22) + '" font-size="11">0</text>';
  out += '<text x="40" y="' + (h - 4) + '" font-size="11">' + esc(Math.round((t1 - t0) / 1000)) + ' s shown</text>';
  series.forEach((s, i) => {
    out += '<polyline stroke="' + s.color + '" points="' + s.points.map(p => x(p[0]).toFixed(1) + ',' + y(p[1]).toFixed(1)).join(' ') + '"/>';
    out += '<text x="' + (w - 200) + '" y="' + (14 + 12 * i) + '" font-size="11" fill="' + s.color + '">' + esc(s.name) + '</text>';
  });
  return out + '</svg>';
}

const COLORS = ['#1d70b8', '#d4351c', '#00703c', '#f47738', '#4c2c92', '#b58840'];

// ---- samples kept in the page every 2 s: throughput, p99, lag (the last 10 minutes) ------

const RING = 300; // 10 minutes of samples every 2 s
const samples = { t: [], bin: [], bout: [], p99: [] };
const lagRing = new Map(); // "group|topic|partition" -> [[t, lag], ...]
let lastMetrics = null;

function parseMetrics(text) {
  const m = { bin: 0, bout: 0, buckets: new Map() };
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line) continue;
    const sp = line.lastIndexOf(' ');
    const name = line.slice(0, sp), v = Number(line.slice(sp + 1));
    if (name.startsWith('tally_topic_bytes_in_total')) m.bin += v;
    else if (name.startsWith('tally_topic_bytes_out_total')) m.bout += v;
    else if (name.startsWith('tally_request_total_seconds_bucket')) {
      const le = /le="([^"]+)"/.exec(name);
      if (le) m.buckets.set(le[1], (m.buckets.get(le[1]) || 0) + v);
    }
  }
  return m;
}

// The 99th percentile of the requests between two scrapes, from the cumulative buckets.
function p99(prev, cur) {
  const les = [...cur.buckets.keys()].sort((a, b) => Number(a) - Number(b));
  const d = les.map(le => [le, cur.buckets.get(le) - (prev.buckets.get(le) || 0)]);
  const total = d.length ? d[d.length - 1][1] : 0;
  if (total <= 0) return 0;
  const want = total * 0.99;
  for (const [le, n] of d) if (n >= want) return le === '+Inf' ? Number(les[les.length - 2]) : Number(le);
  return 0;
}

async function sample() {
  const now = Date.now();
  try {
    const text = await (await fetch('/metrics')).text();
    const m = parseMetrics(text);
    if (lastMetrics) {
      const dt = (now - lastMetrics.t) / 1000;
      push(samples.t, now);
      push(samples.bin, Math.max(0, (m.bin - lastMetrics.m.bin) / dt));
      push(samples.bout, Math.max(0, (m.bout - lastMetrics.m.bout) / dt));
      push(samples.p99, p99(lastMetrics.m, m));
    }
    lastMetrics = { t: now, m };
    const g = await api('/api/groups');
    for (const grp of g.groups)
      for (const o of grp.offsets)
        if (o.lag !== undefined) {
          const k = grp.group + '|' + o.topic + '|' + o.partition;
          if (!lagRing.has(k)) lagRing.set(k, []);
          push(lagRing.get(k), [now, o.lag]);
        }
    document.getElementById('status').textContent = 'updated ' + new Date(now).toLocaleTimeString();
  } catch (e) {
    document.getElementById('status').textContent = 'broker not answering: ' + e.message;
  }
}

function push(a, v) {
  a.push(v);
  if (a.length > RING) a.shift();
}

// ---- views -------------------------------------------------------------------------------

async function viewOverview() {
  const o = await api('/api/overview');
  overview = o;
  const card = (k, v, id) => '<div class="card" id="' + id + '">' + esc(k) + '<b>' + esc(v) + '</b></div>';
  const last = a => a.length ? a[a.length - 1] : 0;
  let h = '<h2>Overview</h2><div class="cards" id="overview-counts">' +
    card('controller', o.controller_id, 'card-controller') +
    card('brokers', o.brokers.length, 'card-brokers') +
    card('topics', o.topics, 'card-topics') +
    card('partitions', o.partitions, 'card-partitions') +
    card('groups', o.groups, 'card-groups') +
    card('ongoing transactions', o.ongoing_transactions, 'card-txns') +
    card('bytes in/s', bytes(Math.round(last(samples.bin))), 'card-bin') +
    card('bytes out/s', bytes(Math.round(last(samples.bout))), 'card-bout') +
    card('request p99', (last(samples.p99) * 1000).toFixed(2) + ' ms', 'card-p99') + '</div>';
  h += '<h3>Brokers</h3>' + table('brokers-table', ['id', 'host', 'port', 'rack', 'fenced', 'role'],
    o.brokers.map(b => '<tr>' + td(b.id) + td(b.host) + td(b.port, 'num') + td(b.rack || '') + td(b.fenced) +
      td(b.id === o.controller_id ? 'controller' : '') + '</tr>'));
  const pts = a => a.map((v, i) => [samples.t[i], v]);
  h += '<h3>Throughput (bytes/s)</h3>' + chart('chart-throughput', [
    { name: 'in', color: COLORS[0], points: pts(samples.bin) },
    { name: 'out', color: COLORS[1], points: pts(samples.bout) }]);
  h += '<h3>Request latency p99 (s)</h3>' + chart('chart-p99', [{ name: 'p99, all requests', color: COLORS[2], points: pts(samples.p99) }]);
  return h;
}

async function viewTopics() {
  const t = await api('/api/topics');
  let h = '<h2>Topics</h2>' + table('topics-table', ['topic', 'partitions', 'records', 'size', 'retention'],
    t.topics.map(x => '<tr>' + '<td><a href="#topic?name=' + encodeURIComponent(x.name) + '">' + esc(x.name) + '</a></td>' +
      td(x.partitions, 'num') + td(x.records, 'num') + td(bytes(x.size_bytes), 'num') +
      td(x.retention_ms < 0 ? 'forever' : ago(x.retention_ms)) + '</tr>'));
  h += '<h3>Create a topic</h3><form id="create-topic"><input name="name" placeholder="name" required>' +
    '<input name="partitions" type="number" min="1" value="1"> partitions ' +
    '<input name="rf" type="number" min="1" value="1"> replicas <button>Create</button><span id="create-result"></span></form>';
  return h;
}

async function viewTopic(q) {
  const t = await api('/api/topics/' + encodeURIComponent(q.get('name')));
  let h = '<h2>Topic ' + esc(t.name) + '</h2><p>retention.ms ' + esc(t.retention_ms) + ', retention.bytes ' +
    esc(t.retention_bytes) + ', cleanup.policy ' + esc(t.cleanup_policy) + '</p>';
  h += table('partitions-table', ['partition', 'leader', 'replicas', 'ISR', 'log start', 'HW', 'LSO', 'LEO', 'size', 'segments', ''],
    t.partitions.map(p => '<tr>' + td(p.partition) + td(p.leader) + td(p.replicas.join(',')) + td(p.isr.join(',')) +
      td(p.log_start_offset ?? '', 'num') + td(p.high_watermark ?? '', 'num') + td(p.last_stable_offset ?? '', 'num') +
      td(p.log_end_offset ?? '', 'num') + td(p.size_bytes !== undefined ? bytes(p.size_bytes) : '', 'num') +
      td(p.segments ?? '', 'num') + '<td><a href="#records?topic=' + encodeURIComponent(t.name) + '&partition=' + p.partition +
      '">records</a></td></tr>'));
  const cfg = Object.entries(t.configs);
  h += '<h3>Configs set on the topic</h3>' + (cfg.length ? table('configs-table', ['key', 'value'],
    cfg.map(([k, v]) => '<tr>' + td(k) + td(v) + '</tr>')) : '<p>none (broker defaults)</p>');
  return h;
}

function decode(b64, fmt) {
  if (b64 === null || b64 === undefined) return 'null';
  const bin = atob(b64);
  const u8 = Uint8Array.from(bin, c => c.charCodeAt(0));
  if (fmt === 'hex') return Array.from(u8, b => b.toString(16).padStart(2, '0')).join(' ');
  const text = new TextDecoder('utf-8', { fatal: false }).decode(u8);
  if (fmt === 'json') {
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text + '  (not JSON)'; }
  }
  return text;
}

async function viewRecords(q) {
  const topics = (await api('/api/topics')).topics;
  const topic = q.get('topic') || (topics.find(t => !t.internal) || topics[0] || {}).name || '';
  const fmt = q.get('format') || 'text';
  const iso = q.get('isolation') || 'read_uncommitted';
  let h = '<h2>Records</h2><form id="records-form">' +
    '<select name="topic">' + topics.map(t => '<option' + (t.name === topic ? ' selected' : '') + '>' + esc(t.name) + '</option>').join('') + '</select>' +
    'partition <input name="partition" type="number" min="0" value="' + esc(q.get('partition') || 0) + '">' +
    'offset <input name="offset" type="number" value="' + esc(q.get('offset') || '') + '" placeholder="earliest">' +
    'or time <input name="time" type="datetime-local" value="' + esc(q.get('time') || '') + '">' +
    '<select name="isolation"><option' + (iso === 'read_uncommitted' ? ' selected' : '') + '>read_uncommitted</option><option' +
    (iso === 'read_committed' ? ' selected' : '') + '>read_committed</option></select>' +
    '<select name="format">' + ['text', 'json', 'hex'].map(f => '<option' + (f === fmt ? ' selected' : '') + '>' + f + '</option>').join('') + '</select>' +
    'max <input name="max" type="number" min="1" max="500" value="' + esc(q.get('max') || 50) + '"><button>Read</button></form>';
  if (!topic) return h + '<p>no topics</p>';
  const args = new URLSearchParams({ topic, partition: q.get('partition') || 0, isolation: iso, max: q.get('max') || 50 });
  if (q.get('offset')) args.set('offset', q.get('offset'));
  else if (q.get('time')) args.set('time', new Date(q.get('time')).getTime());
  let r;
  try { r = await api('/api/records?' + args); } catch (e) { return h + '<p class="error">' + esc(e.message) + '</p>'; }
  h += '<p>' + esc(r.isolation) + ' from offset ' + esc(r.from) + ' (log start ' + esc(r.log_start_offset) + ', HW ' +
    esc(r.high_watermark) + ', LSO ' + esc(r.last_stable_offset) + '); ' + esc(r.records.length) + ' shown, ' +
    esc(r.aborted_skipped) + ' aborted hidden, ' + esc(bytes(r.bytes_read)) + ' read, stopped at ' + esc(r.stopped) + '</p>';
  h += table('records-table', ['offset', 'timestamp', 'key', 'value', 'headers', 'producer'],
    r.records.map(x => x.control
      ? '<tr class="marker" data-control="' + esc(x.control) + '">' + td(x.offset, 'num') + td(new Date(x.timestamp).toISOString()) +
        '<td colspan="3">' + esc(x.control) + ' marker</td>' + td(x.producer_id + '/' + x.producer_epoch) + '</tr>'
      : '<tr data-offset="' + esc(x.offset) + '">' + td(x.offset, 'num') + td(new Date(x.timestamp).toISOString()) +
        '<td class="key"><pre>' + esc(decode(x.key, fmt)) + '</pre></td><td class="value"><pre>' + esc(decode(x.value, fmt)) + '</pre></td>' +
        td(x.headers.map(hd => hd.key + '=' + decode(hd.value, fmt)).join(', ')) +
        td(x.producer_id !== undefined ? x.producer_id + '/' + x.producer_epoch + (x.transactional ? ' txn' : '') : '') + '</tr>'));
  if (r.next_offset < (iso === 'read_committed' ? r.last_stable_offset : r.high_watermark)) {
    const n = new URLSearchParams(q);
    n.set('topic', topic);
    n.set('offset', r.next_offset);
    h += '<p><a id="records-next" href="#records?' + esc(n) + '">next from ' + esc(r.next_offset) + '</a></p>';
  }
  return h;
}

async function viewGroups() {
  const g = await api('/api/groups');
  let h = '<h2>Consumer groups</h2>' + table('groups-table', ['group', 'state', 'members', 'total lag', ''],
    g.groups.map(x => '<tr>' + td(x.group) + td(x.state) + td(x.members, 'num') + td(x.total_lag, 'num') +
      '<td><button data-reset="' + esc(x.group) + '"' + (x.state === 'Empty' ? '' : ' disabled title="only an empty group"') +
      '>reset offsets</button></td></tr>'));
  for (const x of g.groups) {
    h += '<h3>' + esc(x.group) + '</h3>';
    if (x.member_list.length)
      h += table('members-' + x.group, ['member', 'instance', 'client id', 'host', 'assignment'],
        x.member_list.map(m => '<tr>' + td(m.member_id) + td(m.group_instance_id || '') + td(m.client_id) + td(m.client_host) +
          td(m.assignment.map(a => a.topic + ': ' + a.partitions.join(',')).join('; ') ||
            (m.assignment_bytes ? m.assignment_bytes + ' bytes (not the consumer protocol)' : '')) + '</tr>'));
    h += table('lag-' + x.group, ['topic', 'partition', 'committed', 'HW', 'LSO', 'lag', 'lag (read_committed)'],
      x.offsets.map(o => '<tr>' + td(o.topic) + td(o.partition) + td(o.committed, 'num') + td(o.high_watermark ?? '', 'num') +
        td(o.last_stable_offset ?? '', 'num') + td(o.lag ?? '', 'num') + td(o.lag_stable ?? '', 'num') + '</tr>'));
    const series = x.offsets.filter(o => lagRing.has(x.group + '|' + o.topic + '|' + o.partition)).slice(0, COLORS.length)
      .map((o, i) => ({ name: o.topic + '-' + o.partition, color: COLORS[i], points: lagRing.get(x.group + '|' + o.topic + '|' + o.partition) }));
    h += chart('lag-chart-' + x.group, series);
  }
  return h;
}

async function viewTransactions() {
  const t = await api('/api/transactions');
  let h = '<h2>Transactions</h2>' + table('txn-table', ['transactional id', 'state', 'producer', 'age', 'timeout', 'partitions'],
    t.transactions.map(x => '<tr>' + td(x.transactional_id) + td(x.state) + td(x.producer_id + '/' + x.producer_epoch) +
      td(x.age_ms ? ago(x.age_ms) : '') + td(ago(x.timeout_ms)) + td(x.partitions.map(p => p.topic + '-' + p.partition).join(', ')) + '</tr>'));
  h += '<h3>Partitions held by open transactions</h3><p>The producer whose transaction starts at a partition\'s last stable offset holds it: ' +
    'read_committed consumers wait for it. Hanging: no coordinator here has it open and it is older than ' + esc(ago(t.hanging_after_ms)) + '.</p>';
  h += table('held-table', ['partition', 'LSO', 'HW', 'first offset', 'holds LSO', 'producer', 'transactional id', 'since', 'age', 'hanging', ''],
    t.held_partitions.map(x => '<tr' + (x.hanging ? ' class="hanging"' : '') + '>' + td(x.topic + '-' + x.partition) +
      td(x.last_stable_offset, 'num') + td(x.high_watermark, 'num') + td(x.first_offset, 'num') + td(x.holds_lso ? 'yes' : 'no') +
      td(x.producer_id + '/' + x.producer_epoch) + td(x.transactional_id ?? '(another coordinator)') +
      td(x.since_ms >= 0 ? new Date(x.since_ms).toISOString() : '?') + td(ago(x.age_ms)) + td(x.hanging ? 'HANGING' : 'no') +
      '<td><button data-abort="' + esc(JSON.stringify({ topic: x.topic, partition: x.partition, producer_id: x.producer_id })) + '"' +
      (x.coordinator_open ? ' title="open at its coordinator: the broker will refuse"' : '') + '>abort</button></td></tr>'));
  return h;
}

async function viewProducers() {
  const p = await api('/api/producers');
  return '<h2>Idempotent and transactional producers</h2>' + table('producers-table',
    ['partition', 'producer id', 'epoch', 'transactional id', 'last sequence', 'last offset', 'last write', 'open transaction from'],
    p.producers.map(x => '<tr>' + td(x.topic + '-' + x.partition) + td(x.producer_id) + td(x.producer_epoch) + td(x.transactional_id || '') +
      td(x.last_sequence, 'num') + td(x.last_offset, 'num') + td(x.last_timestamp >= 0 ? new Date(x.last_timestamp).toISOString() : '') +
      td(x.current_txn_first_offset >= 0 ? x.current_txn_first_offset : '') + '</tr>'));
}

const VIEWS = {
  overview: [viewOverview, true], topics: [viewTopics, false], topic: [viewTopic, false], records: [viewRecords, false],
  groups: [viewGroups, true], transactions: [viewTransactions, true], producers: [viewProducers, true],
};

async function render() {
  const hash = location.hash.slice(1) || 'overview';
  const [name, query] = hash.split('?');
  const v = VIEWS[name] || VIEWS.overview;
  const q = new URLSearchParams(query || '');
  for (const a of document.querySelectorAll('header nav a'))
    a.classList.toggle('active', a.id === 'nav-' + (name === 'topic' ? 'topics' : name));
  try {
    view.innerHTML = await v[0](q);
    view.dataset.loaded = name;
  } catch (e) {
    view.innerHTML = '<p class="error" id="view-error">' + esc(e.message) + '</p>';
    view.dataset.loaded = name;
  }
  clearTimeout(timer);
  if (v[1]) timer = setTimeout(render, 2000);
}

// ---- actions (refused with 403 unless console.write.enable=true) --------------------------

async function post(path, body, out) {
  try {
    const r = await api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    out.textContent = 'done: ' + JSON.stringify(r);
    out.className = 'ok';
  } catch (e) {
    out.textContent = 'refused (' + (e.status || '?') + '): ' + e.message;
    out.className = 'error';
  }
  out.id = 'action-result';
}

view.addEventListener('submit', ev => {
  ev.preventDefault();
  const f = ev.target;
  if (f.id === 'records-form') {
    const q = new URLSearchParams(new FormData(f));
    for (const [k, v] of [...q]) if (v === '') q.delete(k);
    location.hash = 'records?' + q;
  } else if (f.id === 'create-topic') {
    const name = f.name.value;
    if (!confirm('Create topic "' + name + '" with ' + f.partitions.value + ' partition(s)?')) return;
    post('/api/topics', { name, partitions: Number(f.partitions.value), replication_factor: Number(f.rf.value) },
      document.getElementById('create-result'));
  }
});

view.addEventListener('click', ev => {
  const b = ev.target.closest('button');
  if (!b) return;
  let out = document.getElementById('action-result');
  if (!out) {
    out = document.createElement('p');
    view.prepend(out);
  }
  if (b.dataset.abort) {
    const a = JSON.parse(b.dataset.abort);
    if (!confirm('Abort producer ' + a.producer_id + '\'s transaction on ' + a.topic + '-' + a.partition + '? Its records will be hidden from read_committed consumers.')) return;
    clearTimeout(timer);
    post('/api/transactions/abort', a, out);
  } else if (b.dataset.reset) {
    if (!confirm('Reset the offsets of group "' + b.dataset.reset + '" to the earliest?')) return;
    clearTimeout(timer);
    post('/api/groups/' + encodeURIComponent(b.dataset.reset) + '/reset-offsets', { to: 'earliest' }, out);
  }
});

window.addEventListener('hashchange', render);
api('/api/overview').then(o => {
  document.getElementById('mode').textContent = o.write_enabled ? 'writes enabled' : 'read-only';
}).catch(() => {});
sample();
setInterval(sample, 2000);
render();
