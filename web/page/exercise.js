// Exercises: chosen steps (or cells) hidden and typed in by the student, checked within a
// tolerance. The link holds the problem and which cells are hidden, never the answers: they are
// recomputed from the problem by the engine.
import { html, setHtml } from 'attention-explorer/html';
import { $, app, writeHtml } from './app.js';
import { loadState, store } from './store.js';
import { setChoosing, setRevealed } from './actions.js';
import { axisLabels, cellTokens, concatenated, headOf, stepKey } from './steps.js';
import { stepFormula } from 'attention-explorer/i18n';
import { mathHtml } from './math.js';
import { fmt, matrixToText } from './format.js';
import { INPUT_NAMES } from 'attention-explorer/share';
import { studentsHash } from './link.js';
import { cellName } from './student.js';
import { t } from './language.js';

// Every input of a problem (formats.js's one list): New problem draws each the problem has.
const INPUTS = new Set(INPUT_NAMES);

// The catalogue's <strong> as that element (explorer.exercise.*, web/lib/locales).
const TAGS = { strong: (/** @type {unknown[]} */ chunks) => html`<strong>${chunks}</strong>` };

/** A step's name in the page's language, with its head when the problem has several: "Scores, head 2". */
export function stepName(step, multi) {
  const head = multi && headOf(step) >= 0;
  return t('explorer.exercise.step', { title: t(step.title_id), multi: head ? 'yes' : 'no', head: String(headOf(step) + 1) });
}

/** A step's name as a list or a note names it: "Scores (head 2)". */
export function stepLabel(step, multi) {
  const head = multi && headOf(step) >= 0;
  return t('explorer.exercise.stepLabel', { title: t(step.title_id), multi: head ? 'yes' : 'no', head: String(headOf(step) + 1) });
}

let lastSeed = null; // the seed of the last "New problem"
// Whether the answers are shown ("Show answers") and the teacher is choosing which numbers to hide:
// the store's ui (not part of the link).
const ui = () => store.get().ui;

function hiddenCells(ex, key, shape) {
  const cells = ex.cells?.[key];
  if (Array.isArray(cells)) return new Set(cells.map(([r, c]) => `${r},${c}`));
  const all = new Set();
  for (let r = 0; r < shape[0]; r++) for (let c = 0; c < shape[1]; c++) all.add(`${r},${c}`);
  return all;
}

/**
 * What a cell is computed from, in words (for the first wrong answer), read off the step's inputs:
 * per step id, the message (explorer.from.<id>, web/lib/locales) and its values; a step without one
 * says "the steps before it".
 */
const DEPENDS_ON = {
  Q: projectionFrom,
  K: projectionFrom,
  V: projectionFrom,
  scores: (cell) => t('explorer.from.scores', cell.values),
  scaled: (cell, { trace, ctx }) =>
    t('explorer.from.scaled', { ...cell.values, scale: fmt(trace.meta.scale, 4), mode: ctx.scaleMode, dk: String(trace.meta.d_k) }),
  softcapped: (cell) => t('explorer.from.softcapped', { ...cell.values, cap: String(app.state.options.softcap) }),
  masked: (cell) => t('explorer.from.masked', cell.values),
  weights: (cell) => t('explorer.from.weights', cell.values),
  head_output: outputFrom,
  output: outputFrom,
  concat: (cell, { trace }) => {
    const part = concatenated(cell.step, trace.steps).find((p) => cell.feature >= p.features[0] && cell.feature < p.features[1]);
    return t('explorer.from.concat', { head: String(part.head + 1), feature: String(cell.feature - part.features[0] + 1) });
  },
};

function projectionFrom(cell, { ctx }) {
  const { step } = cell;
  const [x, w, b] = step.given;
  if (!w) return t('explorer.from.given', { name: step.id });
  const labels = axisLabels(step, ctx);
  return t('explorer.from.projection', {
    ...cell.values,
    x,
    token: String(cell.token + 1),
    label: labels[cell.values.layout === 'columns' ? 'cols' : 'rows'][cell.token],
    name: step.id,
    bias: b ? 'yes' : 'no',
  });
}

function outputFrom(cell) {
  const { step } = cell;
  if (step.given.includes('W_O')) {
    return t('explorer.from.outputProjected', {
      ...cell.values,
      token: String(cell.token + 1),
      bias: step.given.includes('b_O') ? 'yes' : 'no',
    });
  }
  return t('explorer.from.output', cell.values);
}

