// engine.run and engine.explain reach the core one way (web/lib/wire.js, cpp/wire.h): the problem
// packed as numbers, written into the module's scratch block or, when it does not fit, into one
// Float64Array; an input given as text travels in the same stream as its UTF-8 bytes, for the
// core's parser. Whatever form the inputs take, the trace is the same. The wire's table comes from
// the module, and a module of another wire version is refused.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

const { loadAttention } = await import(`${dist}node.js`);
const { loadFastAttention } = await import(`${dist}fast-node.js`);
const engine = await loadAttention();

const text = (m) => m.map((row) => row.join(' ')).join('\n');
// Small integers: exact in text and in binary, so the traces must be equal to the last bit.
const grid = (rows, cols, seed) =>
  Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => ((i * 7 + j * 3 + seed) % 5) - 2));

test('numbers, text and { shape, data } give the same trace, biases and options included', () => {
  const X = grid(3, 4, 1);
  const W = (seed) => grid(4, 4, seed);
  const options = {
    heads: 2,
    causal: true,
    scale: '1/sqrt(2)',
    softcap: 5,
    mask: [
      [0, -1, 0],
      [0, 0, -2],
      [1, 0, 0],
    ],
  };
  const numbers = {
    X,
    W_Q: W(2),
    W_K: W(3),
    W_V: W(4),
    W_O: W(5),
    b_Q: [1, 0, -1, 2],
    b_K: [[0, 1, 0, 1]],
    b_V: [1, 1, 1, 1],
    b_O: [0, 0, 1, 0],
    options,
  };
  const asText = { ...numbers, X: text(X), W_Q: text(W(2)), b_K: '0 1 0 1', options: { ...options, mask: text(options.mask) } };
  const asShape = { ...numbers, W_K: { shape: [4, 4], data: W(3).flat() } };
  const expected = engine.run(numbers);
  assert.deepEqual(engine.run(asText), expected);
  assert.deepEqual(engine.run(asShape), expected);
  assert.deepEqual(engine.run(numbers), expected, 'the scratch block is reused after a text problem');
  assert.equal(expected.steps.filter((s) => s.id === 'weights').length, 2);
});

test('texts of every length up to three doubles, and non-ASCII UTF-8, arrive whole', () => {
  // A text takes ceil(bytes / 8) doubles; lengths 1 to 24 cross every padding case, before
  // and after other inputs in the stream.
  const Q = [[1, 2, 3]];
  for (let digits = 1; digits <= 8; digits++) {
    const K = [[Number('1'.repeat(digits)), 0, -1]];
    const asText = { Q: text(Q), K: `${K[0][0]}  0 -1`, V: '5' };
    assert.deepEqual(engine.run(asText), engine.run({ Q, K, V: [[5]] }), `K of ${digits} digits`);
  }
  const row = Array.from({ length: 12 }, (_, j) => j - 5);
  for (let length = 1; length <= 12; length++) {
    const numbers = row.slice(0, length);
    const X = [numbers];
    const problem = { X: text(X), W_Q: grid(length, 2, 1), W_K: grid(length, 2, 2), W_V: grid(length, 1, 3), b_V: '7' };
    assert.deepEqual(engine.run(problem), engine.run({ ...problem, X, b_V: [7] }), `X of ${text(X).length} bytes`);
  }
  // A no-break space (two bytes in UTF-8) separates numbers as a space does.
  assert.deepEqual(engine.run({ Q: '1\u00a02', K: [[1, 2]], V: [[3]] }), engine.run({ Q: [[1, 2]], K: [[1, 2]], V: [[3]] }));
});

