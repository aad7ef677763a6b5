// A student's exercise view. The teacher's page makes a "paper" from its exercise: the numbers the
// student may see (the inputs, the shown cells, the steps that do not depend on a hidden step) and,
// per hidden cell, a salted hash of the answer on a grid finer than the tolerance. The student's link
// holds only the paper, so no problem, no engine run and no answer reaches the student's page: a
// typed answer is checked by hashing it the same way. An old exercise link (it holds the whole
// problem) is turned into a paper on opening, and shown the same way, without the teacher's controls.
import { stateInputs } from 'attention-explorer/share';
import { $, app } from './app.js';
import { tokenLists, traceCounts, decimalsOf } from './state.js';
import { buildProblem } from './problem.js';
import { axisLabels, headOf, stepKey } from './steps.js';
import { mathHtml } from './math.js';
import { escapeHtml, fmt } from './format.js';

export const PAPER_VERSION = 1;
/** Grid steps per tolerance: an answer's hash is of round(x / (tolerance / GRID)). */
const GRID = 10;

// ---- SHA-256 (synchronous, and without crypto.subtle, which plain-http pages do not have) -------

const K256 = Uint32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 of a string (UTF-8), as 64 hex digits. */
export function sha256(text) {
  const msg = new TextEncoder().encode(text);
  const n = (((msg.length + 9) >> 6) + 1) << 6;
  const bytes = new Uint8Array(n);
  bytes.set(msg);
  bytes[msg.length] = 0x80;
  const view = new DataView(bytes.buffer);
  view.setUint32(n - 4, msg.length * 8);
  view.setUint32(n - 8, Math.floor(msg.length / 0x20000000));
  const h = Uint32Array.from([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64);
  const rot = (x, k) => (x >>> k) | (x << (32 - k));
  for (let off = 0; off < n; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + 4 * i);
    for (let i = 16; i < 64; i++) {
      const s0 = rot(w[i - 15], 7) ^ rot(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rot(w[i - 2], 17) ^ rot(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rot(e, 6) ^ rot(e, 11) ^ rot(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i]) | 0;
      const t2 = ((rot(a, 2) ^ rot(a, 13) ^ rot(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      hh = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
  return [...h].map((x) => x.toString(16).padStart(8, '0')).join('');
}

// ---- answers as grid points and hashes ---------------------------------------------------------

/** A number as the grid point the hash is taken of ("inf", "-inf" and "nan" stand for themselves). */
function gridPoint(x, step) {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  return Math.round(x / step);
}

const cellHash = (salt, key, r, c, point) => sha256(`${salt}|${key}|${r}|${c}|${point}`).slice(0, 16);

/** What a student typed, as a number: "−0.5" (the page's minus), "0,5" (a decimal comma), "inf", "-∞" read too; NaN if none. */
export function readAnswer(text) {
  const t = String(text).trim().replace(/\u2212/g, '-').replace(/^(-?\d*),(\d+)$/, '$1.$2');
  if (/^[-]?\s*(inf|infinity|∞)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  return t === '' ? NaN : Number(t);
}

/** True when the typed number is on a grid point within GRID steps of the hashed answer's. */
function matches(paper, key, r, c, typed) {
  const step = paper.tolerance / GRID;
  const p = gridPoint(typed, step);
  const want = paper.steps.find((s) => s.key === key).hashes[r][c];
  if (typeof p === 'string') return p !== 'nan' && cellHash(paper.salt, key, r, c, p) === want;
  for (let d = -GRID; d <= GRID; d++) if (cellHash(paper.salt, key, r, c, p + d) === want) return true;
  return false;
}

// ---- the paper, made on the teacher's page -----------------------------------------------------

/** JSON has no infinities: they travel as "inf" / "-inf" / "nan". */
const toJsonNumber = (x) => (Number.isFinite(x) ? x : Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf');
const fromJsonNumber = (x) => (x === 'inf' ? Infinity : x === '-inf' ? -Infinity : x === 'nan' ? NaN : Number(x));
const roundTo = (x, d) => (Number.isFinite(x) ? Number(x.toFixed(d)) : toJsonNumber(x));

function hiddenCellSet(ex, key, shape) {
  const cells = ex.cells?.[key];
  if (Array.isArray(cells)) return new Set(cells.map(([r, c]) => `${r},${c}`));
  return new Set(Array.from({ length: shape[0] * shape[1] }, (_, i) => `${Math.floor(i / shape[1])},${i % shape[1]}`));
}

function randomSalt() {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The student's paper for a state with an exercise, from its trace (and the step context ctx:
 * token names). Holds what the student may see and a hash per hidden cell, never a hidden number.
 */
export function makePaper(state, problem, trace, ctx, salt = randomSalt()) {
  const ex = state.exercise;
  const decimals = decimalsOf(state);
  const tolerance = Number(ex.tolerance) > 0 ? Number(ex.tolerance) : 0.01;
  const grid = tolerance / GRID;
  const keys = new Set(ex.steps.map(String));
  const multi = trace.meta.heads > 1;
  const titleOf = (s) => `${s.title}${multi && headOf(s) >= 0 ? `, head ${headOf(s) + 1}` : ''}`;
  // A step computed from a hidden one could give its numbers away: it is left out.
  const hiddenOrAfter = new Set();
  trace.steps.forEach((s, i) => {
    if (keys.has(stepKey(s)) || s.inputs.some((j) => hiddenOrAfter.has(j))) hiddenOrAfter.add(i);
  });
  const given = [];
  for (const name of stateInputs(state)) {
    const v = problem[name];
    if (v == null) continue;
    const m = Array.isArray(v[0]) ? v : [v];
    given.push({ title: name, tex: '', rows: m.map((_, i) => String(i + 1)), cols: m[0].map((_, i) => String(i + 1)), data: m.map((row) => row.map(toJsonNumber)) });
  }
  trace.steps.forEach((s, i) => {
    // An input as it is (or its per-head slice) is given above already.
    if (hiddenOrAfter.has(i) || (s.inputs.length === 0 && s.given.every((g) => g === s.id))) return;
    const labels = axisLabels(s, ctx);
    given.push({ title: titleOf(s), tex: s.tex, rows: labels.rows, cols: labels.cols, data: s.data.map((row) => row.map((x) => roundTo(x, decimals))) });
  });
  const steps = [];
  for (const key of keys) {
    const s = trace.steps.find((t) => stepKey(t) === key);
    if (!s) continue;
    const labels = axisLabels(s, ctx);
    const hidden = hiddenCellSet(ex, key, s.shape);
    const cells = s.data.map((row, r) => row.map((x, c) => (hidden.has(`${r},${c}`) ? null : roundTo(x, decimals))));
    const hashes = s.data.map((row, r) => row.map((x, c) => (hidden.has(`${r},${c}`) ? cellHash(salt, key, r, c, gridPoint(x, grid)) : null)));
    steps.push({ key, title: titleOf(s), tex: s.tex, rows: labels.rows, cols: labels.cols, rowTitle: labels.rowTitle, colTitle: labels.colTitle, cells, hashes });
  }
  const m = trace.meta;
  const about = [`d_k = ${m.d_k}`, `scale ${fmt(m.scale, decimals)}`, m.heads > 1 ? `${m.heads} heads` : '', state.options.causal ? 'causal' : '', m.mask_kind && m.mask_kind !== 'none' ? `mask: ${m.mask_kind}` : '']
    .filter(Boolean).join(', ');
  return {
    v: PAPER_VERSION, salt, tolerance, decimals, about, given, steps,
    ...(ex.seed !== undefined ? { seed: ex.seed } : {}),
  };
}

/** The paper for a state whose exercise came in a full link (old links): the problem is run here. */
export function paperFromState(state) {
  const { problem } = buildProblem(state, () => null);
  if (!problem || !Array.isArray(state.exercise.steps)) return null;
  try {
    const trace = app.engine.run(problem);
    const tokens = tokenLists(state, traceCounts(trace));
    return makePaper(state, problem, trace, { steps: trace.steps, tokensQ: tokens.q, tokensK: tokens.k });
  } catch {
    return null; // shown as a damaged link
  }
}

/** A state that opens as a student's exercise: a paper, or an exercise the teacher did not start here. */
export function isStudentState(state) {
  return Boolean(state?.student) || Boolean(state?.exercise && !state.exercise.teacher);
}

// ---- the student's view -----------------------------------------------------------------------

function validPaper(p) {
  return p && typeof p === 'object' && typeof p.salt === 'string' && Number(p.tolerance) > 0 && Array.isArray(p.steps) && Array.isArray(p.given ?? []);
}

function tableHtml(title, rows, cols, body, caption) {
  let html = `<table class="matrix ex-table"><caption class="visually-hidden">${escapeHtml(caption)}</caption><thead><tr><th></th>`;
  html += cols.map((c) => `<th scope="col">${escapeHtml(c)}</th>`).join('') + '</tr></thead><tbody>';
  rows.forEach((r, i) => { html += `<tr><th scope="row">${escapeHtml(r)}</th>${body(i)}</tr>`; });
  return `${html}</tbody></table>`;
}

const shape = (m) => `<span class="shape">${m.length} × ${m[0]?.length ?? 0}</span>`;

/** Draws the student's exercise (and nothing else of the page) from a paper. */
export function renderStudent(paper) {
  document.body.classList.add('student');
  const css = document.createElement('link');
  css.rel = 'stylesheet';
  css.href = new URL('share.css', import.meta.url).href;
  document.head.appendChild(css);
  document.querySelector('.tagline')?.remove(); // it tells how to type a problem: not here
  const skip = document.querySelector('a.skip');
  if (skip) { skip.textContent = 'Skip to the exercise'; skip.href = '#exercise'; }
  const box = document.createElement('section');
  box.id = 'exercise';
  box.className = 'panel exercise student-exercise';
  box.setAttribute('aria-labelledby', 'exercise-title');
  box.tabIndex = -1;
  if (!validPaper(paper)) {
    box.innerHTML = '<h2 id="exercise-title">Exercise</h2><p class="error">This exercise link is damaged: ask your teacher for the link again.</p>';
    $('app').prepend(box);
    return;
  }
  const d = Math.min(12, Math.max(0, Math.round(Number(paper.decimals)) || 0));
  const tol = fmt(Number(paper.tolerance), 8).replace(/\.?0+$/, '');
  const names = paper.steps.map((s) => `<strong>${escapeHtml(s.title)}</strong>`).join(', ');
  let html = `<h2 id="exercise-title">Exercise</h2>
    <p class="task">Work out the missing numbers of ${names}${paper.seed !== undefined ? ` (problem from seed ${escapeHtml(paper.seed)})` : ''} from the numbers given below, type them in the boxes and press <strong>Check</strong>.
    An answer within ±${escapeHtml(tol)} of the exact number counts as right.</p>
    <p class="hint">${escapeHtml(paper.about ?? '')}</p>`;
  for (const s of paper.steps) {
    html += `<div class="ex-step" data-key="${escapeHtml(s.key)}"><h3>${escapeHtml(s.title)} ${shape(s.cells)}</h3>
      <div class="formula">${s.tex ? mathHtml(String(s.tex), true) : ''}</div>`;
    html += tableHtml(s.title, s.rows, s.cols, (r) => s.cells[r].map((v, c) => {
      if (v !== null) return `<td class="given">${fmt(fromJsonNumber(v), d)}</td>`;
      return `<td><input class="answer" inputmode="decimal" autocomplete="off" spellcheck="false" data-id="${escapeHtml(`${s.key}/${r}/${c}`)}"
        aria-label="${escapeHtml(s.title)}, ${escapeHtml(s.rowTitle ?? 'row')} ${escapeHtml(s.rows[r])}, ${escapeHtml(s.colTitle ?? 'column')} ${escapeHtml(s.cols[c])}"></td>`;
    }).join(''), `${s.title}: type the missing numbers`);
    html += '</div>';
  }
  html += `<div class="ex-actions"><button type="button" id="ex-check" class="primary">Check</button></div>
    <p id="ex-result" class="ex-result" role="status" aria-live="polite"></p>
    <h3>Given</h3><div class="ex-given">`;
  for (const g of paper.given ?? []) {
    html += `<div class="ex-step"><h4>${escapeHtml(g.title)} ${shape(g.data)}</h4>${g.tex ? `<div class="formula">${mathHtml(String(g.tex), true)}</div>` : ''}`;
    html += tableHtml(g.title, g.rows, g.cols, (r) => g.data[r].map((v) => `<td>${escapeHtml(fmt(fromJsonNumber(v), g.tex ? d : Math.max(d, 4)))}</td>`).join(''), g.title);
    html += '</div>';
  }
  html += '</div>';
  box.innerHTML = html;
  $('app').prepend(box);
  box.addEventListener('click', (e) => { if (e.target.closest('#ex-check')) checkPaper(paper); });
  box.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.target.matches('input.answer')) { e.preventDefault(); checkPaper(paper); }
  });
  $('status').textContent = 'Exercise: type the missing numbers and press Check.';
}

/** Marks every answer box right or wrong and says which to fix first. */
function checkPaper(paper) {
  let right = 0, total = 0, first = null;
  for (const input of $('exercise').querySelectorAll('input.answer')) {
    const [key, r, c] = input.dataset.id.split('/');
    const typed = readAnswer(input.value);
    const ok = matches(paper, key, Number(r), Number(c), typed);
    total++;
    if (ok) right++;
    input.classList.toggle('right', ok);
    input.classList.toggle('wrong', !ok);
    input.setAttribute('aria-invalid', String(!ok));
    if (!ok && !first) first = { input, step: paper.steps.find((s) => s.key === key), r: Number(r), c: Number(c), typed: input.value.trim() };
  }
  const out = $('ex-result');
  if (!first) {
    out.className = 'ex-result all-right';
    out.textContent = `All ${total} right. Well done!`;
    return;
  }
  const { step, r, c } = first;
  out.className = 'ex-result some-wrong';
  out.innerHTML = `${right} of ${total} right. First to fix: <strong>${escapeHtml(step.title)}, row ${r + 1} (${escapeHtml(step.rows[r])}), column ${c + 1} (${escapeHtml(step.cols[c])})</strong>` +
    `${first.typed === '' ? ' is empty' : ` — you wrote ${escapeHtml(first.typed)}`}.`;
  first.input.focus();
}
