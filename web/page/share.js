// Sharing, embedding, exporting and exercises on the explorer page. main.js owns the state and
// the drawing; this module reads them through the hooks installShare() receives, and adds:
//   - the link: v2 (deflate) hashes, older v1 links still read (lib/share.js), a preset that was
//     not edited is stored by name only;
//   - iframe embedding: ?embed=1&hide=...&lock=... and a "Copy embed code" action;
//   - exports of the whole solution or one step: LaTeX, CSV, JSON, NumPy, PyTorch, SVG, PNG;
//   - exercises: chosen steps (or cells) hidden and typed in by the student, checked within a
//     tolerance. The link holds the problem and which cells are hidden, never the answers: they
//     are recomputed from the problem by the engine.
import { decodeStateString, encodeStateString, fromBase64Url, toBase64Url } from './lib/share.js';
import { findPreset, presetProblem } from './lib/presets.js';
import {
  cellLatex, heatmapSvg, numpyScript, problemContext, pytorchScript, solutionLatex, stepCsv, stepFileName,
  stepFormula, stepLatex, traceCsv, traceJson,
} from './lib/export.js';
import { stringify } from './lib/index.js';
import { decodeState, encodeState } from './state.js';
import { axisLabels, headOf, stepKey, STEP_NAMES } from './steps.js';
import { mathHtml } from './math.js';
import { escapeHtml, fmt } from './format.js';

const $ = (id) => document.getElementById(id);
const INPUT_NAMES = new Set(['Q', 'K', 'V', 'X', 'X_kv', 'W_Q', 'W_K', 'W_V', 'W_O', 'b_Q', 'b_K', 'b_V', 'b_O']);
const STEP_IDS = new Set(['Q', 'K', 'V', 'scores', 'scaled', 'softcapped', 'masked', 'weights', 'head_output', 'concat', 'output']);
const PANELS = { setup: 'setup', inputs: 'inputs', why: 'why', drill: 'drill', share: 'share', options: 'setup' };

let hooks = null;          // { getState, setState, getResult, engine, rerender }
const flags = { embed: false, hidePanels: new Set(), lock: new Set() };
let revealed = false;      // the student pressed "Show answers" (not part of the link)
let lastSeed = null;       // the seed of the last "New problem"
let choosing = false;      // the teacher is choosing which numbers to hide
let linkError = null;      // why the link could not be read (shown once, at the top)

// ---- the link ----------------------------------------------------------------------------------

const utf8 = new TextEncoder();
const asV1 = (obj) => `v1=${toBase64Url(utf8.encode(JSON.stringify(obj)))}`;

/** The page state without its defaults (what state.js's v1 encoding holds), as an object. */
function compactObject(state) {
  const v1 = encodeState(state);
  if (v1.startsWith('v1=')) {
    try {
      return JSON.parse(new TextDecoder().decode(fromBase64Url(v1.slice(3))));
    } catch { /* fall through: the whole state */ }
  }
  return JSON.parse(JSON.stringify(state));
}

function matrixToText(value) {
  if (!Array.isArray(value[0])) return value.map(String).join(' ');
  return value.map((row) => row.map(String).join(' ')).join('\n');
}

/** A preset as page state fields (as main.js's loadPreset builds them). */
function presetFields(id, engine) {
  const preset = findPreset(id);
  if (!preset) return null;
  const { problem, numpy } = presetProblem(preset, engine);
  const s = { preset: id, mode: preset.mode, inputs: {}, use: {}, options: {}, tokens: {} };
  for (const [name, value] of Object.entries(problem)) if (name !== 'options') s.inputs[name] = { text: matrixToText(value) };
  s.recipe = [...new Set(Object.values(numpy))].join('\n');
  s.use = { bias: ['b_Q', 'b_K', 'b_V'].some((n) => n in problem), W_O: 'W_O' in problem, b_O: 'b_O' in problem };
  const o = problem.options;
  for (const k of ['layout', 'causal', 'softcap', 'heads', 'precision']) if (o[k] !== undefined) s.options[k] = o[k];
  s.options.kv_heads = o.kv_heads ?? s.options.heads ?? 1;
  if (o.scale === undefined || o.scale === 'sqrt_dk' || o.scale === 'none') s.options.scale = o.scale ?? 'sqrt_dk';
  else { s.options.scale = 'custom'; s.options.scaleCustom = String(o.scale); }
  s.tokens = { q: (preset.tokens ?? []).join(' '), k: (preset.kvTokens ?? []).join(' ') };
  return s;
}

