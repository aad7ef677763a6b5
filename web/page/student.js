// A student's exercise view. The teacher's page makes a "paper" from its exercise: the numbers the
// student may see (the inputs, the shown cells, the steps that do not depend on a hidden step) and,
// per answer (a row's hidden cells, together), a salted, deliberately slow hash (scrypt) of the
// answer's numbers as points on a grid of the tolerance. The student's link holds only the paper, so
// no problem, no engine run and no answer reaches the student's page: typed answers are checked by
// hashing them the same way. An old exercise link (it holds the whole problem) is turned into a
// paper on opening, and shown the same way, without the teacher's controls.
import { checkPaper as checkPaperFormat, stateInputs } from 'attention-explorer/share';
import { $, app } from './app.js';
import { tokenLists, traceCounts, decimalsOf } from './state.js';
import { buildProblem } from './problem.js';
import { axisLabels, headOf, stepKey } from './steps.js';
import { mathHtml } from './math.js';
import { fmt } from './format.js';
import { html, setHtml } from 'attention-explorer/html';
import { markScrollables } from './scrollables.js';
import { english, englishId, fillFormula, formulaTemplate } from 'attention-explorer/i18n';
import { t } from './language.js';

// The catalogue's <strong> as that element (explorer.student.*, explorer.exercise.*).
const TAGS = { strong: (/** @type {unknown[]} */ chunks) => html`<strong>${chunks}</strong>` };

/** A cell of a table, as its answer box's label says it (here and on the teacher's view): "query w1, key w2". */
export const cellName = (rowTitle, row, colTitle, column) => t('explorer.exercise.cell', { rowTitle, row, colTitle, column });

/**
 * A step's title as a paper holds it (English, "Scores, head 2": the teacher's page wrote it) in
 * the page's language: a step's English caption (step.<id>) is read back as its message; a title
 * that is no step's caption (an input's name, Q) is shown as written.
 */
function localTitle(title) {
  const [, caption, head] = /^(.*?)(?:, head (\d+))?$/.exec(String(title));
  const id = englishId(caption, 'step.');
  if (!id) return String(title);
  return t('explorer.exercise.step', { title: t(id), multi: head ? 'yes' : 'no', head: head ?? '' });
}

/** A step's formula as a paper holds it (TeX in English, as the teacher's page wrote it) in the page's language. */
const localFormula = (tex) => fillFormula(formulaTemplate(tex), t);

// The parts of a paper's `about` line as makePaper writes them in English (explorer.student.about.*),
// read back into their messages' values.
/** @type {Array<{ part: string, pattern: RegExp, values: (m: RegExpExecArray) => Record<string, unknown> }>} */
const ABOUT_PARTS = [
  { part: 'd_k', pattern: /^d_k = (.+)$/, values: (m) => ({ d_k: m[1] }) },
  { part: 'scale', pattern: /^scale (.+)$/, values: (m) => ({ scale: m[1] }) },
  { part: 'heads', pattern: /^(\d+) heads$/, values: (m) => ({ heads: Number(m[1]) }) },
  { part: 'causal', pattern: /^causal$/, values: () => ({}) },
  { part: 'mask', pattern: /^mask: (.+)$/, values: (m) => ({ kind: m[1] }) },
  { part: 'sigmoid', pattern: /^sigmoid attention$/, values: () => ({}) },
  { part: 'differential', pattern: /^differential attention$/, values: () => ({}) },
];
/**
 * The paper's `about` line (English, "d_k = 4, scale 0.5, 2 heads, causal": the teacher's page wrote
 * it) in the page's language, part by part; a part that is none of these is shown as written.
 */
function localAbout(about) {
  if (!about) return '';
  return String(about)
    .split(english('explorer.student.about.then'))
    .map((text) => {
      for (const { part, pattern, values } of ABOUT_PARTS) {
        const m = pattern.exec(text);
        if (m) return t(`explorer.student.about.${part}`, values(m));
      }
      return text;
    })
    .join(t('explorer.student.about.then'));
}

/**
 * 2: an answer per row (up to ANSWER_CELLS hidden cells of a row together), scrypt-hashed.
 * 1 (students' links made before): a SHA-256 per hidden cell; still checked (checkV1).
 */
