// Which numbers a number was computed from (its precedents) and which it feeds (its dependents),
// as a spreadsheet traces them, derived from the trace's step graph alone: each step's `inputs`
// and how it reads each of them (`reads`, written by the core where the step is described:
// cpp/steps.cpp read_of), its `given` problem inputs, `axes` and `features`. A read ties axes of
// the step to axes of the input (the same query, key or feature, or shifted by a cache or a
// head's slice); every other axis of the input is read whole (a sum or a softmax runs along it).
// The problem's own inputs (`given`) are read by the rules of givenAxes below.
// Cells are [row, col] in each matrix's own layout (the columns layout swaps every matrix, problem
// inputs too; a bias is one row).

/** The token axis of a step: queries or keys, whichever it has. */
const tokenAxis = (axes) => axes.find((a) => a === 'queries' || a === 'keys');

/**
 * Where a weight's gradient (dW_*, db_*: both axes are features) keeps its two features: `@0` and
 * `@1` name a cell's row and column; the columns layout swaps them. Returns [what the weight
 * multiplied, what it made] as positions.
 */
const weightAxes = (columns) => (columns ? ['@1', '@0'] : ['@0', '@1']);

/**
 * How `step` reads its `at`-th input step: ties [stepAxis, inputAxis, shift] (the input's index on
 * inputAxis = the step's on stepAxis + shift). The core says them in the rows layout; a tie on the
 * step's row or column (a weight's gradient, features × features) swaps in the columns layout.
 */
function stepTies(step, at, columns) {
  const [row, column] = weightAxes(columns); // the rows layout's row and column, in the trace's layout
  return step.reads[at].ties.map((t) => [t.step === 'row' ? row : t.step === 'column' ? column : t.step, t.input, t.shift]);
}

/** The axes of a problem input `name` as `step` reads it (rows layout), or null if it is not a matrix the rules know. */
function givenAxes(step, name, columns) {
  const first = step.features?.[0] ?? 0;
  const token = tokenAxis(step.axes);
  if (name === 'dO')
    return {
      axes: ['queries', 'features'],
      ties: [
        ['queries', 'queries', 0],
        ['features', 'features', 0],
      ],
    };
  if (step.id === 'dhead_output') return { axes: ['concat', 'features'], ties: [['features', 'concat', first]] };
  if (/^dW_/.test(step.id))
    return { axes: [step.id === 'dW_Q' ? 'queries' : 'keys', 'model'], ties: [[weightAxes(columns)[0], 'model', 0]] };
  if (/^dX/.test(step.id)) return { axes: ['model', 'features'], ties: [['features', 'model', 0]] };
  if (step.id === 'X_pos' || step.id === 'positional') {
    return {
      axes: ['queries', 'features'],
      ties: [
        ['queries', 'queries', 0],
        ['features', 'features', 0],
      ],
    };
  }
  if (name === 'X' || name === 'X_kv') return { axes: [token, 'model'], ties: [[token, token, 0]] };
  if (/^W_[QKV]$/.test(name)) return { axes: ['model', 'features'], ties: [['features', 'features', first]] };
  if (name === 'W_O') return { axes: ['concat', 'features'], ties: [['features', 'features', 0]] };
  if (/^b_[QKV]$/.test(name)) return { axes: ['features'], ties: [['features', 'features', first]], vector: true };
  if (name === 'b_O') return { axes: ['features'], ties: [['features', 'features', 0]], vector: true };
  if (/^(Q|K|V|past_K|past_V)$/.test(name))
    return {
      axes: [token, 'features'],
      ties: [
        [token, token, 0],
        ['features', 'features', first],
      ],
    };
  if (name === 'mask')
    return {
      axes: ['queries', 'keys'],
      ties: [
        ['queries', 'queries', 0],
        ['keys', 'keys', 0],
      ],
    };
  return null;
}

function shapeOf(value) {
  if (!Array.isArray(value)) return null;
  return Array.isArray(value[0]) ? [value.length, value[0].length] : [1, value.length];
}

/**
 * The cells of a matrix with axes `axes`, shape `shape`, whose indices on tied axes are `fixed`
 * (an axis by name, or by position: `@0` rows, `@1` columns; a missing axis is read whole).
 */
function cellsOf(axes, shape, fixed) {
  const ranges = axes.map((a, d) => {
    const key = `@${d}` in fixed ? `@${d}` : a;
    if (!(key in fixed)) return Array.from({ length: shape[d] }, (_, i) => i);
    const i = fixed[key];
    return i >= 0 && i < shape[d] ? [i] : [];
  });
  const cells = [];
  for (const r of ranges[0]) for (const c of ranges[1]) cells.push([r, c]);
  return cells;
}

/** The index of each axis of a cell [row, col] of a matrix with `axes`. */
const indexOf = (axes, [r, c]) => ({ [axes[0]]: r, [axes[1]]: c, '@0': r, '@1': c });

/** A step's or problem input's axes in its own layout (the columns layout swaps them). */
const ownAxes = (axes, columns, vector) => (vector ? ['row', ...axes] : columns ? [axes[1], axes[0]] : axes);

