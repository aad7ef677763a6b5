// The engine: wraps an instantiated wasm module in the public API (run, runAll, explain,
// decode, tiles, recurrent, onlineSoftmax, gradients, parseMatrix, parseMatrixDetailed, parseCell, random, attention). Problem JSON is checked and
// normalised by problem.js, packed and the trace read back by wire.js, JSON helpers are in
// json.js. No attention maths happens here.
//
// Shared by index.js (browsers, workers, bundlers) and node.js (Node); both only differ in how
// they get the .wasm bytes.
import { diagnostics, guardedAttention } from './fast.js';
import { english, explanationWords } from './i18n.js';
import { isNumberView } from './input.js';
import { loadModule, moduleGuard, unwrap, version, wireTable } from './load.js';
import { createModel, modelCatalogue } from './model.js';
import {
  blockSizes,
  cellIndex,
  chunkSize,
  cellStep,
  drawsFrom,
  onlineSoftmaxFrom,
  ownArray,
  problemKeys,
  problemReader,
  said,
  seedFrom,
  valueWords,
} from './problem.js';
import { englishTitle, problemWire, traceReader } from './wire.js';

export { version };

function nested({ rows, cols, data }) {
  // Plain loops: Array.from over subarrays costs ten times more for the small matrices of a trace.
  const out = new Array(rows);
  for (let i = 0, k = 0; i < rows; i++) {
    const row = new Array(cols);
    for (let j = 0; j < cols; j++, k++) row[j] = data[k];
    out[i] = row;
  }
  return out;
}

// The fields the core wrote (cpp/bindings_shared.h writes them from one table), and the words in
// English (en.json) where the core's English text used to be: `text`, the terms' `caption` and
// `headers` (the core's headers, message ids or symbols, are the terms' `header_ids`), the
// derivation's `lines` (the core's, with its words as placeholders, are `line_ids`).
/** @returns {import('./index.js').Explanation} */
function explanationFrom(raw) {
  /** @type {any} */
  const out = {};
  for (const [key, value] of Object.entries(raw)) out[key] = isNumberView(value) ? Array.from(value) : value;
  if (out.source_head < 0) out.source_head = null;
  if (out.terms) {
    const { headers, ...terms } = out.terms;
    out.terms = { caption: '', ...terms, headers, header_ids: headers };
  }
  // The derivation's TeX as the core wrote it (words as @{formula.*} placeholders) is `line_ids`.
  out.line_ids = out.lines;
  const words = explanationWords(out);
  out.text = words.text;
  out.lines = words.lines;
  if (out.terms) Object.assign(out.terms, words.terms);
  return out;
}

// What a problem looked like, for the message after a crash (shapes, not numbers). `args`: the
// arguments of the call, a normalised problem (problem.js) first when there is one.
function sketch(args) {
  const text = (v) =>
    v?.vector
      ? `${v.rows} numbers`
      : v && typeof v === 'object' && 'rows' in v && 'cols' in v
        ? `${v.rows}x${v.cols}`
        : typeof v === 'string'
          ? `text (${v.length} characters)`
          : isNumberView(v)
            ? `${v.length} numbers`
            : JSON.stringify(v);
  const [first, ...rest] = args;
  if (first && typeof first === 'object' && !Array.isArray(first)) {
    let shown = first;
    if (first.inputs && first.options) {
      const { mask, ...inputs } = first.inputs;
      shown = { ...inputs, options: mask === undefined ? first.options : { ...first.options, mask } };
    }
    const parts = Object.entries(shown).map(
      ([k, v]) => `${k} ${k === 'options' ? JSON.stringify(v, (key, x) => (key === 'mask' ? text(x) : x)) : text(v)}`,
    );
    return [parts.join(', '), ...rest.map((r) => JSON.stringify(r))].join('; ');
  }
  return args
    .map((a) => (typeof a === 'string' ? JSON.stringify(a.length > 60 ? `${a.slice(0, 57)}...` : a) : JSON.stringify(a)))
    .join(', ');
}