/** "v2=..." for the page state; an unedited preset is stored by its name only. */
export async function writeLink(state) {
  const obj = compactObject(state);
  // What the ?embed/hide flags hid belongs to the flags, not to the state: the "Open in the
  // explorer" link must show everything.
  if (obj.hide && flags.hide) {
    const fromFlags = new Set(flags.hide);
    const hide = { ...obj.hide };
    if (flags.embed) delete hide.chrome;
    for (const k of ['inputs', 'steps']) {
      if (Array.isArray(hide[k])) hide[k] = hide[k].filter((w) => !fromFlags.has(w));
      if (Array.isArray(hide[k]) && hide[k].length === 0) delete hide[k];
    }
    if (Object.keys(hide).length) obj.hide = hide;
    else delete obj.hide;
  }
  if (state.preset && !state.edited && findPreset(state.preset)) {
    for (const k of ['inputs', 'recipe', 'use', 'mode', 'options']) delete obj[k];
  }
  return encodeStateString(obj);
}

/** Reads a v1 or v2 hash into a page state: { state } | { state: null, error? }. */
export async function readLink(hash, engine) {
  const { state: raw, error } = await decodeStateString(hash);
  linkError = error ?? null;
  if (!raw) return { state: null, error };
  let obj = raw;
  if (typeof raw.preset === 'string' && !raw.edited && !raw.inputs) {
    const base = presetFields(raw.preset, engine);
    if (!base) {
      linkError = `This link names an example the explorer does not have ("${raw.preset}"); showing the default example instead.`;
      return { state: null, error: linkError };
    }
    obj = { ...base, ...raw, options: { ...base.options, ...(raw.options ?? {}) }, tokens: raw.tokens ?? base.tokens };
  }
  const out = decodeState(asV1(obj));
  if (out.state) applyFlags(out.state);
  return out;
}

// ---- embedding flags ----------------------------------------------------------------------------

function readFlags() {
  const q = new URLSearchParams(location.search);
  flags.embed = q.get('embed') === '1' || q.get('embed') === 'true';
  const words = (key) => (q.get(key) ?? '').split(/[\s,]+/).filter(Boolean);
  flags.hide = words('hide');
  flags.lock = new Set(words('lock'));
  flags.hidePanels = new Set(flags.hide.filter((w) => w in PANELS).map((w) => PANELS[w]));
}

/** Puts ?embed/hide into a state (called for every state the page takes). */
export function applyFlags(state) {
  if (!flags.hide) readFlags();
  if (flags.embed) state.hide.chrome = true;
  const inputs = flags.hide.filter((w) => INPUT_NAMES.has(w));
  const steps = flags.hide.filter((w) => STEP_IDS.has(w));
  if (inputs.length) state.hide.inputs = [...new Set([...(state.hide.inputs ?? []), ...inputs])];
  if (steps.length) state.hide.steps = [...new Set([...(state.hide.steps ?? []), ...steps])];
  return state;
}

function applyLocks() {
  const lockAll = flags.lock.has('all');
  $('setup').inert = lockAll || flags.lock.has('options');
  $('setup').classList.toggle('locked', $('setup').inert);
  $('inputs').inert = lockAll || flags.lock.has('inputs');
  $('inputs').classList.toggle('locked', $('inputs').inert);
  for (const ed of document.querySelectorAll('#editors .editor[data-input]')) {
    const locked = flags.lock.has(ed.dataset.input);
    ed.inert = locked;
    ed.classList.toggle('locked', locked);
  }
  for (const [name, id] of Object.entries(PANELS)) if (flags.hidePanels.has(id) || flags.hide?.includes(name)) $(id).hidden = true;
  document.body.classList.toggle('embed', flags.embed);
}

async function embedCode(options = {}) {
  const state = hooks.getState();
  const url = new URL(location.href);
  url.search = '';
  const q = new URLSearchParams();
  q.set('embed', '1');
  if (options.hide?.length) q.set('hide', options.hide.join(','));
  if (options.lock?.length) q.set('lock', options.lock.join(','));
  url.search = q.toString().replace(/%2C/g, ',');
  url.hash = await writeLink(state);
  const title = state.preset ? findPreset(state.preset)?.title ?? 'Attention explorer' : 'Attention explorer';
  return `<iframe src="${escapeHtml(url.href)}" title="${escapeHtml(title)}" width="100%" height="720" style="border:1px solid #d5d9e0;border-radius:6px" loading="lazy"></iframe>`;
}

// ---- exports ------------------------------------------------------------------------------------

