// Ready-made problems: the seed documents' examples, rebuilt exactly, a multi-head and a
// cross-attention example, and the page's first example (a soft dictionary lookup, hand-made).
// Data and recipes only: no attention maths and no imports, so the package can re-export this
// file as it is. Random inputs are drawn with the engine's numpy-compatible stream
// (engine.random), the way the notebooks drew them.

/**
 * @typedef {{ kind: 'randn'|'normal'|'rand'|'randint', shape: [number, number],
 *             loc?: number, scale?: number, low?: number, high?: number }} Draw
 * @typedef {{ seed: number, draws: Array<Draw & { name: string, join?: 'columns' }> }} Recipe
 * @typedef {{
 *   id: string, title: string, source: string, url?: string, note?: string,
 *   mode: 'qkv'|'self'|'cross', tokens?: string[], kvTokens?: string[],
 *   inputs?: Record<string, number[][]|number[]>, random?: Recipe[],
 *   options?: Record<string, unknown>
 * }} Preset
 */

// Seed 000: np.random.seed(42), then q, k, v = np.random.randn(4, 8) three times.
/** @type {Recipe[]} */
const SEED_000_RANDOM = [
  {
    seed: 42,
    draws: [
      { name: 'Q', kind: 'randn', shape: [4, 8] },
      { name: 'K', kind: 'randn', shape: [4, 8] },
      { name: 'V', kind: 'randn', shape: [4, 8] },
    ],
  },
];

// Seed 002 (UDL 12.1): three input columns after np.random.seed(3), then the Ω's and β's after
// np.random.seed(0), in the notebook's order.
/** @type {Recipe[]} */
const SEED_002_RANDOM = [
  {
    seed: 3,
    draws: [
      { name: 'X', kind: 'normal', shape: [4, 1], join: 'columns' },
      { name: 'X', kind: 'normal', shape: [4, 1], join: 'columns' },
      { name: 'X', kind: 'normal', shape: [4, 1], join: 'columns' },
    ],
  },
  {
    seed: 0,
    draws: [
      { name: 'W_Q', kind: 'normal', shape: [4, 4] },
      { name: 'W_K', kind: 'normal', shape: [4, 4] },
      { name: 'W_V', kind: 'normal', shape: [4, 4] },
      { name: 'b_Q', kind: 'normal', shape: [4, 1] },
      { name: 'b_K', kind: 'normal', shape: [4, 1] },
      { name: 'b_V', kind: 'normal', shape: [4, 1] },
    ],
  },
];

/**
 * The first example's problem (lookup): three questions about fruit against three fruit, each
 * described by how sweet and how sour it is. The sigmoid example asks them again. A fresh copy per
 * preset, so no preset shares arrays with another.
 * @returns {Pick<import('./index.js').Preset, 'mode' | 'tokens' | 'kvTokens' | 'inputs'>}
 */
function fruitLookup() {
  return {
    mode: 'qkv',
    tokens: ['sweet?', 'sour?', 'both?'],
    kvTokens: ['banana', 'lemon', 'apple'],
    inputs: {
      Q: [
        [2, 0],
        [0, 2],
        [1, 1],
      ],
      K: [
        [3, 0],
        [0, 3],
        [2, 2],
      ],
      V: [
        [0.3, 0.9],
        [0.5, 0.3],
        [0.4, 0.5],
      ],
    },
  };
}