// How one module is called: `invoke(name, args, shown, label)` calls `module[name]` and
// `callPacked(name, problem, rest)` with the problem packed, both through `guard` (load.js
// moduleGuard). A crash (anything thrown) is reported through the guard with `shown` (the
// arguments as the user would recognise them, or a function making them) and `label` (the
// function it names); an input error comes back returned, and is thrown here.
function moduleCalls(guard, problemFrom, problemPacker) {
  const invoke = (name, args, shown = args, label = name) => {
    const module = guard.module();
    let result;
    try {
      result = module[name](...args);
    } catch (error) {
      if (error instanceof WebAssembly.RuntimeError) {
        throw guard.crashed(label.slice(1), error, sketch(typeof shown === 'function' ? shown() : shown));
      }
      throw error;
    }
    return unwrap(result, english);
  };

  // The module's scratch block for packed problems (cpp/bindings_shared.h), found again after a reload.
  let scratch = null;
  // Calls `name` (_run, _explain, _decode, _tiles or _gradients) with `problem` packed (cpp/wire.h), then the arguments
  // `rest()` returns (checked after the problem, so the problem's errors come first). The numbers
  // go straight into the scratch block (its count is the argument) or, when they do not fit, into
  // one Float64Array. Returns [result, normalised problem].
  const callPacked = (name, problem, rest = () => []) => {
    // What a crash message shows: the problem as normalised without the scratch block.
    const shown =
      (...extra) =>
      () => [problemFrom(problem), ...extra];
    if (scratch === null || scratch.module !== guard.module()) {
      const [address, size] = invoke('_runScratch', [], shown(), name);
      scratch = { module: guard.module(), index: address / 8, size };
    }
    const current = guard.module();
    // Nothing runs in the module between here and the call, so the heap view stays valid.
    const heap = current.HEAPF64 ?? new Float64Array(current._fastMemory().buffer);
    const { index, size } = scratch;
    let used = problemPacker.headerLength;
    let fits = true;
    const alloc = (n) => {
      if (fits && used + n <= size) {
        used += n;
        return [heap, index + used - n];
      }
      fits = false;
      return ownArray(n);
    };
    let normalised = problemFrom(problem, alloc);
    if (fits) problemPacker.packInPlace(normalised, heap, index, alloc);
    let argument = used;
    if (!fits) {
      // More than the scratch block holds: converted again into arrays of its own, then packed.
      normalised = problemFrom(problem);
      argument = problemPacker.packed(normalised);
    }
    const extra = rest();
    return [invoke(name, [argument, ...extra], shown(...extra)), normalised];
  };
  return { invoke, callPacked };
}

// The backward pass's step ids are the forward ones' (or an input's) with a d before them
// (cpp/steps.cpp), and no forward step id starts with d: their cells are explained by the
// walkthroughs module, which has the gradients.
const isGradientStep = (id) => id.startsWith('d');

/**
 * Wraps an instantiated Emscripten module (the core, attention.wasm) in the public engine API.
 * `reload` (optional) returns a promise of a fresh module: after a crash inside the wasm (a
 * WebAssembly.RuntimeError such as "unreachable", or an abort), the dead module is dropped and
 * replaced by a fresh one. `loadWalkthroughs` (optional) resolves to [module, reload] of the
 * walkthroughs module (attention-walkthroughs.wasm: decode, tiles, onlineSoftmax, gradients and
 * the explanation of gradient cells), loaded by engine.loadWalkthroughs(). Throws when the
 * module's wire format is not this JS's (load.js wireTable).
 * @type {typeof import('./index.js').createEngine}
 */