function download(name, text, type) {
  const blob = text instanceof Blob ? text : new Blob([text], { type });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.hidden = true;
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

function chosenStep(result) {
  const key = $('export-what').value;
  if (key === 'all') return null;
  return result.trace.steps.find((s) => stepKey(s) === key) ?? null;
}

function svgFor(result, step) {
  const ctx = result.ctx;
  const one = (s) => {
    const labels = axisLabels(s, ctx);
    const head = ctx.meta.heads > 1 && headOf(s) >= 0 ? `, head ${headOf(s) + 1}` : '';
    return heatmapSvg(s, { title: `${STEP_NAMES[s.id] ?? s.id}${head} (${s.shape[0]} × ${s.shape[1]})`, rowLabels: labels.rows, colLabels: labels.cols, decimals: Math.min(ctx.decimals, 3) });
  };
  if (step) return one(step);
  // The whole trace: every step's heatmap, one under the other.
  const parts = result.trace.steps.map(one);
  let y = 0, width = 0;
  const inner = parts.map((svg) => {
    const w = Number(/width="(\d+)"/.exec(svg)[1]), h = Number(/height="(\d+)"/.exec(svg)[1]);
    const g = svg.replace('<svg ', `<svg x="0" y="${y}" `);
    y += h + 16;
    width = Math.max(width, w);
    return g;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}">\n<rect width="100%" height="100%" fill="#fff"/>\n${inner.join('\n')}</svg>\n`;
}

async function pngFromSvg(svg) {
  const img = new Image();
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
  await img.decode();
  const scale = 2;
  const canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth * scale;
  canvas.height = img.naturalHeight * scale;
  const g = canvas.getContext('2d');
  g.scale(scale, scale);
  g.drawImage(img, 0, 0);
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('the PNG could not be made'))), 'image/png'));
}

/** Makes one export: { name, text | blob, type }. `format`: latex csv json numpy pytorch svg png cell. */
export async function makeExport(format, stepKeyOrAll = 'all') {
  const result = hooks.getResult();
  if (!result) throw new Error('nothing computed yet');
  const state = hooks.getState();
  const { trace, problem } = result;
  const step = stepKeyOrAll === 'all' ? null : trace.steps.find((s) => stepKey(s) === stepKeyOrAll);
  const ctx = problemContext(problem, trace);
  const d = result.ctx.decimals;
  const labels = step ? axisLabels(step, result.ctx) : null;
  switch (format) {
    case 'latex':
      return step
        ? { name: stepFileName(step, 'tex', trace.meta.heads), type: 'text/x-tex', text: `\\[ ${stepFormula(step, ctx)} \\]\n\\[ ${stepLatex(step, ctx, { decimals: d })} \\]\n` }
        : { name: 'attention-solution.tex', type: 'text/x-tex', text: solutionLatex(problem, trace, { decimals: d, standalone: true }) };
    case 'csv':
      return step
        ? { name: stepFileName(step, 'csv', trace.meta.heads), type: 'text/csv', text: stepCsv(step, { rowLabels: labels.rows, colLabels: labels.cols }) }
        : { name: 'attention-trace.csv', type: 'text/csv', text: traceCsv(trace) };
    case 'json':
      return step
        ? { name: stepFileName(step, 'json', trace.meta.heads), type: 'application/json', text: `${stringify(step)}\n` }
        : { name: 'attention-trace.json', type: 'application/json', text: `${traceJson(trace)}\n` };
    case 'numpy':
      return { name: 'attention_numpy.py', type: 'text/x-python', text: numpyScript(problem, trace, { recipe: state.recipe || undefined }) };
    case 'pytorch':
      return { name: 'attention_torch.py', type: 'text/x-python', text: pytorchScript(problem, trace, { recipe: state.recipe || undefined }) };
    case 'svg': {
      const svg = svgFor(result, step);
      return { name: step ? stepFileName(step, 'svg', trace.meta.heads) : 'attention-steps.svg', type: 'image/svg+xml', text: svg };
    }
    case 'png': {
      const blob = await pngFromSvg(svgFor(result, step));
      return { name: step ? stepFileName(step, 'png', trace.meta.heads) : 'attention-steps.png', type: 'image/png', blob };
    }
    case 'cell': {
      const open = state.open;
      if (!open) throw new Error('click a number in a step first: its worked calculation is exported');
      const e = hooks.engine.explain(problem, { step: open.step, head: open.head < 0 ? null : open.head, row: open.row, col: open.col });
      return { name: `${open.step}-cell-${open.row + 1}-${open.col + 1}.tex`, type: 'text/x-tex', text: `\\[\n${cellLatex(e, problem, { decimals: d })}\n\\]\n` };
    }
    default:
      throw new Error(`unknown export ${format}`);
  }
}

function fillExportSelect() {
  const result = hooks.getResult();
  const sel = $('export-what');
  if (!result || !sel) return;
  const keep = sel.value;
  const multi = result.ctx.meta.heads > 1;
  sel.innerHTML = '<option value="all">the whole solution</option>' + result.trace.steps.map((s) =>
    `<option value="${stepKey(s)}">${escapeHtml(STEP_NAMES[s.id] ?? s.id)}${multi && headOf(s) >= 0 ? `, head ${headOf(s) + 1}` : ''}</option>`).join('');
  if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
}