/** Direct precedents of cells of step `index`: [{ step, cells } | { input, cells }]. */
function directPrecedents(trace, index, cells, problem) {
  const step = trace.steps[index];
  const columns = trace.meta.layout === 'columns';
  const out = [];
  for (const [at, j] of step.inputs.entries()) {
    const input = trace.steps[j];
    const ties = stepTies(step, at, columns);
    const found = cells.flatMap((cell) => {
      const at = indexOf(step.axes, cell);
      const fixed = Object.fromEntries(ties.map(([s, i, shift]) => [i, at[s] + shift]));
      return cellsOf(input.axes, input.shape, fixed);
    });
    out.push({ step: j, cells: found });
  }
  for (const name of step.given) {
    const rule = givenAxes(step, name, columns);
    const shape = shapeOf(problem?.[name] ?? problem?.options?.[name]); // the mask is an option
    if (!rule || !shape) continue;
    const axes = ownAxes(rule.axes, columns, rule.vector);
    const found = cells.flatMap((cell) => {
      const at = indexOf(step.axes, cell);
      const fixed = Object.fromEntries(rule.ties.map(([s, i, shift]) => [i, at[s] + shift]));
      return cellsOf(axes, shape, fixed);
    });
    out.push({ input: name, cells: found });
  }
  return out;
}

/** Direct dependents of cells of step `index`: [{ step, cells }] of the steps that read it. */
function directDependents(trace, index, cells) {
  const source = trace.steps[index];
  const columns = trace.meta.layout === 'columns';
  const out = [];
  trace.steps.forEach((step, t) => {
    if (!step.inputs.includes(index)) return;
    const found = step.inputs.flatMap((j, k) => {
      if (j !== index) return [];
      const ties = stepTies(step, k, columns);
      return cells.flatMap((cell) => {
        const at = indexOf(source.axes, cell);
        const fixed = Object.fromEntries(ties.map(([s, i, shift]) => [s, at[i] - shift]));
        return cellsOf(step.axes, step.shape, fixed);
      });
    });
    out.push({ step: t, cells: found });
  });
  return out;
}

/**
 * The same keys or values in another head's steps: heads of one grouped-query (GQA) group read one
 * K and V, which the trace repeats per head (same id, same kv_group, same numbers).
 */
function sharedWith(trace, index) {
  const step = trace.steps[index];
  // Gradient steps (ids from "d": dK, dV_cache, ...) differ per head: they are summed, not shared.
  if (
    step.id.startsWith('d') ||
    step.head == null ||
    step.head < 0 ||
    step.kv_group == null ||
    !step.axes.includes('keys') ||
    !step.axes.includes('features')
  )
    return [];
  return trace.steps.flatMap((s, i) =>
    i !== index && s.id === step.id && s.kv_group === step.kv_group && s.head !== step.head ? [i] : [],
  );
}

/**
 * Follows `direct` through the graph: every step reached, its cells, and its nearest level (1 =
 * direct). The start's own numbers in other heads of its GQA group come at level 0.
 */
function follow(trace, index, row, col, direct, depth) {
  const key = ([r, c]) => `${r},${c}`;
  const reached = new Map(); // step index or "in:name" -> { level, cells: Map }
  let next = new Map();
  const reach = (found, level) => {
    const id = found.input != null ? `in:${found.input}` : found.step;
    let entry = reached.get(id);
    if (!entry) reached.set(id, (entry = { ...found, level, cells: new Map() }));
    for (const cell of found.cells) {
      if (entry.cells.has(key(cell))) continue;
      entry.cells.set(key(cell), cell);
      if (found.input != null) continue;
      if (!next.has(found.step)) next.set(found.step, []);
      next.get(found.step).push(cell);
    }
  };
  let frontier = [{ step: index, cells: [[row, col]] }];
  for (const j of sharedWith(trace, index)) {
    reach({ step: j, cells: [[row, col]] }, 0);
    frontier.push({ step: j, cells: [[row, col]] });
  }
  next = new Map();
  for (let level = 1; frontier.length && level <= depth; level++) {
    for (const { step, cells } of frontier) {
      for (const found of direct(step, cells)) {
        reach(found, level);
        if (found.step != null) for (const j of sharedWith(trace, found.step)) reach({ step: j, cells: found.cells }, level);
      }
    }
    frontier = [...next].map(([step, cells]) => ({ step, cells }));
    next = new Map();
  }
  return [...reached.values()]
    .map(({ cells, ...rest }) => ({ ...rest, cells: [...cells.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]) }))
    .filter((e) => e.cells.length)
    .sort((a, b) => a.level - b.level || (a.step ?? -1) - (b.step ?? -1));
}

/**
 * The cells a cell of step `stepIndex` was computed from, in earlier steps and (with `problem`,
 * whose matrices are arrays) in the problem's inputs: [{ step, level, cells }] and
 * [{ input, level, cells }], level 1 for what it reads directly (0: the same number in another
 * head of its GQA group). `depth` limits the levels.
 * @type {typeof import('./index.js').precedents}
 */
export function precedents(trace, stepIndex, row, col, { problem, depth = Infinity } = {}) {
  return follow(trace, stepIndex, row, col, (i, cells) => directPrecedents(trace, i, cells, problem), depth);
}

/**
 * The cells in later steps computed from a cell of step `stepIndex`: [{ step, level, cells }].
 * @type {typeof import('./index.js').dependents}
 */
export function dependents(trace, stepIndex, row, col, { depth = Infinity } = {}) {
  return follow(trace, stepIndex, row, col, (i, cells) => directDependents(trace, i, cells), depth);
}