function dependsOn(step, r, c, result) {
  const { trace, ctx } = result;
  const { query, key } = cellTokens(step, r, c);
  // A token × feature step: the cell's token, and its feature counted in the full projection.
  const [token, local] = step.axes[0] === 'features' ? [c, r] : [r, c];
  const feature = local + (step.features?.[0] ?? 0);
  const multi = ctx.meta.heads > 1 && headOf(step) >= 0;
  const input = step.inputs.length ? t(trace.steps[step.inputs[0]].title_id).toLocaleLowerCase(t.lang) : '';
  const values = {
    layout: ctx.layout === 'columns' ? 'columns' : 'rows',
    q: ctx.tokensQ[query] ?? `t${query + 1}`,
    k: ctx.tokensK[key] ?? `t${key + 1}`,
    multi: multi ? 'yes' : 'no',
    head: String(multi ? headOf(step) + 1 : 0), // counts as text: no grouping of 1,024
    input,
    feature: String(feature + 1),
  };
  const tell = DEPENDS_ON[step.id];
  return tell ? tell({ step, token, feature, values }, result) : t('explorer.from.before');
}

export function renderExercise() {
  const box = $('exercise');
  const state = app.state;
  const result = app.result;
  const ex = state.exercise;
  const { revealed, choosing } = ui();
  document.body.classList.toggle('exercise-on', Boolean(ex) && !revealed);
  if (!ex || !result) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  box.hidden = false;
  const { trace } = result;
  // Keep what the student typed across redraws.
  const typed = new Map([...box.querySelectorAll('input.answer')].map((i) => [i.dataset.id, i.value]));
  const tol = Number(ex.tolerance) > 0 ? Number(ex.tolerance) : 0.01;
  // The teacher's view (this page set the exercise, or opened a teacher's link): it holds the
  // problem and Show answers, so it says so first, with the students' own link beside it.
  const steps = ex.steps.map((key) => {
    const step = trace.steps.find((s) => stepKey(s) === key);
    if (!step) return null;
    const labels = axisLabels(step, result.ctx);
    const hidden = hiddenCells(ex, key, step.shape);
    const name = stepName(step, result.ctx.meta.heads > 1);
    const cell = (v, r, c) => {
      const id = `${key}/${r}/${c}`;
      if (choosing) {
        const isHidden = hidden.has(`${r},${c}`);
        return html`<td><button type="button" class="ex-toggle${isHidden && ' is-hidden'}" data-key="${key}" data-r="${r}" data-c="${c}" aria-pressed="${String(isHidden)}"
            aria-label="${t('explorer.exercise.toggle', { cell: cellName(labels.rowTitle, labels.rows[r], labels.colTitle, labels.cols[c]), hidden: isHidden ? 'yes' : 'no' })}">${isHidden ? '?' : fmt(v, result.ctx.decimals)}</button></td>`;
      }
      if (!hidden.has(`${r},${c}`)) return html`<td class="given">${fmt(v, result.ctx.decimals)}</td>`;
      if (revealed) return html`<td class="revealed">${fmt(v, result.ctx.decimals)}</td>`;
      const value = typed.get(id) ?? '';
      return html`<td><input class="answer" inputmode="decimal" autocomplete="off" spellcheck="false" data-id="${id}" value="${value}"
          aria-label="${t('explorer.exercise.answer', { step: name, cell: cellName(labels.rowTitle, labels.rows[r], labels.colTitle, labels.cols[c]) })}"></td>`;
    };
    const rows = step.data.map((row, r) => html`<tr><th scope="row">${labels.rows[r]}</th>${row.map((v, c) => cell(v, r, c))}</tr>`);
    return html`<div class="ex-step" data-key="${key}"><h3>${name} <span class="shape">${step.shape[0]} × ${step.shape[1]}</span></h3>
      <div class="formula">${mathHtml(stepFormula(step, t).tex, true)}</div>
      <table class="matrix ex-table"><caption class="visually-hidden">${t('explorer.exercise.caption', { step: name })}</caption><thead><tr><th></th>${labels.cols.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead><tbody>${rows}</tbody></table></div>`;
  });
  const hint = choosing && html`<p class="hint">${t('explorer.exercise.choosingHint')}</p>`;
  const task = t('explorer.exercise.task', {
    ...TAGS,
    seeded: ex.seed !== undefined ? 'yes' : 'no',
    seed: String(ex.seed),
    tolerance: fmt(tol, 6).replace(/0+$/, ''),
  });
  // The check's result stays across redraws: its nodes are moved into the new box.
  const result0 = [...($('ex-result')?.childNodes ?? [])];
  const resultClass = $('ex-result')?.className ?? 'ex-result';
  setHtml(
    box,
    html`<h2 id="exercise-title">${t('explorer.exercise.title')}</h2>${hint}
    <div class="ex-handout"><p>${t('explorer.exercise.handout', TAGS)}</p>
    <button type="button" id="ex-student-link" class="primary">${t('explorer.exercise.copyStudentLink')}</button></div>
    <p>${task}</p>${steps}<div class="ex-actions"><button type="button" id="ex-check"${(revealed || choosing) && ' disabled'}>${t('explorer.exercise.check')}</button>
    <button type="button" id="ex-choose" aria-pressed="${String(choosing)}">${t(choosing ? 'explorer.exercise.doneChoosing' : 'explorer.exercise.choose')}</button>
    <button type="button" id="ex-reveal">${t(revealed ? 'explorer.exercise.hideAnswers' : 'explorer.exercise.showAnswers')}</button>
    <button type="button" id="ex-leave">${t('explorer.exercise.leave')}</button></div>
    <p class="hint">${t('explorer.exercise.linkHint')}</p>
    <p id="ex-result" class="ex-result" role="status" aria-live="polite"></p>`,
  );
  $('ex-result').replaceChildren(...result0);
  $('ex-result').className = resultClass;
}