async function onExport(format) {
  const status = $('share-status');
  try {
    const out = await makeExport(format, $('export-what').value);
    const preview = $('export-preview');
    if (out.blob) {
      preview.value = `${out.name}: ${out.blob.size.toLocaleString('en')} bytes (PNG), downloaded.`;
      download(out.name, out.blob);
    } else {
      preview.value = out.text;
      download(out.name, out.text, out.type);
    }
    preview.hidden = false;
    preview.dataset.format = format;
    status.textContent = `Exported ${out.name}.`;
  } catch (err) {
    status.textContent = `Export failed: ${err.message}`;
  }
}

async function copy(text, what) {
  const status = $('share-status');
  $('export-preview').value = text;
  $('export-preview').hidden = false;
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = `${what} copied to the clipboard.`;
  } catch {
    $('export-preview').select();
    status.textContent = `${what} is in the box below: copy it from there (the clipboard is not available here).`;
  }
}

// ---- exercises ----------------------------------------------------------------------------------

/** Step ids main.js must leave out of its list while an exercise is running. */
export function exerciseHiddenSteps(state) {
  const ex = state.exercise;
  if (!ex || revealed || !Array.isArray(ex.steps)) return [];
  return [...new Set(ex.steps.map((k) => String(k).split(':')[0]))];
}

function hiddenCells(ex, key, shape) {
  const cells = ex.cells?.[key];
  if (Array.isArray(cells)) return new Set(cells.map(([r, c]) => `${r},${c}`));
  const all = new Set();
  for (let r = 0; r < shape[0]; r++) for (let c = 0; c < shape[1]; c++) all.add(`${r},${c}`);
  return all;
}

/** What a cell is computed from, in words (for the first wrong answer). */
function dependsOn(step, r, c, result) {
  const cols = result.ctx.layout === 'columns';
  const labels = axisLabels(step, result.ctx);
  const q = cols ? c : r, k = cols ? r : c;
  const tq = result.ctx.tokensQ[q] ?? `t${q + 1}`, tk = result.ctx.tokensK[k] ?? `t${k + 1}`;
  const head = result.ctx.meta.heads > 1 && headOf(step) >= 0 ? ` of head ${headOf(step) + 1}` : '';
  const steps = result.trace.steps.filter((s) => headOf(s) === headOf(step)).map((s) => s.id);
  const before = (id) => steps[steps.indexOf(id) - 1];
  const mode = hooks.getState().mode;
  const tok = cols ? 'column' : 'row';
  switch (step.id) {
    case 'Q': case 'K': case 'V': {
      if (mode === 'qkv') return `${step.id} is given`;
      const x = step.id === 'Q' || mode === 'self' ? 'X' : 'X_kv';
      const f = cols ? r : c;
      return `${tok} ${(cols ? c : r) + 1} of ${x} (token ${labels[cols ? 'cols' : 'rows'][cols ? c : r]}) times ${cols ? 'row' : 'column'} ${f + 1} of ${cols ? 'Ω' : 'W'}_${step.id}${hooks.getState().use.bias ? `, plus bias entry ${f + 1}` : ''}`;
    }
    case 'scores':
      return `the dot product of query ${tq}'s ${tok} of Q${head} with key ${tk}'s ${tok} of K${head}: the sum of their entries multiplied pairwise`;
    case 'scaled':
      return `the score of query ${tq} and key ${tk}${head}, times the scale ${fmt(result.trace.meta.scale, 4)} (${result.ctx.scaleMode === 'sqrt_dk' ? `1/√d_k = 1/√${result.trace.meta.d_k}` : 'the chosen scale'})`;
    case 'softcapped':
      return `the scaled score of query ${tq} and key ${tk}: c·tanh(score / c) with c = ${hooks.getState().options.softcap}`;
    case 'masked':
      return `the ${STEP_NAMES[before('masked')]?.toLowerCase() ?? 'scaled scores'} entry for query ${tq} and key ${tk}, plus the mask there (0 keeps it, −∞ hides it)`;
    case 'weights':
      return `every entry of query ${tq}'s ${tok} in the ${STEP_NAMES[before('weights')]?.toLowerCase() ?? 'scaled scores'}${head}: softmax — e^(x − max) divided by the sum of e^(x − max) over that ${tok}`;
    case 'head_output':
    case 'output':
      if (step.id === 'output' && (result.ctx.hasWO)) {
        return `${tok} ${(cols ? c : r) + 1} of the ${result.ctx.meta.heads > 1 ? 'concatenated heads' : 'head output'} times ${cols ? 'row' : 'column'} ${(cols ? r : c) + 1} of ${cols ? 'Ω' : 'W'}_O${result.ctx.hasBO ? ', plus the bias' : ''}`;
      }
      return `query ${tq}'s weights (its ${tok} of the attention weights${head}) and ${cols ? 'row' : 'column'} ${(cols ? r : c) + 1} of V${head}: the weighted sum Σ_k weight_k · V_k`;
    case 'concat': {
      const dv = result.trace.meta.d_v;
      const f = cols ? r : c;
      return `head ${Math.floor(f / dv) + 1}'s output, feature ${(f % dv) + 1}, copied across`;
    }
    default:
      return 'the steps before it';
  }
}