/** @type {typeof import('./index.js').presets} */
export const presets = [
  {
    id: '000',
    title: 'Seed 000: Q, K, V from np.random.seed(42), 4 words, d_k = 8',
    source: 'ajhalthor/Transformer-Neural-Network, Self_Attention_for_Transformer_Neural_Networks.ipynb',
    url: 'https://github.com/ajhalthor/Transformer-Neural-Network/blob/main/Self_Attention_for_Transformer_Neural_Networks.ipynb',
    note: 'q, k, v = np.random.randn(L, dk) three times after np.random.seed(42); scaled by 1/√8.',
    mode: 'qkv',
    tokens: ['w1', 'w2', 'w3', 'w4'],
    random: SEED_000_RANDOM,
    options: { scale: 'sqrt_dk' },
  },
  {
    id: '000-causal',
    title: 'Seed 000, decoder: the same Q, K, V with a causal mask',
    source: 'ajhalthor/Transformer-Neural-Network, Self_Attention_for_Transformer_Neural_Networks.ipynb ("For the decoder")',
    url: 'https://github.com/ajhalthor/Transformer-Neural-Network/blob/main/Self_Attention_for_Transformer_Neural_Networks.ipynb',
    note: 'mask = np.tril(np.ones((L, L))) with 0 → -inf, added to the scaled scores.',
    mode: 'qkv',
    tokens: ['w1', 'w2', 'w3', 'w4'],
    random: SEED_000_RANDOM,
    options: { scale: 'sqrt_dk', causal: true },
  },
  {
    id: '001',
    title: 'Seed 001: three 8-dim words, 8×3 weights with entries 0–2 that reproduce its print',
    source: 'seed 001 notebook (words word_1…word_3, W = np.random.randint(low=3, size=(8, 3)))',
    note:
      'The words and shapes are the notebook’s. Its weights cannot be rebuilt: random.seed(42) seeds ' +
      'Python’s random module, not numpy, so np.random.randint ran unseeded. These W_Q, W_K, W_V are one ' +
      'choice among the 17,545,902,394,825,080,990 with entries 0, 1 or 2 that reproduce every number the ' +
      'notebook prints (its weights and attention rows, to the digits printed): the smallest, read row by ' +
      'row, found by tests/fixtures/search_seed_001.py.',
    mode: 'self',
    tokens: ['word_1', 'word_2', 'word_3'],
    inputs: {
      X: [
        [1, 0, 0, 1, 0, 1, 0, 0],
        [0, 1, 0, 0, 1, 1, 0, 1],
        [1, 1, 0, 0, 1, 1, 1, 0],
      ],
      W_Q: [
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 2],
        [0, 1, 1],
        [0, 0, 1],
      ],
      W_K: [
        [0, 2, 2],
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 2],
        [0, 2, 0],
        [0, 0, 0],
        [0, 2, 2],
        [0, 0, 0],
      ],
      W_V: [
        [2, 0, 1],
        [0, 0, 1],
        [0, 0, 0],
        [2, 0, 2],
        [2, 0, 2],
        [2, 0, 2],
        [1, 1, 2],
        [2, 1, 2],
      ],
    },
    options: { scale: 'sqrt_dk' },
  },
  {
    id: '002',
    title: 'Seed 002: UDL book 12.1, tokens as columns, Ω and β, no scaling',
    source: 'udlbook/udlbook, Notebooks/Chap12/12_1_Self_Attention.ipynb (self_attention)',
    url: 'https://github.com/udlbook/udlbook/blob/main/Notebooks/Chap12/12_1_Self_Attention.ipynb',
    note:
      'X (4×3) holds three np.random.normal(size=(4, 1)) columns after np.random.seed(3); Ω_Q, Ω_K, Ω_V ' +
      '(4×4) and β_Q, β_K, β_V (4×1) are np.random.normal after np.random.seed(0). Softmax runs down each ' +
      'column of KᵀQ; output X′ = V·A.',
    mode: 'self',
    tokens: ['x_0', 'x_1', 'x_2'],
    random: SEED_002_RANDOM,
    options: { layout: 'columns', scale: 'none' },
  },
  {
    id: '002-scaled',
    title: 'Seed 002, scaled: the same problem divided by √d_k (scaled_dot_product_self_attention)',
    source: 'udlbook/udlbook, Notebooks/Chap12/12_1_Self_Attention.ipynb (scaled_dot_product_self_attention)',
    url: 'https://github.com/udlbook/udlbook/blob/main/Notebooks/Chap12/12_1_Self_Attention.ipynb',
    note: 'Same inputs as 002, scores divided by √4 before the column softmax.',
    mode: 'self',
    tokens: ['x_0', 'x_1', 'x_2'],
    random: SEED_002_RANDOM,
    options: { layout: 'columns', scale: 'sqrt_dk' },
  },
  {
    id: '003',
    title: 'Seed 003: three inputs, hand-written weights, float32, divided by √3',
    source: 'p208p2002/Self-Attention-cacultate-with-numpy (README)',
    url: 'https://github.com/p208p2002/Self-Attention-cacultate-with-numpy',
    note: 'Everything is float32; the divisor is √3 taken from the number of tokens (shape[0]).',
    mode: 'self',
    tokens: ['input_1', 'input_2', 'input_3'],
    inputs: {
      X: [
        [1, 0, 1, 0],
        [0, 2, 0, 2],
        [1, 1, 1, 1],
      ],
      W_Q: [
        [1, 0, 1],
        [1, 0, 0],
        [0, 0, 1],
        [0, 1, 1],
      ],
      W_K: [
        [0, 0, 1],
        [1, 1, 0],
        [0, 1, 0],
        [1, 1, 0],
      ],
      W_V: [
        [0, 2, 0],
        [0, 3, 0],
        [1, 0, 3],
        [1, 1, 0],
      ],
    },
    options: { scale: '1/sqrt(3)', precision: 'float32' },
  },
  {
    id: '004',
    title: 'Seed 004: two tokens, identity W_Q and W_K, W_V = [[1, 2], [3, 4]]',
    source: 'seed 004 notes "Self-Attention in Transformers" (compute_qkv, self_attention)',
    mode: 'self',
    tokens: ['t1', 't2'],
    inputs: {
      X: [
        [1, 0],
        [0, 1],
      ],
      W_Q: [
        [1, 0],
        [0, 1],
      ],
      W_K: [
        [1, 0],
        [0, 1],
      ],
      W_V: [
        [1, 2],
        [3, 4],
      ],
    },
    options: { scale: 'sqrt_dk' },
  },
  {
    id: 'multihead',
    title: 'Multi-head: 4 tokens, d_model = 4, 2 heads of d_k = 2, with W_O',
    source: 'made for this explorer (np.random.seed(0); X from randn, weights from normal with scale 0.5)',
    note: 'Each head takes two columns of XW_Q, XW_K, XW_V; the heads are concatenated and multiplied by W_O.',
    mode: 'self',
    tokens: ['the', 'cat', 'sat', 'down'],
    random: [
      {
        seed: 0,
        draws: [
          { name: 'X', kind: 'randn', shape: [4, 4] },
          { name: 'W_Q', kind: 'normal', scale: 0.5, shape: [4, 4] },
          { name: 'W_K', kind: 'normal', scale: 0.5, shape: [4, 4] },
          { name: 'W_V', kind: 'normal', scale: 0.5, shape: [4, 4] },
          { name: 'W_O', kind: 'normal', scale: 0.5, shape: [4, 4] },
        ],
      },
    ],
    options: { scale: 'sqrt_dk', heads: 2, kv_heads: 2 },
  },
  {
    id: 'cross',
    title: 'Cross-attention: 2 decoder queries attend to 3 encoder tokens',
    source: 'made for this explorer (np.random.seed(1), randn)',
    note: 'Queries come from X (the decoder), keys and values from X_kv (the encoder).',
    mode: 'cross',
    tokens: ['le', 'chat'],
    kvTokens: ['the', 'black', 'cat'],
    random: [
      {
        seed: 1,
        draws: [
          { name: 'X', kind: 'randn', shape: [2, 4] },
          { name: 'X_kv', kind: 'randn', shape: [3, 4] },
          { name: 'W_Q', kind: 'randn', shape: [4, 3] },
          { name: 'W_K', kind: 'randn', shape: [4, 3] },
          { name: 'W_V', kind: 'randn', shape: [4, 3] },
        ],
      },
    ],
    options: { scale: 'sqrt_dk' },
  },
  {
    id: 'linear',
    title: 'Linear attention: causal, elu + 1, decay γ = 0.9, 5 tokens (its recurrent form in ?walk=recurrent)',
    source:
      'Katharopoulos et al., 2020, “Transformers are RNNs: Fast Autoregressive Transformers with Linear Attention” (ICML), eq. 4–6, 16–20; the decay as in RetNet (Sun et al., 2023); numbers made for this explorer (np.random.seed(7), randn)',
    url: 'https://arxiv.org/abs/2006.16236',
    note:
      'No softmax: φ(x) = elu(x) + 1 replaces exp, so a query reads a running state S = Σ γ^(i−j) φ(k_j) v_jᵀ ' +
      'and z = Σ γ^(i−j) φ(k_j): oᵢ = φ(qᵢ)ᵀS / φ(qᵢ)ᵀz. In practice, “Linear attention, recurrent” steps through S token by token.',
    mode: 'qkv',
    tokens: ['the', 'cat', 'sat', 'on', 'it'],
    random: [
      {
        seed: 7,
        draws: [
          { name: 'Q', kind: 'randn', shape: [5, 3] },
          { name: 'K', kind: 'randn', shape: [5, 3] },
          { name: 'V', kind: 'randn', shape: [5, 2] },
        ],
      },
    ],
    options: { attention: 'linear', causal: true, decay: 0.9 },
  },
  {
    id: 'qk-norm',
    title: 'QK-norm: RMS-normalised queries and keys keep large scores from saturating the softmax (Qwen3, Gemma 3)',
    source:
      'Qwen3 Technical Report (Yang et al., 2025), and Gemma 3 Technical Report (Gemma Team, 2025), which replace ' +
      'Gemma 2’s soft-capping with QK-norm; numbers made for this explorer',
    url: 'https://arxiv.org/abs/2505.09388',
    note:
      'The queries and keys are large, so without the norm the largest score is 48 and each query puts all its weight ' +
      'on one key. RMS norm divides each head’s query and key features by their root mean square (gains g left at ones): ' +
      'every row then has a root mean square of 1, the largest score is 4 (= d_k) and the weights spread again.',
    mode: 'qkv',
    tokens: ['the', 'cat', 'sat'],
    inputs: {
      Q: [
        [8, 0, 4, 0],
        [0, 6, 0, 6],
        [4, 4, 4, 4],
      ],
      K: [
        [6, 2, 0, 0],
        [0, 0, 8, 4],
        [2, 2, 2, 2],
      ],
      V: [
        [1, 0],
        [0, 1],
        [1, 1],
      ],
    },
    options: { qk_norm: { type: 'rms' } },
  },
  {
    id: 'gated',
    title: 'Gated attention: a sigmoid gate on each output feature, read from the token (Qwen3-Next)',
    source:
      'Qiu et al., 2025, “Gated Attention for Large Language Models: Non-linearity, Sparsity, and Attention-Sink-Free” ' +
      '(NeurIPS), the output gate of Qwen3-Next; numbers made for this explorer',
    url: 'https://arxiv.org/abs/2505.06708',
    note:
      'G = σ(X·W_G), one gate per feature of the head’s output (elementwise; a W_G with one column per head gates ' +
      'each head as a whole). A gate near 0 silences that feature for that token (“cat”’s first feature: 0.02), so a head ' +
      'need not park its weight on a sink token to say nothing.',
    mode: 'self',
    tokens: ['the', 'cat', 'sat'],
    inputs: {
      X: [
        [1, 0, 1, 0],
        [0, 2, 0, 1],
        [1, 1, 0, 1],
      ],
      W_Q: [
        [1, 0],
        [0, 1],
        [1, 1],
        [0, 0],
      ],
      W_K: [
        [0, 1],
        [1, 0],
        [1, 0],
        [0, 1],
      ],
      W_V: [
        [1, 0],
        [0, 1],
        [1, 1],
        [0, 1],
      ],
      W_G: [
        [2, -1],
        [-1, 1],
        [0, 1],
        [-2, 0],
      ],
    },
    options: {},
  },
  {
    id: 'sigmoid',
    title: 'Sigmoid attention: the fruit lookup with each weight σ(score − ln 3) on its own, rows need not sum to 1',
    source:
      'Ramapuram et al., 2024, “Theory, Analysis, and Best Practices for Sigmoid Self-Attention” (ICLR 2025), ' +
      'with its bias b = −ln n; the first example’s numbers',
    url: 'https://arxiv.org/abs/2409.04431',
    note:
      'The first example’s queries, keys and values with the softmax replaced by a sigmoid of each scaled score plus ' +
      'b = −ln 3 (3 keys). No key takes weight from another: “sweet?” weighs “banana” 0.96 and “apple” 0.85 at once, ' +
      'and its weights sum to 2.06, not 1.',
    ...fruitLookup(),
    options: { score_fn: 'sigmoid' },
  },
  {
    id: 'differential',
    title: 'Differential attention: two softmax maps, the second subtracted, cancel the weight both give a sink token',
    source: 'Ye et al., 2024, “Differential Transformer” (ICLR 2025), eq. 1–3; numbers made for this explorer',
    url: 'https://arxiv.org/abs/2410.05258',
    note:
      'Each head’s 6 features split in halves of 3. The first halves find the word before each query and the sink “<s>”; ' +
      'the second halves see only the sink. A = A₁ − λA₂ with λ = 0.5 leaves 0.10 on “<s>” and 0.37 on the word before ' +
      '(softmax attention over all 6 features gives “<s>” 0.68). Each output row is then normalised and scaled by ' +
      '1 − λ_init = 0.2.',
    mode: 'qkv',
    tokens: ['cat', 'sat'],
    kvTokens: ['<s>', 'the', 'cat', 'sat'],
    inputs: {
      Q: [
        [1.5, 1.5, 0, 1.5, 0, 0],
        [1.5, 0, 1.5, 1.5, 0, 0],
      ],
      K: [
        [2, 0, 0, 2, 0, 0],
        [0, 2, 0, 0, 0, 0],
        [0, 0, 2, 0, 0, 0],
        [0, 0, 0, 0, 0, 0],
      ],
      V: [
        [0, 0],
        [1, 0],
        [0, 1],
        [1, 1],
      ],
    },
    options: { differential: { lambda: 0.5 } },
  },
  {
    id: 'latent',
    title:
      'Multi-head latent attention: every head’s keys and values from one latent of 2 numbers a token, cached in 4 numbers instead of 8',
    source:
      'DeepSeek-AI, 2024, “DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language Model”, ' +
      'eq. 9–19 without the latent RMSNorms, the queries from X·W_Q as in DeepSeek-V2-Lite; numbers made for this explorer',
    url: 'https://arxiv.org/abs/2405.04434',
    note:
      'X is compressed to c_KV = X·W_DKV, 2 numbers a token; both heads make their keys and values from it (W_UK, W_UV). ' +
      'A score is a content part q_C·k_C plus a rotary part q_R·k_R, one rotated key k_R shared by the heads. Head 2’s content ' +
      'scores for “sat” are 6, 6, 6: the rotary part (−2.65, 7.69, 8) tells its keys apart. The absorbed form (W_UK folded into ' +
      'the query) gives the same scores from c_KV itself, and a cache keeps c_KV and k_R, 2 + 2 = 4 numbers a token, where ' +
      'multi-head attention keeps 8.',
    mode: 'self',
    tokens: ['the', 'cat', 'sat'],
    inputs: {
      X: [
        [1, 0, 1, 0],
        [0, 2, 0, 1],
        [1, 1, 0, 1],
      ],
      W_DKV: [
        [1, 0],
        [0, 1],
        [1, 1],
        [0, 1],
      ],
      W_UK: [
        [1, 0, 0, 1],
        [0, 1, 1, 0],
      ],
      W_UV: [
        [1, 0, 1, 1],
        [0, 1, 0, 1],
      ],
      W_KR: [
        [1, 0],
        [0, 1],
        [0, 0],
        [1, 1],
      ],
      W_QR: [
        [1, 0, 0, 1],
        [0, 1, 1, 0],
        [1, 0, 0, 0],
        [0, 0, 1, 1],
      ],
      W_Q: [
        [1, 0, 0, 1],
        [0, 1, 1, 0],
        [1, 1, 0, 0],
        [0, 0, 1, 1],
      ],
    },
    options: { heads: 2, causal: true },
  },
  {
    id: 'lookup',
    title: 'A soft dictionary lookup: three questions about fruit (the first example)',
    source: 'made for this explorer: hand-made 2-number keys (how sweet, how sour), no random numbers',
    note:
      'Each key describes a fruit by two numbers, how sweet and how sour; each query asks for a taste; ' +
      'each value is what the entry returns: its price and its calories (per 100 g, in hundreds). A dictionary ' +
      'would return the one entry whose key matches; attention returns a mix of every value, weighted by how ' +
      'well its key matches the query: “sweet?” gets mostly banana, “sour?” mostly lemon, “both?” mostly apple.',
    ...fruitLookup(),
    options: { scale: 'sqrt_dk' },
  },
];