test("a text input's errors are the core parser's, naming its slot", () => {
  const self = { W_Q: [[1], [1]], W_K: [[1], [1]], W_V: [[1], [1]] };
  assert.throws(() => engine.run({ X: '1 2\n3 x', ...self }), { message: "X: row 2, column 2: expected a number but found 'x'" });
  assert.throws(() => engine.run({ X: [[1, 2]], ...self, W_K: '1\n1 2' }), { message: 'W_K: row 2 has 2 numbers but row 1 has 1' });
  assert.throws(() => engine.run({ X: [[1, 2]], ...self, b_K: '[1 2; 3 4]' }), {
    message: 'b_K must be a list of numbers, got a 2x2 matrix',
  });
  assert.throws(() => engine.run({ Q: [[1]], K: [[1]], V: [[1]], options: { mask: '1 2 3\n4' } }), {
    message: 'options.mask: row 2 has 1 number but row 1 has 3',
  });
  assert.throws(() => engine.run({ Q: '', K: [[1]], V: [[1]] }), { message: 'Q: no numbers found (the text is empty)' });
  // Non-ASCII text crosses the wire intact: U+2212 reads as a minus, and the parser quotes "½"
  // as a person sees it.
  assert.deepEqual(engine.run({ Q: '−1', K: [[1]], V: [[1]] }).steps[0].data, [[-1]]);
  assert.throws(() => engine.run({ Q: '1 ½', K: [[1]], V: [[1]] }), { message: "Q: row 1, column 2: expected a number but found '½'" });
});

test('a problem larger than the scratch block (one packed Float64Array) gives the same trace as its text', () => {
  // 3 x 120 x 100 numbers: more than the block's 32K.
  const Q = grid(120, 100, 1);
  const K = grid(120, 100, 2);
  const V = grid(120, 100, 3);
  const big = engine.run({ Q, K, V, options: { precision: 'float32' } });
  assert.deepEqual(engine.run({ Q: text(Q), K: text(K), V: text(V), options: { precision: 'float32' } }), big);
  assert.deepEqual(engine.run({ Q, K: text(K), V, options: { precision: 'float32' } }), big, 'numbers and text in one Float64Array');
  assert.deepEqual(big.meta, {
    layout: 'rows',
    precision: 'float32',
    scale: 0.1,
    scale_kind: 'sqrt_dk',
    mask_kind: 'none',
    d_k: 100,
    d_v: 100,
    heads: 1,
    kv_heads: 1,
    queries: 120,
    keys: 120,
    rope_positions: [],
  });
  const small = { Q: grid(2, 3, 1), K: grid(4, 3, 2), V: grid(4, 2, 3) };
  assert.deepEqual(engine.run(small), engine.run({ Q: text(small.Q), K: text(small.K), V: text(small.V) }));
});

test('a trace larger than the scratch block comes back whole from the kept block, which grows once and is reused', () => {
  // Scores, scaled and weights of 200 x 200 and 300 x 300: more than the scratch block's 32K numbers.
  const problem = (n) => ({ Q: grid(n, 3, 1), K: grid(n, 3, 2), V: grid(n, 2, 3), options: { scale: 'none' } });
  const scoresOf = ({ Q, K }) => Q.map((q) => K.map((k) => q.reduce((sum, x, i) => sum + x * k[i], 0)));
  const smaller = engine.run(problem(200));
  const kept = structuredClone(smaller);
  const larger = engine.run(problem(300)); // the block grows
  const again = engine.run(problem(200));
  assert.deepEqual(smaller, kept, 'a trace read out of the block is not changed by the next runs');
  assert.deepEqual(again, kept);
  assert.deepEqual(larger.steps.find((s) => s.id === 'scores').data, scoresOf(problem(300)));
  assert.deepEqual(smaller.steps.find((s) => s.id === 'scores').data, scoresOf(problem(200)));
  // The scores are small integers: softmax of row 299 from them, to rounding.
  const row = scoresOf(problem(300))[299];
  const top = Math.max(...row);
  const sum = row.reduce((s, x) => s + Math.exp(x - top), 0);
  larger.steps
    .find((s) => s.id === 'weights')
    .data[299].forEach((w, j) => assert.ok(Math.abs(w - Math.exp(row[j] - top) / sum) < 1e-15, `weights[299][${j}] = ${w}`));
  // Once the block has the largest trace's size, more runs leave the heap as it is.
  const before = engine.heapStats();
  for (let i = 0; i < 20; i++) engine.run(problem(i % 2 ? 300 : 200));
  assert.deepEqual(engine.heapStats(), before);
});