export const PAPER_VERSION = 2;
/** The most hidden cells of one row checked as one answer: more would give too little feedback. */
const ANSWER_CELLS = 8;
/**
 * scrypt's cost: N = 2^13 with r = 8 (8 MB) takes about 0.1 s in a browser, so a guess at an
 * answer costs that much too. The paper carries its cost; a link asking for more than the paper's
 * schema allows (formats.js KDF_LIMITS: N up to 2^16) is damaged (it would stall the student's page).
 */
export const KDF = { N: 2 ** 13, r: 8, p: 1 };

// ---- answers as grid points and hashes ---------------------------------------------------------

/** @noble/hashes, loaded when first needed: a page that makes or checks no paper never loads it. */
let noble = null;
const hashes = () =>
  (noble ??= Promise.all([import('@noble/hashes/scrypt.js'), import('@noble/hashes/sha2.js'), import('@noble/hashes/utils.js')]).then(
    (modules) => Object.assign({}, ...modules),
  ));

/**
 * A number as the point of a grid 2 × tolerance wide whose points are shifted by `at` (in grid
 * steps): `at` centres the exact answer on its point, so a typed number is on the same point
 * exactly when it is within ±tolerance of the answer. "inf", "-inf" and "nan" stand for themselves.
 */
function answerPoint(x, width, at) {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  return Math.round(x / width - at);
}

/** The centring shift of an exact answer, in grid steps (-0.5 to 0.5, two decimals: a short link). */
const centring = (x, width) => (Number.isFinite(x) ? Math.round(100 * (x / width - Math.round(x / width))) / 100 : 0);

/** The slow hash of one answer: its points, under the paper's salt, step key and row. */
async function answerHash(paper, key, r, points) {
  const { N, r: blockSize, p } = paper.kdf;
  const { scryptAsync, bytesToHex } = await hashes();
  const bytes = await scryptAsync(`${key}|${r}|${points.join(',')}`, `${paper.salt}|${key}|${r}`, { N, r: blockSize, p, dkLen: 8 });
  return bytesToHex(bytes);
}