/**
 * The preset with this id, or undefined.
 * @type {typeof import('./index.js').findPreset}
 */
export function findPreset(id) {
  return presets.find((p) => p.id === id);
}

const VECTOR_INPUTS = new Set(['b_Q', 'b_K', 'b_V', 'b_O', 'b_G']);

function numpyCall(draw) {
  const [r, c] = draw.shape;
  switch (draw.kind) {
    case 'randn':
      return `np.random.randn(${r}, ${c})`;
    case 'rand':
      return `np.random.rand(${r}, ${c})`;
    case 'normal': {
      const extra = (draw.loc ?? 0) !== 0 || (draw.scale ?? 1) !== 1 ? `loc=${draw.loc ?? 0}, scale=${draw.scale ?? 1}, ` : '';
      return `np.random.normal(${extra}size=(${r}, ${c}))`;
    }
    case 'randint':
      return `np.random.randint(${draw.low ?? 0}, ${draw.high}, size=(${r}, ${c}))`;
    default:
      return `np.random.${draw.kind}(${r}, ${c})`;
  }
}

/**
 * The numpy lines a recipe stands for, e.g. ["np.random.seed(42)", "Q = np.random.randn(4, 8)", ...].
 * @type {typeof import('./index.js').numpyLines}
 */
export function numpyLines(recipe) {
  const lines = [`np.random.seed(${recipe.seed})`];
  for (const d of recipe.draws) {
    lines.push(`${d.name}${d.join === 'columns' ? ' column' : ''} = ${numpyCall(d)}`);
  }
  return lines;
}