test("run with { reuse } gives the same trace as without, refilling the earlier trace's matrices of the same shape", () => {
  const W = (rows, cols, seed) => grid(rows, cols, seed).map((row) => row.map((x) => x / 4));
  const problems = [
    // Rows layout, heads with grouped K/V (GQA), causal, biases.
    {
      X: grid(5, 8, 1),
      W_Q: W(8, 8, 2),
      W_K: W(8, 4, 3),
      W_V: W(8, 4, 4),
      W_O: W(8, 8, 5),
      b_Q: grid(1, 8, 6)[0],
      options: { heads: 4, kv_heads: 2, causal: true },
    },
    // The same shapes, other numbers.
    {
      X: grid(5, 8, 2),
      W_Q: W(8, 8, 3),
      W_K: W(8, 4, 4),
      W_V: W(8, 4, 5),
      W_O: W(8, 8, 6),
      b_Q: grid(1, 8, 7)[0],
      options: { heads: 4, kv_heads: 2, causal: true },
    },
    // Columns layout (keys as rows): other shapes at the same places.
    { Q: grid(3, 6, 1), K: grid(3, 4, 2), V: grid(2, 4, 3), options: { layout: 'columns', scale: 'none' } },
    // Cross-attention: queries from X, keys and values from X_kv; float32.
    {
      X: grid(3, 4, 1),
      X_kv: grid(6, 4, 2),
      W_Q: W(4, 4, 3),
      W_K: W(4, 4, 4),
      W_V: W(4, 2, 5),
      options: { precision: 'float32', mask: grid(3, 6, 1).map((r) => r.map((x) => x > -2)) },
    },
    { Q: grid(6, 4, 3), K: grid(6, 4, 4), V: grid(6, 3, 5), options: { precision: 'float32', window: [2, 0] } },
  ];
  const fresh = problems.map((p) => engine.run(p));
  // Each problem run reusing the trace of the one before it, in turn and then back to the first.
  let previous = engine.run(problems[problems.length - 1]);
  for (const [i, p] of [...problems, problems[0], problems[1]].entries()) {
    const matrices = previous.steps.map((s) => s.data);
    const shapes = previous.steps.map((s) => s.shape.join('x'));
    const trace = engine.run(p, { reuse: previous });
    assert.deepEqual(trace, fresh[i % problems.length], `problem ${(i % problems.length) + 1}`);
    // A step's matrix is the earlier one refilled exactly when that step had the same shape.
    trace.steps.forEach((s, k) =>
      assert.equal(s.data === matrices[k], shapes[k] === s.shape.join('x'), `problem ${(i % problems.length) + 1}, step ${k} (${s.id})`),
    );
    previous = trace;
  }
  // Problems 1 and 2 have the same shapes: every matrix of the trace is the earlier one's, output and facts too.
  const first = engine.run(problems[0]);
  const { output, facts } = first;
  const second = engine.run(problems[1], { reuse: first });
  assert.equal(second.output, output);
  assert.equal(second.facts[0].hidden_by, facts[0].hidden_by);
  assert.deepEqual(second, fresh[1]);
  // Bad input leaves the trace to reuse as it was; so does a bad setting.
  const kept = structuredClone(second);
  assert.throws(() => engine.run({ ...problems[0], X: '1 2\n3 x' }, { reuse: second }), {
    message: "X: row 2, column 2: expected a number but found 'x'",
  });
  assert.throws(() => engine.run(problems[0], { reuse: [[1]] }), { message: 'run: reuse must be a trace from engine.run, got an array' });
  assert.throws(() => engine.run(problems[0], { reuse: second, copy: true }), {
    message: "run: unknown setting 'copy' (it takes { reuse })",
  });
  assert.throws(() => engine.run(problems[0], 'reuse'), { message: 'run takes a problem and { reuse }, got "reuse"' });
  assert.deepEqual(second, kept);
  // A null or absent reuse: a fresh trace.
  assert.deepEqual(engine.run(problems[2], { reuse: null }), fresh[2]);
  assert.deepEqual(engine.run(problems[2], {}), fresh[2]);
});