function renderExercise() {
  const box = $('exercise');
  const state = hooks.getState();
  const result = hooks.getResult();
  const ex = state.exercise;
  document.body.classList.toggle('exercise-on', Boolean(ex) && !revealed);
  if (!ex || !result) { box.hidden = true; box.replaceChildren(); return; }
  box.hidden = false;
  const { trace } = result;
  const ctx = problemContext(result.problem, trace);
  // Keep what the student typed across redraws.
  const typed = new Map([...box.querySelectorAll('input.answer')].map((i) => [i.dataset.id, i.value]));
  const tol = Number(ex.tolerance) > 0 ? Number(ex.tolerance) : 0.01;
  let html = `<h2 id="exercise-title">Exercise</h2>
    <p>Work out the missing numbers${ex.seed !== undefined ? ` (problem from seed ${escapeHtml(ex.seed)})` : ''} and press <strong>Check</strong>. Answers within ±${fmt(tol, 6).replace(/0+$/, '')} count as right.</p>`;
  for (const key of ex.steps) {
    const step = trace.steps.find((s) => stepKey(s) === key);
    if (!step) continue;
    const labels = axisLabels(step, result.ctx);
    const hidden = hiddenCells(ex, key, step.shape);
    const head = result.ctx.meta.heads > 1 && headOf(step) >= 0 ? `, head ${headOf(step) + 1}` : '';
    html += `<div class="ex-step" data-key="${key}"><h3>${escapeHtml(STEP_NAMES[step.id] ?? step.id)}${head} <span class="shape">${step.shape[0]} × ${step.shape[1]}</span></h3>
      <div class="formula">${mathHtml(stepFormula(step, ctx), true)}</div>
      <table class="matrix ex-table"><caption class="visually-hidden">${escapeHtml(STEP_NAMES[step.id] ?? step.id)}${head}: type the missing numbers</caption><thead><tr><th></th>`;
    html += labels.cols.map((c) => `<th scope="col">${escapeHtml(c)}</th>`).join('') + '</tr></thead><tbody>';
    step.data.forEach((row, r) => {
      html += `<tr><th scope="row">${escapeHtml(labels.rows[r])}</th>`;
      row.forEach((v, c) => {
        const id = `${key}/${r}/${c}`;
        if (choosing) {
          const isHidden = hidden.has(`${r},${c}`);
          html += `<td><button type="button" class="ex-toggle${isHidden ? ' is-hidden' : ''}" data-key="${key}" data-r="${r}" data-c="${c}" aria-pressed="${isHidden}"
            aria-label="${labels.rowTitle} ${escapeHtml(labels.rows[r])}, ${labels.colTitle} ${escapeHtml(labels.cols[c])}: ${isHidden ? 'hidden' : 'shown'}">${isHidden ? '?' : fmt(v, result.ctx.decimals)}</button></td>`;
          return;
        }
        if (!hidden.has(`${r},${c}`)) { html += `<td class="given">${fmt(v, result.ctx.decimals)}</td>`; return; }
        if (revealed) { html += `<td class="revealed">${fmt(v, result.ctx.decimals)}</td>`; return; }
        const value = typed.get(id) ?? '';
        html += `<td><input class="answer" inputmode="decimal" autocomplete="off" spellcheck="false" data-id="${id}" value="${escapeHtml(value)}"
          aria-label="${escapeHtml(STEP_NAMES[step.id] ?? step.id)}${head}, ${labels.rowTitle} ${escapeHtml(labels.rows[r])}, ${labels.colTitle} ${escapeHtml(labels.cols[c])}"></td>`;
      });
      html += '</tr>';
    });
    html += '</tbody></table></div>';
  }
  if (choosing) html = html.replace('<h2 id="exercise-title">Exercise</h2>', '<h2 id="exercise-title">Exercise</h2><p class="hint">Click a number to hide it from the students (?) or show it again.</p>');
  html += `<div class="ex-actions"><button type="button" id="ex-check"${revealed || choosing ? ' disabled' : ''}>Check</button>
    <button type="button" id="ex-choose" aria-pressed="${choosing}">${choosing ? 'Done choosing' : 'Choose which numbers to hide'}</button>
    <button type="button" id="ex-reveal">${revealed ? 'Hide answers' : 'Show answers'}</button>
    <button type="button" id="ex-leave">Leave exercise mode</button></div>
    <p id="ex-result" class="ex-result" role="status" aria-live="polite"></p>`;
  const result0 = $('ex-result')?.innerHTML ?? '';
  const resultClass = $('ex-result')?.className ?? 'ex-result';
  box.innerHTML = html;
  $('ex-result').innerHTML = result0;
  $('ex-result').className = resultClass;
}