/**
 * The numpy line for one "random" fill of one matrix.
 * @type {typeof import('./index.js').numpyLine}
 */
export function numpyLine(name, seed, draw) {
  return `np.random.seed(${seed}); ${name} = ${numpyCall(draw)}`;
}

/**
 * Turn a preset into a problem (the package's problem JSON, with number arrays) using `engine`
 * for its random draws. Returns { problem, numpy } where numpy maps input names to the numpy
 * lines that produced them.
 * @type {typeof import('./index.js').presetProblem}
 */
export function presetProblem(preset, engine) {
  const problem = {};
  const numpy = {};
  for (const [name, value] of Object.entries(preset.inputs ?? {})) {
    problem[name] = value.map((row) => (Array.isArray(row) ? row.slice() : row));
  }
  for (const recipe of preset.random ?? []) {
    const spec = recipe.draws.map(({ name, join, ...draw }) => draw);
    const drawn = engine.random(recipe.seed, spec);
    const lines = numpyLines(recipe).join('\n');
    recipe.draws.forEach((d, i) => {
      const m = drawn[i];
      if (d.join === 'columns') {
        // A list of column vectors side by side, as np.zeros((D, N)) filled column by column.
        const prev = problem[d.name] ?? m.map(() => []);
        problem[d.name] = prev.map((row, r) => row.concat(m[r]));
      } else {
        problem[d.name] = m;
      }
      numpy[d.name] = lines;
    });
  }
  for (const name of Object.keys(problem)) {
    if (VECTOR_INPUTS.has(name)) problem[name] = problem[name].flat();
  }
  problem.options = { ...(preset.options ?? {}) };
  return { problem, numpy };
}