export function createEngine(wasm, reload, loadWalkthroughs, loadModelModule) {
  const layout = wireTable(wasm, '_wireLayout');
  const problemFrom = problemReader(layout);
  const problemPacker = problemWire(layout);
  const traces = traceReader(layout);
  const guard = moduleGuard(wasm, reload);
  const { invoke, callPacked } = moduleCalls(guard, problemFrom, problemPacker);

  // The walkthroughs module: its calls once loaded, the load while it runs.
  let walkthroughs = null;
  let walkthroughsLoading = null;
  // `step`: explain of a gradient step's cell.
  const walkthroughCalls = (name, step) => {
    if (walkthroughs !== null) return walkthroughs;
    throw step === undefined ? said('needs-walkthroughs', { name }) : said('needs-walkthroughs-explain', { step });
  };

  // The model module (attention-model.wasm): a tiny transformer that trains, loaded on demand.
  let modelModule = null;
  let modelLoading = null;
  const modelCalls = (name) => {
    if (modelModule !== null) return modelModule;
    throw said('needs-model', { name });
  };

  // { values, format }: the matrix and the name of the format it was read as (cpp/parse.h).
  const parseMatrixDetailed = (text, name, caller) => {
    if (typeof text !== 'string') throw said('takes-text', { caller, value: valueWords(text) });
    const raw = invoke('_parseMatrix', [text, String(name)]);
    return { values: nested(raw), format: raw.format };
  };
  // `settings.reuse`: an earlier trace whose matrices are refilled with this one's numbers where
  // a matrix of the same place and shape is (no new arrays: at 1,024 tokens making them, and
  // collecting the last ones, was most of an edit's time in the page).
  const run = (problem, settings) => {
    let reuse;
    if (settings !== undefined) {
      if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) {
        throw said('run-settings', { value: valueWords(settings) });
      }
      for (const key of Object.keys(settings)) {
        if (key !== 'reuse') throw said('run-setting', { key });
      }
      reuse = settings.reuse ?? undefined;
      if (reuse !== undefined && (typeof reuse !== 'object' || !Array.isArray(reuse.steps))) {
        throw said('run-reuse', { value: valueWords(reuse) });
      }
    }
    const [packed, { options }] = callPacked('_run', problem);
    return traces.read(packed, options.layout ?? 'rows', options.precision ?? 'float64', reuse);
  };
  // The backward pass: the trace with its gradient steps appended, and the loss Σ O∘dO.
  /** @param {*} problem @param {{ dO?: unknown }} [settings] checked here */
  const gradients = (problem, settings = {}) => {
    if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) {
      throw said('gradients-settings', { value: valueWords(settings) });
    }
    for (const key of Object.keys(settings)) {
      if (key !== 'dO') throw said('gradients-setting', { key });
    }
    const withDO = settings.dO === undefined || problem === null || typeof problem !== 'object' ? problem : { ...problem, dO: settings.dO };
    const [packed, { options }] = walkthroughCalls('gradients').callPacked('_gradients', withDO);
    const { trace, loss } = traces.record(packed, 'gradients');
    return { ...trace, loss, meta: { layout: options.layout ?? 'rows', precision: options.precision ?? 'float64', ...trace.meta } };
  };
  const engine = Object.freeze({
    version,
    /** The problem JSON's keys and what each holds (from the wire table). */
    problemKeys: Object.freeze(problemKeys(layout).map((key) => Object.freeze(key))),
    /** The core's step catalogue (steps.cpp, from the wire table): every step it can emit, in trace order. */
    steps: Object.freeze(layout.steps.map((s) => Object.freeze({ id: s.id, title: englishTitle(`step.${s.id}`), gradient: s.gradient }))),
    run,
    runAll(problems) {
      if (!Array.isArray(problems)) {
        throw said('run-all-type', { value: valueWords(problems) });
      }
      return problems.map((problem, i) => {
        try {
          return run(problem);
        } catch (error) {
          /** @type {import('./input.js').PlacedError} */
          const wrapped = new Error(`problem ${i + 1} of ${problems.length}: ${error.message}`, { cause: error });
          wrapped.problemIndex = i;
          // The same words as a message (i18n.js errorWords), the inner error's own id when it has one.
          wrapped.message_id = 'error.problem-of';
          wrapped.values = {
            problem: String(i + 1),
            problems: String(problems.length),
            error: error.message_id ? { id: error.message_id, values: error.values } : error.message,
          };
          if (error.field !== undefined) wrapped.field = error.field;
          throw wrapped;
        }
      });
    },
    gradients,
    explain(problem, cell = {}) {
      const { step, head } = cellStep(cell);
      const where = () => [step, head, cellIndex(cell.row, 'row'), cellIndex(cell.col, 'col')];
      const calls = isGradientStep(step) ? walkthroughCalls('explain', step) : { callPacked };
      return explanationFrom(calls.callPacked('_explain', problem, where)[0]);
    },
    /** The problem as a model generates it, token by token with a KV cache (cpp/practice.h). */
    decode(problem) {
      return traces.record(walkthroughCalls('decode').callPacked('_decode', problem)[0], 'decode');
    },
    /** FlashAttention-2's tiles: the online softmax block by block (cpp/practice.h). */
    tiles(problem, blocks) {
      return traces.record(walkthroughCalls('tiles').callPacked('_tiles', problem, () => blockSizes(blocks))[0], 'tiles');
    },
    /** Linear attention token by token (recurrent) or chunk by chunk ({ chunk }) (cpp/practice.h). */
    recurrent(problem, options) {
      return traces.record(walkthroughCalls('recurrent').callPacked('_recurrent', problem, () => chunkSize(options))[0], 'recurrent');
    },
    /** One row's softmax entry by entry: the running max and sum (cpp/practice.h). */
    onlineSoftmax(row, options = {}) {
      const given = onlineSoftmaxFrom(row, options, layout.codes.precision);
      const code = layout.codes.precision.indexOf(given.precision);
      return traces.record(
        walkthroughCalls('onlineSoftmax').invoke('_onlineSoftmax', [given.row, given.subtractMax, code]),
        'online_softmax',
      );
    },
    parseMatrix(text, name = 'matrix') {
      return parseMatrixDetailed(text, name, 'parseMatrix').values;
    },
    parseMatrixDetailed(text, name = 'matrix') {
      return parseMatrixDetailed(text, name, 'parseMatrixDetailed');
    },
    parseCell(text, name = 'matrix', row = 1, col = 1) {
      if (typeof text !== 'string') throw said('takes-text', { caller: 'parseCell', value: valueWords(text) });
      for (const [what, n] of /** @type {[string, number][]} */ ([
        ['row', row],
        ['col', col],
      ])) {
        if (!(Number.isInteger(n) && n >= 1)) throw said('parse-cell-index', { what, value: valueWords(n) });
      }
      return invoke('_parseCell', [text, String(name), row, col]);
    },
    random(seed, draws) {
      return invoke('_random', [seedFrom(seed), drawsFrom(draws)]).map(nested);
    },
    /** The output-only path for numbers at scale (fast.js): typed arrays in, a typed array out. */
    attention: guardedAttention(guard, (input) => sketch([input])),
    ...diagnostics(guard),
    /**
     * Loads the walkthroughs module (decode, tiles, onlineSoftmax, gradients, explain of gradient
     * cells) once; resolves to this engine. A failed load can be tried again.
     */
    loadWalkthroughs() {
      if (walkthroughs !== null) return Promise.resolve(engine);
      if (!loadWalkthroughs) {
        return Promise.reject(said('no-loader', { module: 'walkthroughs' }));
      }
      walkthroughsLoading ??= loadWalkthroughs()
        .then(([module, reloadModule]) => {
          wireTable(module, '_wireLayout');
          walkthroughs = moduleCalls(moduleGuard(module, reloadModule), problemFrom, problemPacker);
          return engine;
        })
        .finally(() => {
          walkthroughsLoading = null;
        });
      return walkthroughsLoading;
    },
    /** Whether the walkthroughs module is loaded (then decode, tiles, ... can be called). */
    get walkthroughsLoaded() {
      return walkthroughs !== null;
    },
    /**
     * A model that trains (docs/model.md): `config` is { model, task, optimizer, steps, batch,
     * seed, eval_every }; `{ weights }` starts it from saved weights. Needs the model module.
     */
    model(config, settings) {
      return createModel(modelCalls('model'), config, settings);
    },
    /** The model's tasks and presets: { tasks: [{ name, description }], presets: [...] }. */
    modelCatalogue() {
      return modelCatalogue(modelCalls('modelCatalogue'));
    },
    /** Loads the model module once; resolves to this engine. A failed load can be tried again. */
    loadModel() {
      if (modelModule !== null) return Promise.resolve(engine);
      if (!loadModelModule) return Promise.reject(said('no-loader', { module: 'model' }));
      modelLoading ??= loadModelModule()
        .then(([module]) => {
          if (typeof (/** @type {import('./glue.js').GlueModule} */ (module)._modelCreate) !== 'function')
            throw new Error("the model module has no _modelCreate: the package's files are from different builds");
          modelModule = module;
          return engine;
        })
        .finally(() => {
          modelLoading = null;
        });
      return modelLoading;
    },
    /** Whether the model module is loaded (then model() can be called). */
    get modelLoaded() {
      return modelModule !== null;
    },
  });
  return engine;
}

// ---- loading -----------------------------------------------------------------------------------

/**
 * Instantiates the Emscripten factory with bytes from `loadBytes()` and wraps it in the engine;
 * every failure is an Error naming `where` (the URL or path tried). `walkthroughs`: the same
 * { createModule, loadBytes, where } for the walkthroughs module, loaded by
 * engine.loadWalkthroughs() (at once when `walkthroughs.now`); `model` the same for the model
 * module (engine.loadModel()).
 */
export async function instantiate(createModule, loadBytes, where, walkthroughs, model) {
  const loadWalkthroughs = walkthroughs && (() => loadModule(walkthroughs.createModule, walkthroughs.loadBytes, walkthroughs.where));
  const loadModelModule = model && (() => loadModule(model.createModule, model.loadBytes, model.where));
  const engine = createEngine(...(await loadModule(createModule, loadBytes, where)), loadWalkthroughs, loadModelModule);
  await Promise.all([walkthroughs?.now && engine.loadWalkthroughs(), model?.now && engine.loadModel()]);
  return engine;
}
