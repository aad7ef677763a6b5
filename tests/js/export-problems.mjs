// The problems the export tests (export.test.mjs, python.test.mjs) cover: every branch of the
// exports, then the options of modern attention (positions, RoPE, a KV cache, position
// encodings, ALiBi, windows, sinks, mask fills), then those again in the columns layout.

const T = (m) => m[0].map((_, j) => m.map((row) => row[j]));

/** `{ PROBLEMS, POSITION_PROBLEMS, COLUMNS_POSITION_PROBLEMS }` for the engine and its presets. */
export function exportProblems(engine, { presetProblem, findPreset }) {
  const preset = (id) => presetProblem(findPreset(id), engine).problem;
  const [Xm, Wq, Wk, Wv, Wo] = engine.random(7, [
    { kind: 'randn', shape: [5, 6] },
    { kind: 'randn', shape: [6, 4] },
    { kind: 'randn', shape: [6, 2] },
    { kind: 'randn', shape: [6, 2] },
    { kind: 'randn', shape: [4, 3] },
  ]);
  const PROBLEMS = {
    'seed 000': preset('000'),
    'seed 000 causal': preset('000-causal'),
    'seed 002 columns, no scale': preset('002'),
    'seed 002 columns, scaled': preset('002-scaled'),
    'seed 003 float32, 1/sqrt(3)': preset('003'),
    'seed 004': preset('004'),
    'multi-head with W_O': preset('multihead'),
    'cross-attention': preset('cross'),
    'keep-mask with a fully masked row': {
      Q: [
        [1, 0],
        [0, 1],
        [1, 1],
      ],
      K: [
        [1, 2],
        [0, 1],
        [2, 0],
      ],
      V: [
        [1, 0],
        [0, 1],
        [3, 3],
      ],
      options: {
        mask: [
          [true, false, true],
          [false, false, false],
          [true, true, true],
        ],
      },
    },
    'additive mask, softcap, multiply scale': {
      Q: [
        [1, 0.5],
        [0, 2],
      ],
      K: [
        [1, 2],
        [0.5, 1],
        [2, 0],
      ],
      V: [
        [1, 0],
        [0, 1],
        [3, 3],
      ],
      options: {
        mask: [
          [0, '-inf', -1],
          [0, 0, 0.5],
        ],
        softcap: 2,
        scale: 0.7,
      },
    },
    'GQA 2 heads / 1 kv head, biases, W_O + b_O, causal': {
      X: Xm,
      W_Q: Wq,
      W_K: Wk,
      W_V: Wv,
      b_Q: [0.1, -0.2, 0.3, 0],
      b_K: [0.5, -0.5],
      b_V: [1, 2],
      W_O: Wo,
      b_O: [0.1, 0.2, 0.3],
      options: { heads: 2, kv_heads: 1, causal: true },
    },
    'columns layout, causal, biases, float32, 1/4': {
      X: T(Xm),
      W_Q: T(Wq),
      W_K: T(Wq),
      W_V: T(Wv),
      b_Q: [0, 1, 0, 1],
      b_K: [1, 0, 1, 0],
      b_V: [0, 1],
      options: { layout: 'columns', causal: true, precision: 'float32', scale: '1/4' },
    },
  };

  const POSITION_PROBLEMS = {
    'RoPE (half) with a KV cache, causal, GQA': {
      Q: [
        [1, 0.5, -1, 2],
        [0.3, -0.2, 1, 0.1],
      ],
      K: [
        [0.5, 1],
        [1, -1],
      ],
      V: [
        [1, 2],
        [0, 1],
      ],
      past_K: [
        [0.2, -0.4],
        [1, 0.3],
      ],
      past_V: [
        [3, 1],
        [-1, 0.5],
      ],
      options: { heads: 2, kv_heads: 1, causal: true, rope: true },
    },
    'RoPE interleaved, partial dims, base 100, float32, explicit positions': {
      Q: [
        [1, 0.5, -1, 2, 1, 1],
        [0.3, -0.2, 1, 0.1, 2, -2],
      ],
      K: [
        [0.5, 1, 2, -1, 1, 0],
        [1, -1, 0, 3, 0, 1],
        [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
      ],
      V: [[1], [2], [3]],
      options: {
        rope: { style: 'interleaved', dims: 4, base: 100 },
        precision: 'float32',
        positions: { queries: [5, 9], keys: [0, 3, 7] },
      },
    },
    'RoPE cos/sin tables': {
      Q: [
        [1, 0.5],
        [0.3, -0.2],
      ],
      K: [
        [0.5, 1],
        [1, -1],
      ],
      V: [
        [1, 2],
        [0, 1],
      ],
      options: { rope: { cos: [[1], [0.6], [0]], sin: [[0], [0.8], [1]] }, positions: { queries: [1, 2], keys: [0, 2] } },
    },
    'sinusoidal positions, ALiBi paper slopes for 3 heads': {
      X: Xm,
      W_Q: Wq.map((r) => [...r, r[0], r[1]]),
      W_K: Wq.map((r) => [...r, r[2], r[3]]),
      W_V: Wq.map((r) => [...r, r[0], r[3]]),
      options: { heads: 3, positional: 'sinusoidal', alibi: true },
    },
    'learned positions P, ALiBi slopes given': {
      X: Xm,
      W_Q: Wq,
      W_K: Wk,
      W_V: Wv,
      P: Xm.map((r) => r.map((v) => v / 10)),
      options: { heads: 2, kv_heads: 1, alibi: [0.5, 0.25] },
    },
    'window with a sink token, causal, sink logits per head': {
      X: Xm,
      W_Q: Wq,
      W_K: Wq,
      W_V: Wv,
      options: { heads: 2, causal: true, window: [1, 0], sink_tokens: 1, sink_logit: [0, -1] },
    },
    'finite mask_fill with a fully masked row': {
      Q: [
        [1, 0],
        [0, 1],
        [1, 1],
      ],
      K: [
        [1, 2],
        [0, 1],
        [2, 0],
      ],
      V: [
        [1, 0],
        [0, 1],
        [3, 3],
      ],
      options: {
        mask: [
          [true, false, true],
          [false, false, false],
          [true, true, true],
        ],
        mask_fill: -1e9,
      },
    },
    'fully_masked nan, window [null, 0] with an additive mask': {
      Q: [
        [1, 0],
        [0, 1],
        [1, 1],
      ],
      K: [
        [1, 2],
        [0, 1],
        [2, 0],
      ],
      V: [
        [1, 0],
        [0, 1],
        [3, 3],
      ],
      options: {
        mask: [
          [0, 0, 0],
          ['-inf', '-inf', 0],
          [0, -1, 0.5],
        ],
        window: [null, 0],
        fully_masked: 'nan',
      },
    },
    'everything at once: interleaved RoPE tables, cache, learned P, W_O, ALiBi, window + sink, sink logit, softcap, additive mask': {
      X: Xm.slice(0, 3),
      W_Q: Wq,
      W_K: Wq,
      W_V: Wv,
      b_Q: [0.1, -0.2, 0.3, 0],
      W_O: Wo.slice(0, 2),
      P: Xm.slice(2, 5).map((r) => r.map((v) => v / 4)),
      past_K: [
        [0.2, -0.4, 1, 0.5],
        [1, 0.3, -0.5, 0.1],
      ],
      past_V: [
        [3, 1],
        [-1, 0.5],
      ],
      options: {
        heads: 2,
        causal: true,
        softcap: 3,
        alibi: true,
        window: [2, 0],
        sink_tokens: 1,
        sink_logit: 0.5,
        rope: { style: 'interleaved', cos: [[1], [0.6], [0], [-0.6], [-1]], sin: [[0], [0.8], [1], [0.8], [0]] },
        mask: [
          [0, 0, -0.5, 0, 0],
          [0, '-inf', 0, 0, 0],
          [0, 0, 0, 0, 0],
        ],
      },
    },
    'a finite fill in float32 with GQA, a cache and a window: the fill row is uniform': {
      Q: [
        [1, 0.5, -1, 2],
        [0.3, -0.2, 1, 0.1],
      ],
      K: [
        [0.5, 1],
        [1, -1],
      ],
      V: [
        [1, 2],
        [0, 1],
      ],
      past_K: [
        [0.2, -0.4],
        [1, 0.3],
        [0, 1],
      ],
      past_V: [
        [3, 1],
        [-1, 0.5],
        [2, 2],
      ],
      options: {
        heads: 2,
        kv_heads: 1,
        precision: 'float32',
        window: [0, 0],
        mask: [
          [true, true, true, false, true],
          [true, true, true, true, false],
        ],
        mask_fill: -1e4,
      },
    },
    'ALiBi, a cache, a sliding window and a keep mask with GQA: the PyTorch check gets bias + mask': {
      Q: [
        [1, 0.5, -1, 2],
        [0.3, -0.2, 1, 0.1],
      ],
      K: [
        [0.5, 1],
        [1, -1],
      ],
      V: [
        [1, 2],
        [0, 1],
      ],
      past_K: [
        [0.2, -0.4],
        [1, 0.3],
        [0, 1],
      ],
      past_V: [
        [3, 1],
        [-1, 0.5],
        [2, 2],
      ],
      options: {
        heads: 2,
        kv_heads: 1,
        causal: true,
        alibi: [0.5, 0.125],
        window: [2, 0],
        mask: [
          [true, false, true, true, true],
          [true, true, true, true, true],
        ],
      },
    },
    'a sink logit with fully_masked nan: the sink takes a fully masked row (no NaN)': {
      Q: [
        [1, 0],
        [0, 1],
      ],
      K: [
        [1, 2],
        [0, 1],
      ],
      V: [
        [1, 0],
        [0, 1],
      ],
      options: {
        mask: [
          [true, true],
          [false, false],
        ],
        sink_logit: -0.5,
        fully_masked: 'nan',
      },
    },
  };

  const COLUMNS_POSITION_PROBLEMS = Object.fromEntries(
    Object.entries(POSITION_PROBLEMS).map(([name, p]) => [`${name}, columns layout`, columnsLayout(p)]),
  );
  return { PROBLEMS, POSITION_PROBLEMS, COLUMNS_POSITION_PROBLEMS };
}

const MATRICES = ['Q', 'K', 'V', 'X', 'X_kv', 'W_Q', 'W_K', 'W_V', 'W_O', 'past_K', 'past_V', 'P'];

/**
 * The same problem with tokens as columns (UDL book): every matrix input and the mask transposed
 * (Ω = Wᵀ); biases stay vectors and RoPE's tables keep a row per position whatever the layout.
 */
export function columnsLayout(problem) {
  const out = { ...problem, options: { ...problem.options, layout: 'columns' } };
  for (const k of MATRICES) if (problem[k] != null) out[k] = T(problem[k]);
  if (problem.options?.mask != null) out.options.mask = T(problem.options.mask);
  return out;
}