test('explain takes the same packed problem: numbers, text and a problem larger than the scratch block', () => {
  const problem = {
    X: grid(3, 4, 1),
    W_Q: grid(4, 4, 2),
    W_K: grid(4, 4, 3),
    W_V: grid(4, 4, 4),
    b_K: [1, 0, 0, 1],
    options: { heads: 2, scale: '1/sqrt(3)' },
  };
  const trace = engine.run(problem);
  const weights = trace.steps.filter((s) => s.id === 'weights')[1];
  const cell = { step: 'weights', head: 1, row: 2, col: 1 };
  const explained = engine.explain(problem, cell);
  assert.equal(explained.kind, 'softmax');
  assert.equal(explained.value, weights.data[2][1]);
  assert.deepEqual(engine.explain({ ...problem, X: text(problem.X), b_K: '1 0 0 1' }, cell), explained);
  const scaled = engine.explain(problem, { step: 'scaled', head: 0, row: 0, col: 2 });
  assert.equal(scaled.divisor, Math.sqrt(3));
  assert.equal(scaled.value, trace.steps.find((s) => s.id === 'scaled').data[0][2]);

  const big = { Q: grid(120, 100, 1), K: grid(120, 100, 2), V: grid(120, 100, 3) };
  const scores = engine.explain(big, { step: 'scores', row: 119, col: 7 });
  assert.equal(
    scores.value,
    big.Q[119].reduce((sum, q, k) => sum + q * big.K[7][k], 0),
  );
  assert.deepEqual(engine.explain({ ...big, V: text(big.V) }, { step: 'scores', row: 119, col: 7 }), scores);
});

test("explain's input errors keep their order: the cell's step and head, the problem, then row and column", () => {
  const bad = { Q: [[1, 'x']], K: [[1]], V: [[1]] };
  assert.throws(() => engine.explain(bad, { step: 3, row: -1, col: 0 }), {
    message: 'step must be a step id such as "scores", got number 3',
  });
  assert.throws(() => engine.explain(bad, { step: 'scores', row: -1, col: 0 }), {
    message: 'Q row 1, column 2 is "x": expected a number or "inf", "-inf", "nan"',
  });
  const good = { Q: [[1]], K: [[1]], V: [[1]] };
  assert.throws(() => engine.explain(good, { step: 'scores', row: -1, col: 0 }), {
    message: 'row must be an integer >= 0 (counted from 0), got number -1',
  });
  assert.throws(() => engine.explain(good, { step: 'scores', row: 3, col: 0 }), {
    message: "step 'scores' is 1x1: it has no row 4, column 1",
  });
  assert.equal(engine.explain(good, { step: 'output', row: 0, col: 0 }).value, 1);
});