/** Checks every answer; returns { right, total, first } and marks the inputs. */
export function checkExercise() {
  const result = hooks.getResult();
  const state = hooks.getState();
  const ex = state.exercise;
  const tol = Number(ex.tolerance) > 0 ? Number(ex.tolerance) : 0.01;
  let right = 0, total = 0, first = null;
  for (const input of $('exercise').querySelectorAll('input.answer')) {
    const [key, r, c] = input.dataset.id.split('/');
    const step = result.trace.steps.find((s) => stepKey(s) === key);
    const answer = step.data[Number(r)][Number(c)];
    const text = input.value.trim().replace(/\u2212/g, '-').replace(/^[-−]?\s*(inf|∞)$/i, (m) => (m.startsWith('-') || m.startsWith('−') ? '-Infinity' : 'Infinity'));
    const typed = text === '' ? NaN : Number(text);
    const ok = Number.isFinite(answer) ? Math.abs(typed - answer) <= tol + 1e-12 : typed === answer;
    total++;
    if (ok) right++;
    input.classList.toggle('right', ok);
    input.classList.toggle('wrong', !ok);
    input.setAttribute('aria-invalid', String(!ok));
    if (!ok && !first) first = { input, step, r: Number(r), c: Number(c), empty: text === '', typed: input.value.trim() };
  }
  const out = $('ex-result');
  if (!first) {
    out.className = 'ex-result all-right';
    out.textContent = `All ${total} right. Well done!`;
  } else {
    const labels = axisLabels(first.step, result.ctx);
    const head = result.ctx.meta.heads > 1 && headOf(first.step) >= 0 ? `, head ${headOf(first.step) + 1}` : '';
    out.className = 'ex-result some-wrong';
    out.innerHTML = `${right} of ${total} right. First to fix: <strong>${escapeHtml(STEP_NAMES[first.step.id] ?? first.step.id)}${head}, row ${first.r + 1} (${escapeHtml(labels.rows[first.r])}), column ${first.c + 1} (${escapeHtml(labels.cols[first.c])})</strong>` +
      `${first.empty ? ' is empty' : ` — you wrote ${escapeHtml(first.typed)}`}. It depends on ${escapeHtml(dependsOn(first.step, first.r, first.c, result))}.`;
    first.input.focus();
  }
  return { right, total, first: first && { key: stepKey(first.step), row: first.r, col: first.c } };
}

/** Seeded random inputs of the current shapes: the same seed gives every student the same numbers. */
function newProblem(seed, kind) {
  const state = hooks.getState();
  const result = hooks.getResult();
  if (!result) return;
  const names = Object.keys(result.problem).filter((n) => n !== 'options' && INPUT_NAMES.has(n));
  const shapes = names.map((n) => {
    const v = result.problem[n];
    return Array.isArray(v[0]) ? [v.length, v[0].length] : [1, v.length];
  });
  const draws = shapes.map((shape) => (kind === 'int' ? { kind: 'randint', shape, low: -2, high: 3 } : { kind: 'randn', shape }));
  // One decimal: np.round(x, 1) (half-to-even there, but a randn draw is never exactly on a half).
  const round1 = (m) => m.map((row) => row.map((x) => Math.round(x * 10) / 10 || 0));
  const drawn = hooks.engine.random(seed, draws).map((m) => (kind === 'round1' ? round1(m) : m));
  const dims = (d) => d.shape.join(', ');
  const call = (d) => (d.kind === 'randint' ? `np.random.randint(-2, 3, size=(${dims(d)}))`
    : kind === 'round1' ? `np.round(np.random.randn(${dims(d)}), 1)` : `np.random.randn(${dims(d)})`);
  const next = structuredClone(state);
  names.forEach((n, i) => {
    const m = drawn[i];
    next.inputs[n] = { text: matrixToText(shapes[i][0] === 1 && !Array.isArray(result.problem[n][0]) ? m[0] : m) };
  });
  next.recipe = [`np.random.seed(${seed})`, ...names.map((n, i) => `${n} = ${call(draws[i])}`)].join('\n');
  next.preset = null;
  next.edited = true;
  next.open = null;
  if (next.exercise) next.exercise.seed = seed;
  lastSeed = seed;
  hooks.setState(next);
}