/** What a student typed, as a number: "−0.5" (the page's minus), "0,5" (a decimal comma), "inf", "-∞" read too; NaN if none. */
export function readAnswer(text) {
  const t = String(text)
    .trim()
    .replace(/\u2212/g, '-')
    .replace(/^(-?\d*),(\d+)$/, '$1.$2');
  if (/^[-]?\s*(inf|infinity|∞)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  return t === '' ? NaN : Number(t);
}

/** True when the typed numbers (one per cell of the answer) are all within the tolerance. */
async function answerMatches(paper, key, answer, typed) {
  const width = 2 * paper.tolerance;
  const points = typed.map((x, i) => answerPoint(x, width, answer.at[i]));
  if (points.includes('nan')) return false;
  return (await answerHash(paper, key, answer.r, points)) === answer.hash;
}

// Version 1: SHA-256 of `salt|key|row|col|round(x / s)`, s = tolerance / 10, one per hidden cell.
const GRID_V1 = 10;

/** True when a typed number is within about the tolerance of a version-1 paper's hidden cell. */
async function checkV1(paper, key, r, c, typed) {
  const { sha256, bytesToHex, utf8ToBytes } = await hashes();
  const cellHashV1 = (salt, point) => bytesToHex(sha256(utf8ToBytes(`${salt}|${key}|${r}|${c}|${point}`))).slice(0, 16);
  const step = paper.tolerance / GRID_V1;
  const want = paper.steps.find((s) => s.key === key).hashes[r][c];
  if (Number.isNaN(typed)) return false;
  if (!Number.isFinite(typed)) return cellHashV1(paper.salt, typed > 0 ? 'inf' : '-inf') === want;
  const p = Math.round(typed / step);
  for (let d = -GRID_V1; d <= GRID_V1; d++) if (cellHashV1(paper.salt, p + d) === want) return true;
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
 * A hidden row's answers: its hidden cells in groups of up to ANSWER_CELLS, each group one answer
 * { r, c: [columns], at: [centring shifts], hash }.
 */
async function rowAnswers(paper, key, r, row, hiddenColumns) {
  const width = 2 * paper.tolerance;
  const answers = [];
  for (let i = 0; i < hiddenColumns.length; i += ANSWER_CELLS) {
    const c = hiddenColumns.slice(i, i + ANSWER_CELLS);
    const at = c.map((j) => centring(row[j], width));
    const hash = await answerHash(
      paper,
      key,
      r,
      c.map((j, k) => answerPoint(row[j], width, at[k])),
    );
    answers.push({ r, c, at, hash });
  }
  return answers;
}

/**
 * The student's paper for a state with an exercise, from its trace (and the step context ctx:
 * token names). Holds what the student may see and a slow hash per answer, never a hidden number.
 * `kdf`: scrypt's cost, KDF unless told (an old link holds its problem anyway: it needs no slow hash).
 */
export async function makePaper(state, problem, trace, ctx, { salt = randomSalt(), kdf = KDF } = {}) {
  const ex = state.exercise;
  const decimals = decimalsOf(state);
  const tolerance = Number(ex.tolerance) > 0 ? Number(ex.tolerance) : 0.01;
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
    const numbers = (n) => Array.from({ length: n }, (_, i) => String(i + 1));
    let rows = numbers(m.length);
    let cols = numbers(m[0].length);
    // A token's row (or column, laid out as columns) is named as the answers' rows name it, not
    // numbered ("w1", not "1"); new keys after a cache are the last of the keys' names.
    const side = { Q: 'tokensQ', X: 'tokensQ', K: 'tokensK', V: 'tokensK', X_kv: 'tokensK' }[name];
    if (side && Array.isArray(ctx[side])) {
      const byColumns = state.options?.layout === 'columns';
      const n = byColumns ? m[0].length : m.length;
      const list = ctx[side].slice(-n);
      const names = Array.from({ length: n }, (_, i) => list[i] ?? `t${i + 1}`);
      if (byColumns) cols = names;
      else rows = names;
    }
    given.push({ title: name, tex: '', rows, cols, data: m.map((row) => row.map(toJsonNumber)) });
  }
  trace.steps.forEach((s, i) => {
    // An input as it is (or its per-head slice) is given above already.
    if (hiddenOrAfter.has(i) || (s.inputs.length === 0 && s.given.every((g) => g === s.id))) return;
    const labels = axisLabels(s, ctx);
    given.push({
      title: titleOf(s),
      tex: s.tex,
      rows: labels.rows,
      cols: labels.cols,
      data: s.data.map((row) => row.map((x) => roundTo(x, decimals))),
    });
  });
  const steps = [];
  for (const key of keys) {
    const s = trace.steps.find((t) => stepKey(t) === key);
    if (!s) continue;
    const labels = axisLabels(s, ctx);
    const hidden = hiddenCellSet(ex, key, s.shape);
    const cells = s.data.map((row, r) => row.map((x, c) => (hidden.has(`${r},${c}`) ? null : roundTo(x, decimals))));
    const answers = [];
    for (const [r, row] of s.data.entries()) {
      const hiddenColumns = row.map((_, c) => c).filter((c) => hidden.has(`${r},${c}`));
      answers.push(...(await rowAnswers({ salt, tolerance, kdf }, key, r, row, hiddenColumns)));
    }
    steps.push({
      key,
      title: titleOf(s),
      tex: s.tex,
      rows: labels.rows,
      cols: labels.cols,
      rowTitle: labels.rowTitle,
      colTitle: labels.colTitle,
      cells,
      answers,
    });
  }
  const m = trace.meta;
  const o = state.options;
  /** @type {Array<[string, Record<string, unknown>?] | false | undefined>} */
  const parts = [
    ['d_k', { d_k: String(m.d_k) }],
    ['scale', { scale: fmt(m.scale, decimals) }],
    m.heads > 1 && ['heads', { heads: m.heads }],
    o.causal && ['causal'],
    m.mask_kind && m.mask_kind !== 'none' && ['mask', { kind: m.mask_kind }],
    o.score_fn === 'sigmoid' ? ['sigmoid'] : o.differential && ['differential'],
  ];
  const about = parts
    .filter((p) => Array.isArray(p))
    .map(([part, values]) => english(`explorer.student.about.${part}`, values))
    .join(english('explorer.student.about.then'));
  return {
    v: PAPER_VERSION,
    salt,
    kdf,
    tolerance,
    decimals,
    about,
    given,
    steps,
    ...(ex.seed !== undefined ? { seed: ex.seed } : {}),
  };
}

/** The paper for a state whose exercise came in a full link (old links): the problem is run here. */
export async function paperFromState(state) {
  const { problem } = buildProblem(state, () => null);
  if (!problem || !Array.isArray(state.exercise.steps)) return null;
  try {
    const trace = app.engine.run(problem);
    const tokens = tokenLists(state, traceCounts(trace));
    // The link holds the problem: a slow hash would guard nothing, so the cheapest scrypt.
    return await makePaper(
      state,
      problem,
      trace,
      { steps: trace.steps, tokensQ: tokens.q, tokensK: tokens.k },
      { kdf: { N: 2, r: 1, p: 1 } },
    );
  } catch {
    return null; // shown as a damaged link
  }
}

/** A state that opens as a student's exercise: a paper, or an exercise the teacher did not start here. */
export function isStudentState(state) {
  return Boolean(state?.student) || Boolean(state?.exercise && !state.exercise.teacher);
}

// ---- the student's view -----------------------------------------------------------------------

/** A step's table: `body(i)`, row i's cells (html``). */
function tableHtml(title, rows, cols, body, caption) {
  const head = cols.map((c) => html`<th scope="col">${c}</th>`);
  const lines = rows.map((r, i) => html`<tr><th scope="row">${r}</th>${body(i)}</tr>`);
  // In its own sideways scroller: a phone's page never scrolls sideways (a wide step scrolls here).
  return html`<div class="table-scroll"><table class="matrix ex-table"><caption class="visually-hidden">${caption}</caption><thead><tr><th></th>${head}</tr></thead><tbody>${lines}</tbody></table></div>`;
}

const shape = (m) => html`<span class="shape">${m.length} × ${m[0]?.length ?? 0}</span>`;

/**
 * Draws the student's exercise (and nothing else of the page) from a paper, checked first against
 * its schema (formats.js); a paper that does not fit, or `damaged` (why the link's state did not
 * fit), shows why in the exercise's place.
 */
export function renderStudent(paper, damaged = null) {
  document.body.classList.add('student');
  const css = document.createElement('link');
  css.rel = 'stylesheet';
  css.href = new URL('share.css', import.meta.url).href;
  document.head.appendChild(css);
  document.querySelector('.tagline')?.remove(); // it tells how to type a problem: not here
  document.querySelector('.site-nav')?.remove(); // a way off the exercise: not here either
  const skip = document.querySelector('a.skip');
  if (skip) {
    skip.textContent = t('explorer.student.skip');
    skip.href = '#exercise';
  }
  const box = document.createElement('section');
  box.id = 'exercise';
  box.className = 'panel exercise student-exercise';
  box.setAttribute('aria-labelledby', 'exercise-title');
  box.tabIndex = -1;
  /** @type {{ paper?: object, error?: string }} */
  const checked = damaged ? { error: damaged } : paper ? checkPaperFormat(paper) : { error: t('explorer.student.notComputed') };
  if (checked.error) {
    setHtml(box, html`<h2 id="exercise-title">${t('explorer.student.title')}</h2><p class="error"></p>`);
    box.querySelector('.error').textContent = t('explorer.student.damaged', {
      error: /** @type {{ message?: unknown }} */ (checked).message ?? checked.error,
    });
    $('app').prepend(box);
    $('status').textContent = t('explorer.student.damagedStatus');
    return;
  }
  paper = checked.paper;
  const d = Math.min(12, Math.max(0, Math.round(Number(paper.decimals)) || 0));
  const tol = fmt(Number(paper.tolerance), 8).replace(/\.?0+$/, '');
  // A paper with no steps (a damaged link's) names none.
  const names =
    paper.steps
      .map((s) => html`<strong>${localTitle(s.title)}</strong>`)
      .reduce((first, second) => (first === null ? second : html`${t('explorer.student.names', { first, second })}`), null) ?? html``;
  const steps = paper.steps.map(
    (s) => html`<div class="ex-step" data-key="${s.key}"><h3>${localTitle(s.title)} ${shape(s.cells)}</h3>
      <div class="formula">${s.tex && mathHtml(localFormula(String(s.tex)), true)}</div>${tableHtml(
        s.title,
        s.rows,
        s.cols,
        (r) =>
          s.cells[r].map((v, c) => {
            if (v !== null) return html`<td class="given">${fmt(fromJsonNumber(v), d)}</td>`;
            return html`<td><input class="answer" inputmode="decimal" autocomplete="off" spellcheck="false" data-id="${`${s.key}/${r}/${c}`}"
        aria-label="${t('explorer.exercise.answer', {
          step: localTitle(s.title),
          cell: cellName(s.rowTitle ?? t('explorer.student.row'), s.rows[r], s.colTitle ?? t('explorer.student.column'), s.cols[c]),
        })}"></td>`;
          }),
        t('explorer.exercise.caption', { step: localTitle(s.title) }),
      )}</div>`,
  );
  const given = (paper.given ?? []).map(
    (g) =>
      html`<div class="ex-step"><h4>${localTitle(g.title)} ${shape(g.data)}</h4>${g.tex && html`<div class="formula">${mathHtml(localFormula(String(g.tex)), true)}</div>`}${tableHtml(
        g.title,
        g.rows,
        g.cols,
        (r) => g.data[r].map((v) => html`<td>${fmt(fromJsonNumber(v), g.tex ? d : Math.max(d, 4))}</td>`),
        localTitle(g.title),
      )}</div>`,
  );
  const task = t('explorer.student.task', {
    ...TAGS,
    names,
    seeded: paper.seed !== undefined ? 'yes' : 'no',
    seed: String(paper.seed),
    tolerance: tol,
    together: together(paper) ? 'yes' : 'no',
  });
  const page = html`<h2 id="exercise-title">${t('explorer.student.title')}</h2>
    <p class="task">${task}</p>
    <p class="hint">${localAbout(paper.about)}</p>${steps}<div class="ex-actions"><button type="button" id="ex-check" class="primary">${t('explorer.exercise.check')}</button></div>
    <p id="ex-result" class="ex-result" role="status" aria-live="polite"></p>
    <h3>${t('explorer.student.given')}</h3><div class="ex-given">${given}</div>`;
  setHtml(box, page);
  $('app').prepend(box);
  requestAnimationFrame(() => markScrollables({ within: box }));
  box.addEventListener('click', (e) => {
    if (/** @type {HTMLElement} */ (e.target).closest('#ex-check')) checkPaper(paper);
  });
  box.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && /** @type {HTMLElement} */ (e.target).matches('input.answer')) {
      e.preventDefault();
      checkPaper(paper);
    }
  });
  $('status').textContent = t('explorer.student.status');
}

/**
 * The paper's answers in reading order: { step, r, c: [columns], inputs, ok(typed) }. A version-2
 * answer is a row's hidden cells (up to ANSWER_CELLS) checked together; a version-1 one, a cell.
 */
function answersOf(paper, box) {
  const input = (key, r, c) => box.querySelector(`input.answer[data-id="${CSS.escape(`${key}/${r}/${c}`)}"]`);
  return paper.steps
    .flatMap((step) => {
      if (paper.v === 1) {
        return step.hashes.flatMap((row, r) =>
          row.flatMap((h, c) =>
            h === null
              ? []
              : [
                  {
                    step,
                    r,
                    c: [c],
                    inputs: [input(step.key, r, c)],
                    ok: ([x]) => checkV1(paper, step.key, r, c, x),
                  },
                ],
          ),
        );
      }
      return step.answers.map((a) => ({
        step,
        r: a.r,
        c: a.c,
        inputs: a.c.map((c) => input(step.key, a.r, c)),
        ok: (typed) => answerMatches(paper, step.key, a, typed),
      }));
    })
    .filter((a) => a.inputs.every(Boolean));
}

/** True when some answer of the paper is several numbers of a row, checked together. */
const together = (paper) => paper.v !== 1 && paper.steps.some((s) => s.answers.some((a) => a.c.length > 1));

let checking = false;

/**
 * A hint that gives nothing away, for a row of attention weights typed in full: its sum (with the
 * row's given weights) against the 1 that every row of softmax weights sums to. Nothing when the row
 * sums to 1 within the tolerance, when a box is empty or unread, or when a sink may take a share or
 * the weights are sigmoid or differential attention's.
 */
function weightsHint(paper, step, r, c, typedText) {
  // Rows of sigmoid weights need not sum to 1; differential ones sum to 1 − λ.
  if (!/^weights:/.test(step.key) || /sink|sigmoid|differential/i.test(paper.about ?? '')) return '';
  const typed = typedText.map((x) => (x === '' ? NaN : readAnswer(x)));
  // The whole row is known: its other numbers are given (not hidden and answered apart).
  if (!typed.every(Number.isFinite) || !step.cells?.[r]?.every((v, j) => v !== null || c.includes(j))) return '';
  const given = step.cells[r].filter((v, j) => v !== null && !c.includes(j)).map(fromJsonNumber);
  const sum = [...typed, ...given].reduce((a, x) => a + x, 0);
  const tol = Number(paper.tolerance) > 0 ? Number(paper.tolerance) : 0.01;
  if (!Number.isFinite(sum) || Math.abs(sum - 1) <= tol * Math.max(1, typed.length)) return '';
  return t('explorer.student.weightsHint', { sum: fmt(sum, 4) });
}

/** Marks every answer box right or wrong and says which to fix first. */
async function checkPaper(paper) {
  if (checking) return;
  checking = true;
  const box = $('exercise');
  const out = $('ex-result');
  const button = $('ex-check');
  button.disabled = true;
  out.className = 'ex-result';
  out.textContent = t('explorer.student.checking');
  let right = 0,
    total = 0,
    answersRight = 0,
    answers = 0,
    first = null;
  try {
    for (const answer of answersOf(paper, box)) {
      const typedText = answer.inputs.map((i) => i.value.trim());
      const ok = await answer.ok(typedText.map(readAnswer));
      total += answer.inputs.length;
      answers++;
      if (ok) {
        right += answer.inputs.length;
        answersRight++;
      }
      for (const input of answer.inputs) {
        input.classList.toggle('right', ok);
        input.classList.toggle('wrong', !ok);
        input.setAttribute('aria-invalid', String(!ok));
      }
      if (!ok && !first) first = { ...answer, typedText };
    }
  } finally {
    checking = false;
    button.disabled = false;
  }
  if (!first) {
    out.className = 'ex-result all-right';
    // Counted as the score below counts: answers (a row's numbers) when they are checked together.
    out.textContent = together(paper)
      ? t('explorer.student.allAnswersRight', { answers: String(answers), total: String(total) })
      : t('explorer.exercise.allRight', { total: String(total) });
    return;
  }
  const { step, r, c, typedText } = first;
  // Numbers and the learner's labels in a list: the code's ", " between them, as the tables write them.
  const where = t('explorer.student.fixCell', {
    step: localTitle(step.title),
    row: String(r + 1),
    rowLabel: step.rows[r],
    several: c.length === 1 ? 'no' : 'yes',
    columns: c.map((j) => j + 1).join(', '),
    columnLabels: c.map((j) => step.cols[j]).join(', '),
  });
  const wrote = t('explorer.student.wrote', {
    empty: typedText.every((x) => x === '') ? 'yes' : 'no',
    several: c.length === 1 ? 'no' : 'yes',
    typed: typedText.map((x) => (x === '' ? t('explorer.student.nothing') : x)).join(', '),
  });
  out.className = 'ex-result some-wrong';
  const score = together(paper)
    ? t('explorer.student.score', { right: String(answersRight), total: String(answers) })
    : t('explorer.exercise.score', { right: String(right), total: String(total) });
  setHtml(out, html`${t('explorer.student.wrong', { ...TAGS, score, where, wrote, hint: weightsHint(paper, step, r, c, typedText) })}`);
  (first.inputs.find((i) => i.value.trim() === '') ?? first.inputs[0]).focus();
}