test('every field of a step comes through, in the documented order and of its documented type', () => {
  const trace = engine.run({
    X: grid(3, 8, 1),
    W_Q: grid(8, 8, 2),
    W_K: grid(8, 4, 3),
    W_V: grid(8, 4, 4),
    W_O: grid(8, 8, 5),
    options: { heads: 4, kv_heads: 2, causal: true },
  });
  const keys = [
    'id',
    'head',
    'shape',
    'data',
    'title_id',
    'title',
    'symbol',
    'tex',
    'text',
    'formula_ids',
    'kind',
    'axes',
    'inputs',
    'reads',
    'given',
    'kv_group',
    'features',
  ];
  trace.steps.forEach((step, i) => {
    const where = `step ${i} (${step.id}, head ${step.head})`;
    assert.deepEqual(Object.keys(step), keys, where);
    for (const key of ['title_id', 'title', 'symbol', 'tex', 'text']) assert.equal(typeof step[key], 'string', `${where}: ${key}`);
    assert.equal(step.title_id, `step.${step.id}`, where);
    assert.ok(['signed', 'probability', 'keep_mask', 'additive_bias'].includes(step.kind), `${where}: kind ${step.kind}`);
    assert.equal(step.axes.length, 2, where);
    for (const axis of step.axes) assert.ok(['queries', 'keys', 'features'].includes(axis), `${where}: axis ${axis}`);
    for (const input of step.inputs) assert.ok(Number.isInteger(input) && input >= 0 && input < i, `${where}: input ${input}`);
    assert.equal(step.reads.length, step.inputs.length, `${where}: one read per input`);
    for (const { ties } of step.reads) for (const tie of ties) assert.deepEqual(Object.keys(tie), ['step', 'input', 'shift'], where);
    for (const given of step.given) assert.equal(typeof given, 'string', where);
    assert.ok(
      step.kv_group === null || (Number.isInteger(step.kv_group) && step.kv_group >= 0 && step.kv_group < 2),
      `${where}: kv_group ${step.kv_group}`,
    );
    assert.ok(
      step.features === null || (step.features.length === 2 && step.features[0] < step.features[1]),
      `${where}: features ${step.features}`,
    );
  });
  // Per head Q, K, V, scores, scaled, mask, masked, weights, head_output (causal: a mask step).
  assert.deepEqual(
    trace.steps.map((s) => s.head),
    [...[0, 1, 2, 3].flatMap((h) => Array(9).fill(h)), null, null],
  );
  assert.deepEqual(Object.keys(trace), ['steps', 'output', 'warnings', 'facts', 'meta', 'warning_messages']);
  assert.deepEqual(Object.keys(trace.facts[0]), [
    'head',
    'scores_variance',
    'scaled_variance',
    'weight_sums',
    'max_weight',
    'entropy',
    'fully_masked',
    'hidden_by',
    'hidden_weight',
    'alibi_slope',
    'sink_logit',
    'sink_share',
    'rope_shift',
    'rope_shift_change',
    'max_score',
    'max_score_without_norm',
    'lambda',
  ]); // issue 31: QK-norm's note, differential attention's λ
  assert.deepEqual(trace.facts[0].hidden_by, [
    [0, 1, 1],
    [0, 0, 1],
    [0, 0, 0],
  ]); // 1: hidden by causal
  assert.equal(trace.facts[0].sink_logit, -Infinity);
});

test('warnings, facts and step ids come through; holes of a sparse array still count as 0', () => {
  const trace = engine.run({
    Q: [
      [1, 0],
      [0, 1],
    ],
    K: [
      [1, 0],
      [0, 1],
    ],
    V: [
      [1, 2],
      [3, 4],
    ],
    options: {
      mask: [
        [false, false],
        [true, true],
      ],
    },
  });
  assert.deepEqual(
    trace.steps.map((s) => [s.id, s.head]),
    [
      ['Q', 0],
      ['K', 0],
      ['V', 0],
      ['scores', 0],
      ['scaled', 0],
      ['mask', 0],
      ['masked', 0],
      ['weights', 0],
      ['output', null],
    ],
  );
  assert.deepEqual(trace.warnings, ['row 1 of the mask hides every key: its weights and output are 0']);
  // The core names the warning; its English is en.json's message.
  assert.deepEqual(trace.warning_messages, [{ id: 'warning.fully_masked', values: { axis: 'row', row: '1' } }]);
  assert.deepEqual(trace.facts[0].fully_masked, [0]);
  assert.deepEqual(trace.output[0], [0, 0]);
  // eslint-disable-next-line no-sparse-arrays
  const sparse = {
    Q: [
      [1, , 3],
      [0, 1, 0],
    ],
    K: [[1, 0, 0]],
    V: [[2]],
  };
  assert.deepEqual(
    engine.run(sparse),
    engine.run({
      ...sparse,
      Q: [
        [1, 0, 3],
        [0, 1, 0],
      ],
    }),
  );
});

test('input errors are unchanged by where the numbers go', () => {
  assert.throws(
    () =>
      engine.run({
        Q: [
          [1, 2],
          [3, 'x'],
        ],
        K: [[1, 2]],
        V: [[1]],
      }),
    {
      message: 'Q row 2, column 2 is "x": expected a number or "inf", "-inf", "nan"',
    },
  );
  assert.throws(() => engine.run({ Q: { shape: [2, 2], data: [1, 2, 3] }, K: [[1, 2]], V: [[1]] }), {
    message: 'Q has 3 values but its shape 2x2 needs 4',
  });
  assert.throws(() => engine.run({ Q: { shape: [2, 2], data: [1, null, 3] }, K: [[1, 2]], V: [[1]] }), {
    message: 'Q entry 2 is null: expected a number or "inf", "-inf", "nan"',
  });
  // After an error the next run is right.
  assert.deepEqual(engine.run({ Q: [[1]], K: [[1]], V: [[5]] }).output, [[5]]);
});

