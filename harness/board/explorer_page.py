"""The style and script of ``explorer.html`` (:mod:`harness.explorer` embeds the data).

Plain DOM code, no library: the page must open from a file on a machine without network. The data
are inflated with the browser's own ``DecompressionStream`` (Chromium 80, Firefox 113, Safari 16.4).
"""

CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:20px;color:#222}h1{font-size:19px;margin:0 0 4px}
h2{font-size:17px;margin:6px 0}h3{font-size:15px;margin:14px 0 4px}h4{font-size:13px;margin:10px 0 2px;color:#555}
.note{color:#666}#controls{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin:10px 0;padding:8px;
background:#f6f6f6;border:1px solid #e2e2e2}#controls label{white-space:nowrap}
#main{display:grid;grid-template-columns:minmax(380px,45%) 1fr;gap:16px;align-items:start}
#list{max-height:85vh;overflow:auto;border:1px solid #e2e2e2}
table{border-collapse:collapse}td,th{padding:2px 6px;border-bottom:1px solid #eee;vertical-align:top}
#list th{position:sticky;top:0;background:#f4f4f4;cursor:pointer;font-weight:600}
#list td.q{max-width:340px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
#list td.v{text-align:right;font-variant-numeric:tabular-nums;min-width:34px}
#list tr.sel{outline:2px solid #1b6ca8}#list tbody tr{cursor:pointer}#list tbody tr:hover{background:#fafafa}
td.undefined{color:#999}td.error{color:#d1495b;font-weight:600}
section.variant{border:1px solid #ddd;border-radius:4px;padding:6px 10px;margin:10px 0}
section.variant h3{margin-top:2px}ol.ctx{padding-left:26px;margin:4px 0}ol.ctx li{margin:4px 0}
ol.ctx li.beyond{color:#888}ol.ctx li.cutline{list-style:none;margin-left:-26px;border-top:2px dashed #d1495b;
color:#d1495b;font-size:12px;padding-top:2px}mark{background:#ffe08a}li.beyond mark{background:#f3e9c6}
span.trimmed{color:#aaa;text-decoration:line-through}.meta{color:#777;font-size:12px}
table.scores td{font-size:13px}table.scores td.val{text-align:right;font-variant-numeric:tabular-nums}
details{margin:0}summary{cursor:pointer;color:#1b6ca8}pre{white-space:pre-wrap;font-size:12px;margin:2px 0;
max-width:760px}table.claims td{font-size:12px}.answer{background:#f7f9fc;padding:4px 8px;border-left:3px solid
#1b6ca8}.pick label{margin-right:10px;font-size:12px}.worse{color:#d1495b}.better{color:#2e933c}"""

JS = r"""(async function () {
'use strict';
const $ = (s, el) => (el || document).querySelector(s);
const esc = s => String(s == null ? '' : s).replace(/[&<>"']/g,
  c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
const statusEl = $('#status');
let D;
try {
  if (typeof DecompressionStream === 'undefined')
    throw new Error('this browser cannot inflate the embedded data (it needs DecompressionStream: ' +
                    'a current Chromium, Firefox or Safari)');
  // The browser decodes the base64 itself (a data: URL read with fetch), far faster than a loop in JS.
  const packed = await fetch('data:application/octet-stream;base64,' + $('#data').textContent.trim());
  const stream = packed.body.pipeThrough(new DecompressionStream('gzip'));
  D = JSON.parse(await new Response(stream).text());
} catch (e) {
  statusEl.textContent = 'Cannot read the data: ' + e.message;
  return;
}
statusEl.textContent = '';
const V = D.variants, Q = D.questions;
const S = {metric: D.sort_by, kind: '', text: '', a: -1, b: -1, only: false, sort: 'order', q: null,
           shown: new Set(V.slice(0, Math.min(3, V.length)).map((v, i) => i))};
const kinds = [...new Set(Q.map(q => q.kind).filter(Boolean))].sort();

function score(vi, qid, metric) {
  const c = D.cells[vi][qid];
  const s = c && c.scores[metric || S.metric];
  return s ? {value: s[0], status: s[1], why: s[2] == null ? null : D.whys[s[2]]} : null;
}
function fmt(x) { return x == null ? '' : (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(3)); }
function worse(x, y, metric) {  // x worse than y on metric
  return D.higher[metric] === false ? x > y : x < y;
}
function shade(x, metric) {
  if (x == null || x < 0 || x > 1) return '';
  const g = D.higher[metric] === false ? 1 - x : x;
  return 'background:hsl(' + Math.round(g * 120) + ',60%,' + Math.round(92 - 10 * Math.abs(g - 0.5)) + '%)';
}

function controls() {
  const opt = (v, t, sel) => '<option value="' + esc(v) + '"' + (sel ? ' selected' : '') + '>' + esc(t) + '</option>';
  const vopts = sel => opt(-1, '—', sel === -1) + V.map((v, i) => opt(i, '#' + v.rank + ' ' + v.label, sel === i)).join('');
  $('#controls').innerHTML =
    '<label>metric <select id="metric">' + D.metrics.map(m => opt(m, m, m === S.metric)).join('') + '</select></label>' +
    (kinds.length ? '<label>kind <select id="kind">' + opt('', 'all') + kinds.map(k => opt(k, k)).join('') +
      '</select></label>' : '') +
    '<label>find <input id="text" size="18" placeholder="words of the question"></label>' +
    '<label>A <select id="va">' + vopts(S.a) + '</select></label>' +
    '<label>B <select id="vb">' + vopts(S.b) + '</select></label>' +
    '<label><input type="checkbox" id="only"> only where A loses to B</label>' +
    '<label>sort <select id="sort">' + opt('order', 'test-set order') + opt('diff', 'A − B, A worst first') +
    opt('hard', 'mean over variants, worst first') + '</select></label>' +
    '<span class="note" id="count"></span>';
  const on = (id, ev, f) => $('#' + id) && $('#' + id).addEventListener(ev, f);
  on('metric', 'change', e => { S.metric = e.target.value; list(); detail(); });
  on('kind', 'change', e => { S.kind = e.target.value; list(); });
  on('text', 'input', e => { S.text = e.target.value.toLowerCase(); list(); });
  on('va', 'change', e => { S.a = +e.target.value; pickAB(); list(); detail(); });
  on('vb', 'change', e => { S.b = +e.target.value; pickAB(); list(); detail(); });
  on('only', 'change', e => { S.only = e.target.checked; list(); });
  on('sort', 'change', e => { S.sort = e.target.value; list(); });
}
function pickAB() {
  if (S.a >= 0 || S.b >= 0) S.shown = new Set([S.a, S.b].filter(i => i >= 0));
  if (S.a >= 0 && S.b >= 0 && S.sort === 'order') { S.sort = 'diff'; $('#sort').value = 'diff'; }
}

function rowsShown() {
  let rows = Q.filter(q => (!S.kind || q.kind === S.kind) &&
    (!S.text || (q.question + ' ' + q.id).toLowerCase().includes(S.text)));
  const ab = q => { const a = score(S.a, q.id), b = score(S.b, q.id);
    return a && b && a.status === 'ok' && b.status === 'ok' ? [a.value, b.value] : null; };
  if (S.only && S.a >= 0 && S.b >= 0) rows = rows.filter(q => { const x = ab(q); return x && worse(x[0], x[1], S.metric); });
  const sign = D.higher[S.metric] === false ? -1 : 1;
  if (S.sort === 'diff' && S.a >= 0 && S.b >= 0) {
    const d = q => { const x = ab(q); return x ? sign * (x[0] - x[1]) : Infinity; };
    rows = rows.slice().sort((p, q) => d(p) - d(q));
  } else if (S.sort === 'hard') {
    const m = q => { const xs = V.map((v, i) => score(i, q.id)).filter(s => s && s.status === 'ok').map(s => s.value);
      return xs.length ? sign * xs.reduce((a, b) => a + b, 0) / xs.length : Infinity; };
    rows = rows.slice().sort((p, q) => m(p) - m(q));
  }
  return rows;
}

function list() {
  const rows = rowsShown();
  $('#count').textContent = rows.length + ' of ' + Q.length + ' questions';
  const head = '<tr><th>id</th>' + (kinds.length ? '<th>kind</th>' : '') + '<th>question</th>' +
    V.map((v, i) => '<th title="' + esc(v.label) + '">' + v.rank + '</th>').join('') + '</tr>';
  const body = rows.map(q => '<tr data-q="' + esc(q.id) + '"' + (q.id === S.q ? ' class="sel"' : '') + '><td>' +
    esc(q.id) + '</td>' + (kinds.length ? '<td>' + esc(q.kind) + '</td>' : '') + '<td class="q" title="' +
    esc(q.question) + '">' + esc(q.question) + '</td>' + V.map((v, i) => {
      const s = score(i, q.id);
      if (!s) return '<td class="v"></td>';
      if (s.status !== 'ok') return '<td class="v ' + esc(s.status) + '" title="' + esc(s.status) + '">' +
        (s.status === 'error' ? '!' : '–') + '</td>';
      return '<td class="v" style="' + shade(s.value, S.metric) + '">' + fmt(s.value) + '</td>';
    }).join('') + '</tr>').join('');
  $('#list').innerHTML = '<table><thead>' + head + '</thead><tbody>' + body + '</tbody></table>';
  $('#list tbody').addEventListener('click', e => {
    const tr = e.target.closest('tr'); if (tr) open(tr.dataset.q);
  });
}

function marked(text, ranges, kept) {
  // Cut the text at every boundary of an evidence range and of the kept part; mark each piece.
  const cuts = new Set([0, text.length]);
  ranges.forEach(r => { cuts.add(Math.max(0, r[0])); cuts.add(Math.min(text.length, r[1])); });
  if (kept) { cuts.add(kept[0]); cuts.add(kept[1]); }
  const at = [...cuts].filter(x => x >= 0 && x <= text.length).sort((a, b) => a - b);
  let out = '';
  for (let i = 0; i + 1 < at.length; i++) {
    const s = at[i], e = at[i + 1];
    if (e <= s) continue;
    let piece = esc(text.slice(s, e));
    if (ranges.some(r => r[0] <= s && e <= r[1])) piece = '<mark>' + piece + '</mark>';
    if (kept && (e <= kept[0] || s >= kept[1])) piece = '<span class="trimmed">' + piece + '</span>';
    out += piece;
  }
  return out;
}

function explanation(why) {
  if (why == null) return '';
  const claims = [].concat(why.claims || [], why.answer_claims || [], why.reference_claims || []);
  let html = '';
  if (claims.length && typeof claims[0] === 'object') {
    html += '<table class="claims"><tr><th>claim</th><th>verdict</th><th>p</th><th>why</th></tr>' +
      claims.map(c => '<tr><td>' + esc(c.claim || c.statement || '') + '</td><td>' + esc(c.verdict || '') +
        '</td><td>' + (typeof c.p_supported === 'number' ? c.p_supported.toFixed(2) : '') + '</td><td>' +
        esc(c.reason || c.evidence || '') + '</td></tr>').join('') + '</table>';
  }
  const rest = Object.assign({}, why); delete rest.claims; delete rest.answer_claims; delete rest.reference_claims;
  if (Object.keys(rest).length) html += '<pre>' + esc(JSON.stringify(rest, null, 1)) + '</pre>';
  return '<details><summary>why</summary>' + html + '</details>';
}

function variantBlock(vi, q) {
  const v = V[vi], c = D.cells[vi][q.id];
  if (!c) return '<section class="variant"><h3>#' + v.rank + ' ' + esc(v.label) + '</h3><p class="note">not run on this question</p></section>';
  const ranked = (D.jobs[v.job].retrieved[q.id] || []);
  const n = c.n == null ? ranked.length : c.n;
  let ctx = '';
  ranked.forEach((r, i) => {
    const ch = D.chunks[r[0]];
    if (i === n && i > 0) ctx += '<li class="cutline">cut (' + esc(v.cut || 'all') + '): below this line, not passed on</li>';
    const kept = (i === n - 1 && c.kept) ? c.kept : null;
    ctx += '<li value="' + (i + 1) + '" class="' + (i < n ? 'passed' : 'beyond') + '"><span class="meta">' + r[1] + ' · ' + esc(ch[0]) + ':' +
      ch[1] + '-' + ch[2] + (r[2].length ? ' · evidence' : '') + '</span><br><span class="text">' + marked(ch[3], r[2], kept) + '</span></li>';
  });
  const scores = D.metrics.filter(m => c.scores[m]).map(m => {
    const s = c.scores[m];
    return '<tr><td>' + esc(m) + '</td><td class="val">' + (s[1] === 'ok' ? fmt(s[0]) : '') + '</td><td>' +
      esc(s[1]) + '</td><td>' + explanation(s[2] == null ? null : D.whys[s[2]]) + '</td></tr>';
  }).join('');
  return '<section class="variant" data-variant="' + vi + '" data-name="' + esc(v.name) + '"><h3>#' + v.rank + ' ' + esc(v.label) + '</h3>' +
    (c.error ? '<p class="worse">call failed: ' + esc(c.error) + '</p>' : '') +
    '<h4>Answer</h4><div class="answer">' + (c.answer == null ? '<span class="note">(no answer)</span>' : esc(c.answer)) +
    '</div><h4>Scores</h4><table class="scores">' + scores + '</table>' +
    '<h4>Contexts, ranked</h4><ol class="ctx">' + ctx + '</ol></section>';
}

function detail() {
  const q = Q.find(x => x.id === S.q);
  if (!q) { $('#detail').innerHTML = '<p class="note">Open a question from the list.</p>'; return; }
  const pick = '<div class="pick">show: ' + V.map((v, i) => '<label><input type="checkbox" data-v="' + i + '"' +
    (S.shown.has(i) ? ' checked' : '') + '>#' + v.rank + ' ' + esc(v.label) + '</label>').join('') + '</div>';
  const hist = (q.history || []).map(t => '<div class="meta">' + esc(t.role || '') + ': ' + esc(t.content || '') + '</div>').join('');
  const ev = q.evidence.length ? '<ol>' + q.evidence.map(t => '<li><mark>' + esc(t) + '</mark></li>').join('') + '</ol>'
    : (q.qrels ? '<p>relevant documents: ' + esc(Object.keys(q.qrels).filter(k => q.qrels[k] > 0).join(', ')) + '</p>'
      : '<p class="note">none (the answer is in no document)</p>');
  $('#detail').innerHTML = '<h2>' + esc(q.id) + (q.kind ? ' <span class="meta">' + esc(q.kind) + '</span>' : '') +
    '</h2>' + hist + '<p><b>' + esc(q.question) + '</b></p><h4>Reference</h4><p>' +
    (q.reference == null ? '<span class="note">(none)</span>' : esc(q.reference)) + '</p><h4>Evidence</h4>' + ev + pick +
    [...S.shown].sort((a, b) => a - b).map(i => variantBlock(i, q)).join('');
  $('#detail .pick').addEventListener('change', e => {
    const i = +e.target.dataset.v; if (e.target.checked) S.shown.add(i); else S.shown.delete(i); detail();
  });
}

function open(id) {
  S.q = id;
  document.querySelectorAll('#list tr.sel').forEach(tr => tr.classList.remove('sel'));
  const tr = document.querySelector('#list tr[data-q="' + CSS.escape(id) + '"]');
  if (tr) tr.classList.add('sel');
  if (location.hash !== '#q=' + encodeURIComponent(id)) history.replaceState(null, '', '#q=' + encodeURIComponent(id));
  detail();
}

controls();
list();
const fromHash = decodeURIComponent((location.hash.match(/^#q=(.*)$/) || [])[1] || '');
if (fromHash && Q.some(q => q.id === fromHash)) open(fromHash); else detail();
document.body.dataset.ready = '1';
})();"""