function pickCells(seed, step, n) {
  // Deterministic: the n cells with the smallest draws of a seeded uniform matrix.
  const [u] = hooks.engine.random(seed, [{ kind: 'rand', shape: step.shape }]);
  const all = u.flatMap((row, r) => row.map((x, c) => [x, r, c])).sort((a, b) => a[0] - b[0]);
  return all.slice(0, n).map(([, r, c]) => [r, c]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

/** The teacher shows or hides one number of an exercise step (the link then lists the cells). */
function toggleCell(key, r, c) {
  const result = hooks.getResult();
  const step = result?.trace.steps.find((s) => stepKey(s) === key);
  if (!step) return;
  const next = structuredClone(hooks.getState());
  const ex = next.exercise;
  const cells = hiddenCells(ex, key, step.shape);
  const id = `${r},${c}`;
  if (cells.has(id)) cells.delete(id);
  else cells.add(id);
  ex.cells = { ...(ex.cells ?? {}), [key]: [...cells].map((p) => p.split(',').map(Number)).sort((a, b) => a[0] - b[0] || a[1] - b[1]) };
  hooks.setState(next);
  $('exercise').querySelector(`button.ex-toggle[data-key="${key}"][data-r="${r}"][data-c="${c}"]`)?.focus();
}

function startExercise() {
  const result = hooks.getResult();
  if (!result) return;
  const keys = [...$('ex-steps').querySelectorAll('input:checked')].map((i) => i.value);
  if (!keys.length) { $('share-status').textContent = 'Choose at least one step for the exercise.'; return; }
  const n = Math.max(0, Math.round(Number($('ex-cells').value) || 0));
  const seed = Math.max(0, Math.round(Number($('ex-seed').value) || 0));
  const exercise = { steps: keys, tolerance: Number($('ex-tol').value) || 0.01 };
  if (lastSeed !== null && !hooks.getState().preset) exercise.seed = lastSeed;
  if (n > 0) {
    exercise.cells = {};
    for (const key of keys) {
      const step = result.trace.steps.find((s) => stepKey(s) === key);
      exercise.cells[key] = pickCells(seed, step, Math.min(n, step.shape[0] * step.shape[1]));
    }
  }
  const next = structuredClone(hooks.getState());
  next.exercise = exercise;
  next.open = null;
  revealed = false;
  hooks.setState(next);
  $('exercise').scrollIntoView({ block: 'start' });
  $('share-status').textContent = 'Exercise on. “Copy link” gives the students this exercise (the link holds the problem, not the answers).';
}

function fillExerciseSteps() {
  const result = hooks.getResult();
  const box = $('ex-steps');
  if (!result || !box) return;
  const checked = new Set([...box.querySelectorAll('input:checked')].map((i) => i.value));
  const multi = result.ctx.meta.heads > 1;
  box.innerHTML = result.trace.steps.filter((s) => !['Q', 'K', 'V'].includes(s.id) || hooks.getState().mode !== 'qkv').map((s) => {
    const key = stepKey(s);
    return `<label><input type="checkbox" value="${key}"${checked.has(key) ? ' checked' : ''}> ${escapeHtml(STEP_NAMES[s.id] ?? s.id)}${multi && headOf(s) >= 0 ? ` (head ${headOf(s) + 1})` : ''}</label>`;
  }).join('');
}

// ---- the panel ----------------------------------------------------------------------------------

const FORMATS = [
  ['latex', 'LaTeX'], ['csv', 'CSV'], ['json', 'JSON'], ['numpy', 'NumPy script'], ['pytorch', 'PyTorch script'],
  ['svg', 'SVG heatmap'], ['png', 'PNG heatmap'], ['cell', 'Worked cell (LaTeX)'],
];

function buildPanels() {
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = new URL('share.css', import.meta.url).href;
  document.head.appendChild(link);

  const exercise = document.createElement('section');
  exercise.id = 'exercise';
  exercise.className = 'panel exercise';
  exercise.setAttribute('aria-labelledby', 'exercise-title');
  exercise.hidden = true;
  $('results').before(exercise);

  const share = document.createElement('section');
  share.id = 'share';
  share.className = 'panel share';
  share.setAttribute('aria-labelledby', 'share-title');
  share.innerHTML = `
    <h2 id="share-title">Share, embed, export</h2>
    <div class="share-row">
      <button type="button" id="copy-link">Copy link</button>
      <button type="button" id="copy-embed">Copy embed code</button>
      <details class="embed-options"><summary>Embed options</summary>
        <p class="hint">Inputs or steps to hide, and inputs to lock (readers see them but cannot change them), for the embedded copy.</p>
        <label>Hide <input type="text" id="embed-hide" placeholder="e.g. W_Q,W_K,scores,why" spellcheck="false" autocomplete="off"></label>
        <label>Lock <input type="text" id="embed-lock" placeholder="e.g. inputs, options, all, X" spellcheck="false" autocomplete="off"></label>
      </details>
      <a href="embedding.html">Embedding examples</a>
    </div>
    <div class="share-row export-row">
      <label for="export-what">Export</label>
      <select id="export-what"><option value="all">the whole solution</option></select>
      <span role="group" aria-label="Export formats" class="formats">
        ${FORMATS.map(([f, label]) => `<button type="button" data-export="${f}">${label}</button>`).join('')}
      </span>
    </div>
    <details class="exercise-setup" id="exercise-setup"><summary>Set an exercise</summary>
      <p class="hint">Students type the numbers of the steps you choose; the page checks them. The link you share holds the problem and which numbers are hidden, not the answers.</p>
      <fieldset><legend>Steps the students compute</legend><div id="ex-steps" class="ex-steps"></div></fieldset>
      <div class="share-row">
        <label>Only <input type="number" id="ex-cells" min="0" step="1" size="4" placeholder="all"> numbers per step</label>
        <label>Tolerance ± <input type="number" id="ex-tol" min="0" step="any" value="0.01" size="6"></label>
      </div>
      <div class="share-row">
        <label>Seed <input type="number" id="ex-seed" min="0" step="1" value="1" size="8"></label>
        <label>Numbers <select id="ex-kind"><option value="round1">one decimal (np.round(randn, 1))</option><option value="int">small integers (−2 … 2)</option><option value="randn">np.random.randn</option></select></label>
        <button type="button" id="ex-new">New problem from this seed</button>
        <button type="button" id="ex-start">Start the exercise</button>
      </div>
    </details>
    <textarea id="export-preview" class="export-preview" rows="10" readonly aria-label="Export preview" hidden></textarea>
    <p id="share-status" class="share-status" role="status" aria-live="polite"></p>`;
  ($('why') ?? $('results')).after(share);

  share.addEventListener('click', async (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    if (b.dataset.export) { await onExport(b.dataset.export); return; }
    switch (b.id) {
      case 'copy-link': {
        const url = new URL(location.href);
        url.hash = await writeLink(hooks.getState());
        await copy(url.href, 'The link');
        break;
      }
      case 'copy-embed': {
        const words = (id) => $(id).value.split(/[\s,]+/).filter(Boolean);
        await copy(await embedCode({ hide: words('embed-hide'), lock: words('embed-lock') }), 'The embed code');
        break;
      }
      case 'ex-new': newProblem(Math.max(0, Math.round(Number($('ex-seed').value) || 0)), $('ex-kind').value); break;
      case 'ex-start': startExercise(); break;
      default: break;
    }
  });
  exercise.addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    if (b.id === 'ex-check') checkExercise();
    if (b.id === 'ex-choose') { choosing = !choosing; hooks.rerender(); $('ex-choose')?.focus(); }
    if (b.classList.contains('ex-toggle')) toggleCell(b.dataset.key, Number(b.dataset.r), Number(b.dataset.c));
    if (b.id === 'ex-reveal') { revealed = !revealed; hooks.rerender(); }
    if (b.id === 'ex-leave') {
      const next = structuredClone(hooks.getState());
      next.exercise = null;
      revealed = false;
      choosing = false;
      hooks.setState(next);
    }
  });
  exercise.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.target.matches('input.answer')) { e.preventDefault(); checkExercise(); }
  });
}