/** Checks every answer; returns { right, total, first } and marks the inputs. */
function checkExercise() {
  const result = app.result;
  const state = app.state;
  const ex = state.exercise;
  const tol = Number(ex.tolerance) > 0 ? Number(ex.tolerance) : 0.01;
  let right = 0,
    total = 0,
    first = null;
  for (const input of $('exercise').querySelectorAll('input.answer')) {
    const [key, r, c] = input.dataset.id.split('/');
    const step = result.trace.steps.find((s) => stepKey(s) === key);
    const answer = step.data[Number(r)][Number(c)];
    const text = input.value
      .trim()
      .replace(/\u2212/g, '-')
      .replace(/^[-−]?\s*(inf|∞)$/i, (m) => (m.startsWith('-') || m.startsWith('−') ? '-Infinity' : 'Infinity'));
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
    out.textContent = t('explorer.exercise.allRight', { total: String(total) });
  } else {
    const labels = axisLabels(first.step, result.ctx);
    out.className = 'ex-result some-wrong';
    const where = t('explorer.exercise.fixCell', {
      step: stepName(first.step, result.ctx.meta.heads > 1),
      row: String(first.r + 1),
      rowLabel: labels.rows[first.r],
      column: String(first.c + 1),
      columnLabel: labels.cols[first.c],
    });
    const wrote = t('explorer.exercise.wrote', { empty: first.empty ? 'yes' : 'no', typed: first.typed });
    setHtml(
      out,
      html`${t('explorer.exercise.wrong', {
        ...TAGS,
        score: t('explorer.exercise.score', { right: String(right), total: String(total) }),
        where,
        wrote,
        from: dependsOn(first.step, first.r, first.c, result),
      })}`,
    );
    first.input.focus();
  }
  return { right, total, first: first && { key: stepKey(first.step), row: first.r, col: first.c } };
}

/** Seeded random inputs of the current shapes: the same seed gives every student the same numbers. */
export function newProblem(seed, kind) {
  const state = app.state;
  const result = app.result;
  if (!result) return;
  const names = Object.keys(result.problem).filter((n) => n !== 'options' && INPUTS.has(n));
  const shapes = names.map((n) => {
    const v = result.problem[n];
    return Array.isArray(v[0]) ? [v.length, v[0].length] : [1, v.length];
  });
  const draws = shapes.map((shape) => (kind === 'int' ? { kind: 'randint', shape, low: -2, high: 3 } : { kind: 'randn', shape }));
  // One decimal: np.round(x, 1) (half-to-even there, but a randn draw is never exactly on a half).
  const round1 = (m) => m.map((row) => row.map((x) => Math.round(x * 10) / 10 || 0));
  const drawn = app.engine.random(seed, draws).map((m) => (kind === 'round1' ? round1(m) : m));
  const dims = (d) => d.shape.join(', ');
  const call = (d) =>
    d.kind === 'randint'
      ? `np.random.randint(-2, 3, size=(${dims(d)}))`
      : kind === 'round1'
        ? `np.round(np.random.randn(${dims(d)}), 1)`
        : `np.random.randn(${dims(d)})`;
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
  loadState(next);
}