test('"1/sqrt(1e2)" divides by 10 on both paths, as "1/10" does', async () => {
  const Q = grid(5, 3, 1);
  const K = grid(6, 3, 2);
  const V = grid(6, 2, 3);
  for (const precision of ['float64', 'float32']) {
    const root = engine.run({ Q, K, V, options: { scale: '1/sqrt(1e2)', precision } });
    const tenth = engine.run({ Q, K, V, options: { scale: '1/10', precision } });
    // The same numbers (the formulas say √100 and 10).
    assert.deepEqual(
      root.steps.map((s) => s.data),
      tenth.steps.map((s) => s.data),
      precision,
    );
    // The same meta but for how the scale was given.
    assert.deepEqual([root.output, root.facts, { ...root.meta, scale_kind: 'divide' }], [tenth.output, tenth.facts, tenth.meta], precision);
    assert.deepEqual([root.meta.scale_kind, tenth.meta.scale_kind], ['divide_sqrt', 'divide']);
    assert.equal(root.meta.scale, 0.1);
    const lean = await loadFastAttention();
    for (const attention of [engine.attention, lean.attention]) {
      const fast = attention({ Q, K, V, scale: '1/sqrt(1e2)', precision });
      assert.deepEqual(fast, attention({ Q, K, V, scale: '1/10', precision }), `${precision}: the same numbers as 1/10`);
      fast.output.forEach((v, i) =>
        assert.ok(Math.abs(v - root.output[Math.floor(i / 2)][i % 2]) < 1e-6, `${precision} output ${i}: ${v}`),
      );
    }
  }
  assert.throws(
    () => engine.attention({ Q, K, V, scale: '1/sqrt(0)' }),
    /^Error: scale must be "sqrt_dk", "none", a finite number, "1\/sqrt\(n\)" or "1\/n", got "1\/sqrt\(0\)"$/,
  );
});

test('a JS and a .wasm from different builds are refused with a clear error', async () => {
  const { default: createAttentionModule } = await import(`${dist}attention.js`);
  const { default: createFastModule } = await import(`${dist}attention-fast.js`);
  const { instantiate } = await import(`${dist}engine.js`);
  const { loadModule } = await import(`${dist}load.js`);
  const { createFastEngine } = await import(`${dist}fast.js`);
  // The real modules, their wire table changed as another build's would be.
  const altered = (create, name, change) => (arg) =>
    create(arg).then((m) => {
      const real = m[name];
      if (change === 'none') delete m[name];
      else m[name] = () => ({ ...real(), version: change });
      return m;
    });
  const bytes = readFileSync(`${dist}attention.wasm`);
  await assert.rejects(
    instantiate(altered(createAttentionModule, '_wireLayout', 99), async () => bytes, 'attention.wasm'),
    {
      message:
        "the WebAssembly module speaks wire format 99 but this JS speaks wire format 10: the package's JS and .wasm files are from different builds (use the dist/ of one build)",
    },
  );
  await assert.rejects(
    instantiate(altered(createAttentionModule, '_wireLayout', 'none'), async () => bytes, 'attention.wasm'),
    {
      message:
        "the WebAssembly module has no wire table but this JS speaks wire format 10: the package's JS and .wasm files are from different builds (use the dist/ of one build)",
    },
  );
  const fastBytes = readFileSync(`${dist}attention-fast.wasm`);
  const [fastModule] = await loadModule(altered(createFastModule, '_fastWireLayout', 99), async () => fastBytes, 'attention-fast.wasm');
  assert.throws(
    () => createFastEngine(fastModule),
    /^Error: the WebAssembly module speaks wire format 99 but this JS speaks wire format 10/,
  );
  // Unaltered, the same modules load.
  const [fresh] = await loadModule(createFastModule, async () => fastBytes, 'attention-fast.wasm');
  assert.equal(createFastEngine(fresh).attention({ Q: [[1]], K: [[1]], V: [[4]] }).output[0], 4);
});