/**
 * Called once by main.js after the engine loaded: hooks = { getState, setState(state),
 * getResult() -> { trace, problem, ctx } | null, engine, rerender() }.
 */
export function installShare(h) {
  hooks = h;
  if (!flags.hide) readFlags();
  buildPanels();
  if (flags.embed) {
    // Embedded: the share panel gives way to a link to the full explorer.
    $('share').hidden = true;
    const open = document.createElement('p');
    open.className = 'embed-open';
    open.innerHTML = '<a id="open-full" target="_blank" rel="noopener">Open in the attention explorer ↗</a>';
    document.querySelector('.status-bar')?.prepend(open);
  }
}

function showLinkError() {
  if (!linkError) return;
  $('link-error')?.remove();
  const box = document.createElement('div');
  box.id = 'link-error';
  box.className = 'link-error';
  box.setAttribute('role', 'alert');
  box.innerHTML = `<p>${escapeHtml(linkError)}</p><button type="button">Dismiss</button>`;
  box.querySelector('button').addEventListener('click', () => box.remove());
  $('app').prepend(box);
  linkError = null;
}

/** Called by main.js after each redraw of the steps. */
export function afterRender() {
  if (!hooks) return;
  showLinkError();
  applyLocks();
  fillExportSelect();
  fillExerciseSteps();
  renderExercise();
  const open = $('open-full');
  if (open) {
    writeLink(hooks.getState()).then((h) => {
      const url = new URL(location.href);
      url.search = '';
      url.hash = h;
      open.href = url.href;
    });
  }
}