function pickCells(seed, step, n) {
  // Deterministic: the n cells with the smallest draws of a seeded uniform matrix.
  const [u] = app.engine.random(seed, [{ kind: 'rand', shape: step.shape }]);
  const all = u.flatMap((row, r) => row.map((x, c) => [x, r, c])).sort((a, b) => a[0] - b[0]);
  return all
    .slice(0, n)
    .map(([, r, c]) => [r, c])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

/** The teacher shows or hides one number of an exercise step (the link then lists the cells). */
function toggleCell(key, r, c) {
  const result = app.result;
  const step = result?.trace.steps.find((s) => stepKey(s) === key);
  if (!step) return;
  const next = structuredClone(app.state);
  const ex = next.exercise;
  const cells = hiddenCells(ex, key, step.shape);
  const id = `${r},${c}`;
  if (cells.has(id)) cells.delete(id);
  else cells.add(id);
  ex.cells = { ...(ex.cells ?? {}), [key]: [...cells].map((p) => p.split(',').map(Number)).sort((a, b) => a[0] - b[0] || a[1] - b[1]) };
  loadState(next);
  $('exercise').querySelector(`button.ex-toggle[data-key="${key}"][data-r="${r}"][data-c="${c}"]`)?.focus();
}

export function startExercise() {
  const result = app.result;
  if (!result) return;
  const keys = [...$('ex-steps').querySelectorAll('input:checked')].map((i) => i.value);
  if (!keys.length) {
    $('share-status').textContent = t('explorer.exercise.noStep');
    return;
  }
  const n = Math.max(0, Math.round(Number($('ex-cells').value) || 0));
  const seed = Math.max(0, Math.round(Number($('ex-seed').value) || 0));
  // teacher: this page set it (its link opens this view again); any other exercise link opens as a student's.
  const exercise = { steps: keys, tolerance: Number($('ex-tol').value) || 0.01, teacher: true };
  if (lastSeed !== null && !app.state.preset) exercise.seed = lastSeed;
  if (n > 0) {
    exercise.cells = {};
    for (const key of keys) {
      const step = result.trace.steps.find((s) => stepKey(s) === key);
      exercise.cells[key] = pickCells(seed, step, Math.min(n, step.shape[0] * step.shape[1]));
    }
  }
  const next = structuredClone(app.state);
  next.exercise = exercise;
  next.open = null;
  store.dispatch(setRevealed, false);
  loadState(next);
  $('exercise').scrollIntoView({ block: 'start' });
  $('share-status').textContent = t('explorer.exercise.on');
}

export function fillExerciseSteps() {
  const result = app.result;
  const box = $('ex-steps');
  if (!result || !box) return;
  const checked = new Set([...box.querySelectorAll('input:checked')].map((i) => i.value));
  const multi = result.ctx.meta.heads > 1;
  writeHtml(
    box,
    html`${result.trace.steps
      .filter((s) => !['Q', 'K', 'V'].includes(s.id) || app.state.mode !== 'qkv')
      .map((s) => {
        const key = stepKey(s);
        return html`<label><input type="checkbox" value="${key}"${checked.has(key) && ' checked'}> ${stepLabel(s, multi)}</label>`;
      })}`,
  );
}

/** The students' link: the page's address with only the exercise's paper (student.js) in its hash. */
export async function studentLink() {
  const url = new URL(location.href);
  url.hash = await studentsHash();
  return url.href;
}

async function copyStudentLink() {
  const out = $('ex-result');
  out.className = 'ex-result';
  out.textContent = t('explorer.exercise.making');
  const href = await studentLink();
  try {
    await navigator.clipboard.writeText(href);
    out.className = 'ex-result';
    out.textContent = t('explorer.exercise.copied');
  } catch {
    out.className = 'ex-result';
    setHtml(
      out,
      html`${t('explorer.exercise.copyFromHere')} <input type="text" readonly class="ex-link" aria-label="${t('explorer.exercise.studentLink')}" value="${href}">`,
    );
    out.querySelector('input').select();
  }
}

/** The exercise panel above the steps (hidden until an exercise starts) and its buttons. */
export function installExercise() {
  const exercise = document.createElement('section');
  exercise.id = 'exercise';
  exercise.className = 'panel exercise';
  exercise.setAttribute('aria-labelledby', 'exercise-title');
  exercise.hidden = true;
  $('results').before(exercise);
  exercise.addEventListener('click', (e) => {
    const b = /** @type {HTMLElement} */ (e.target).closest('button');
    if (!b) return;
    if (b.id === 'ex-check') checkExercise();
    if (b.id === 'ex-choose') {
      store.dispatch(setChoosing, !ui().choosing);
      store.flush();
      $('ex-choose')?.focus();
    }
    if (b.classList.contains('ex-toggle')) toggleCell(b.dataset.key, Number(b.dataset.r), Number(b.dataset.c));
    if (b.id === 'ex-student-link') copyStudentLink();
    if (b.id === 'ex-reveal') store.dispatch(setRevealed, !ui().revealed);
    if (b.id === 'ex-leave') {
      const next = structuredClone(app.state);
      next.exercise = null;
      store.dispatch(setRevealed, false);
      store.dispatch(setChoosing, false);
      loadState(next);
    }
  });
  exercise.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && /** @type {HTMLElement} */ (e.target).matches('input.answer')) {
      e.preventDefault();
      checkExercise();
    }
  });
}
