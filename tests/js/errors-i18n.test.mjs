// The core's input errors as message ids (issue 33): cpp/validate.cpp throws "error.*" messages
// with parameters, the wire carries them (message_id, values) and web/lib fills error.message with
// English from en.json, byte for byte the English the API always gave; i18n.js errorWords gives the
// same message in any language, naming the same input, row and column.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { dist, repo } from './helpers.mjs';

const { LANGUAGES, errorWords, english, loadTranslator } = await import(`${dist}i18n.js`);
const { loadAttention } = await import(`${dist}node.js`);
const engine = await loadAttention();

const locales = join(repo, 'web', 'lib', 'locales');
const catalogue = (code) => JSON.parse(readFileSync(join(locales, `${code}.json`), 'utf8'));
const en = catalogue('en');

/** The error `run` throws for `problem` (fails when it throws none). */
function thrown(problem) {
  try {
    engine.run(problem);
  } catch (error) {
    return error;
  }
  assert.fail(`no error for ${JSON.stringify(problem)}`);
}

const X = [
  [1, 0, 1],
  [0, 1, 1],
];
const W = [
  [1, 0],
  [0, 1],
  [1, 1],
];
const one = { Q: [[1, 2]], K: [[1, 2]], V: [[1]] };
// Multi-head latent attention from X (2x3): a latent of 2, one head of d_h = 2.
const LATENT = {
  X,
  W_DKV: W,
  W_UK: [
    [1, 0],
    [0, 1],
  ],
  W_UV: [
    [1, 0],
    [0, 1],
  ],
  W_Q: W,
};
// Bad problems and the English the API said before the errors became message ids (the messages of
// tests/cpp and of the README's examples), with where each is.
const CASES = [
  {
    problem: {
      Q: [[1, 2]],
      K: [
        [1, 2],
        [3, 4],
      ],
      V: [[1]],
    },
    english: 'K has 2 rows but V has 1: every key needs a value (K is 2x2, V is 1x1)',
    field: 'V',
  },
  {
    problem: {
      X: W,
      W_Q: [
        [1, 0],
        [0, 1],
      ],
      W_K: X,
      W_V: X,
      options: { layout: 'columns' },
    },
    english: 'W_Q has 2 columns but X has 3 rows (W_Q is 2x2, X is 3x2)',
    field: 'W_Q',
  },
  {
    problem: { Q: [[1, 2, 3, 4]], K: [[1, 2, 3]], V: [[1, 2]], options: { heads: 2, kv_heads: 2 } },
    english: 'K has 3 columns but 2 key heads of d_k = 2 need 4',
    field: 'K',
  },
  {
    problem: { Q: [[1, 2, 3, 4]], K: [[1, 2]], V: [[1]], options: { heads: 4, kv_heads: 1 } },
    english: 'K has 2 columns but 1 key head of d_k = 1 need 1',
    field: 'K',
  },
  {
    problem: { Q: [[1, NaN]], K: [[1, 2]], V: [[1]] },
    english: 'Q row 1, column 2 is nan: inputs must be finite numbers (only an additive mask may hold -inf)',
    field: 'Q',
    row: 1,
    column: 2,
  },
  {
    problem: { ...one, options: { mask: [[true, false, true]] } },
    english: 'mask is 1x3 but the scores are 1x1 (queries x keys)',
    field: 'options.mask',
  },
  {
    problem: {
      Q: [
        [1, 2],
        [3, 4],
      ],
      K: [
        [1, 2],
        [3, 4],
      ],
      V: [[1], [2]],
      options: {
        mask: [
          [0, 0],
          [0, Infinity],
        ],
      },
    },
    english: 'mask row 2, column 2 is inf: an additive mask holds finite numbers or -inf',
    field: 'options.mask',
    row: 2,
    column: 2,
  },
  {
    problem: { ...one, options: { precision: 'float32', softcap: 1e39 } },
    english: 'softcap 1e+39 is infinite in float32; compute in float64',
    field: 'options.softcap',
  },
  {
    problem: { ...one, options: { precision: 'float32', scale: 1e-50 } },
    english: 'scale 1e-50 is 0 in float32; compute in float64',
    field: 'options.scale',
  },
  {
    problem: { ...one, options: { alibi: [1, 2, 3] } },
    english: 'alibi needs one slope per head: 3 given for 1 head',
    field: 'options.alibi',
  },
  {
    problem: { Q: [[1, 2]], K: [[1, 2]], V: [[1, 2]], options: { heads: 2, sink_logit: [1, 2, 3] } },
    english: 'sink_logit needs one number or one per head: 3 given for 2 heads',
    field: 'options.sink_logit',
  },
  {
    problem: { Q: [[1]], X },
    english: 'give either Q, K and V, or X with W_Q, W_K and W_V, not both (found Q and X)',
  },
  {
    problem: { X, W_Q: W, W_K: W },
    english: 'W_V is missing: self-attention from X needs X, W_Q, W_K and W_V',
    field: 'W_V',
  },
  {
    problem: { Q: [[1, 2]], K: [[1, 2]] },
    english: 'V is missing: give Q, K and V (or X with W_Q, W_K and W_V)',
    field: 'V',
  },
  {
    problem: { X, W_Q: W, W_K: W, W_V: W, b_Q: [1, 2, 3] },
    english: 'b_Q has 3 entries but W_Q has 2 columns: one bias per column of W_Q',
    field: 'b_Q',
  },
  {
    problem: { ...one, W_O: [[1]], b_O: [1, 2] },
    english: 'b_O has 2 entries but W_O has 1 columns: one bias per column of W_O',
    field: 'b_O',
  },
  {
    problem: { Q: [[1, 2, 3]], K: [[1, 2, 3]], V: [[1, 2]], options: { heads: 3, kv_heads: 2 } },
    english: 'kv_heads = 2 does not divide heads = 3: each key/value head serves a whole group of query heads',
    field: 'options.kv_heads',
  },
  {
    problem: { Q: [[1, 2, 3]], K: [[1, 2, 3]], V: [[1]], options: { heads: 2 } },
    english: 'heads = 2 does not divide d_model = 3 (the 3 columns of Q)',
    field: 'options.heads',
  },
  {
    problem: { ...one, options: { positions: { queries: [0, 1] } } },
    english: 'positions.queries has 2 entries but there are 1 query',
    field: 'options.positions.queries',
  },
  {
    problem: { ...one, past_K: [[1, 2]], past_V: [[1]], options: { positions: { keys: [0, 1, 2] } } },
    english: 'positions.keys has 3 entries but there are 2 keys (1 cached + 1 new)',
    field: 'options.positions.keys',
  },
  {
    problem: { ...one, options: { positions: { keys: [1e16] } } },
    english: 'positions.keys entry 1 is 1e+16: positions are whole numbers, 0 or more',
    field: 'options.positions.keys',
    row: 1,
  },
  {
    problem: { ...one, options: { positional: 'sinusoidal' } },
    english: 'positional "sinusoidal" adds positions to X, but Q, K and V are given directly: give X with W_Q, W_K and W_V',
    field: 'options.positional',
  },
  {
    problem: { ...one, past_K: [[1, 2]] },
    english: 'past_K is given without past_V: a cache holds keys and values',
    field: 'past_K',
  },
  // RoPE, the variants, linear and latent attention (tests/cpp test_variants, test_linear_latent).
  {
    problem: { X, W_Q: [[1], [0], [1]], W_K: [[1], [0], [1]], W_V: W, options: { rope: true } },
    english: 'RoPE turns features in pairs, but d_k = 1 is odd',
    field: 'options.rope.dims',
  },
  {
    problem: { X, W_Q: W, W_K: W, W_V: W, options: { rope: { cos: [[1]], sin: [[0]] } } },
    english: 'query 2 is at position 1 but the rope tables have 1 rows (positions 0 to 0)',
    field: 'options.rope.cos',
  },
  {
    problem: { ...one, options: { score_fn: 'sigmoid', differential: { lambda: [0.5] } } },
    english: 'options.score_fn "sigmoid" and options.differential exclude one another: give one of them',
    field: 'options.differential',
  },
  {
    problem: { ...LATENT, options: { attention: 'linear' } },
    english:
      'options.attention "linear" and W_DKV (multi-head latent attention) exclude one another: a problem computes one variant of attention',
    field: 'W_DKV',
  },
  {
    problem: { ...one, options: { decay: 0.5 } },
    english: 'options.decay is an option of linear attention: set options.attention to "linear"',
    field: 'options.decay',
  },
  {
    problem: { X, W_Q: W, W_K: W, W_V: W, options: { qk_norm: { type: 'rms', g_q: [1, 2, 3] } } },
    english: 'options.qk_norm.g_q has 3 gains but d_k = 2: one per feature of a head, shared by every head',
    field: 'options.qk_norm.g_q',
  },
  {
    problem: { X, W_Q: W, W_K: W, W_V: W, W_G: [[1, 2, 3]] },
    english: 'W_G has 1 rows but X has 3 columns (W_G is 1x3)',
    field: 'W_G',
  },
  {
    problem: { Q: [[1, 2, 3]], K: [[1, 2, 3]], V: [[1]], options: { differential: { lambda: [0.5] } } },
    english: "options.differential needs an even d_k (each head's features split in halves), got d_k = 3",
    field: 'options.differential',
  },
  {
    problem: { X, W_DKV: W, W_UK: LATENT.W_UK, W_Q: W },
    english: 'W_UV is missing: multi-head latent attention needs X, W_DKV, W_UK, W_UV and W_Q (or W_DQ with W_UQ)',
    field: 'W_UV',
  },
  {
    problem: { ...LATENT, W_UK: [[1, 0]] },
    english: 'W_UK has 1 rows but c_KV = X·W_DKV has 2 columns (W_UK is 1x2)',
    field: 'W_UK',
  },
];

describe('the core names its input errors by message id', () => {
  test('ids validate.cpp throws are in English and in every catalogue', () => {
    const source = readFileSync(join(repo, 'cpp', 'validate.cpp'), 'utf8');
    const named = new Set();
    // The id is the string before the parameters ({{"name", ...}}) of `throw input_error(place, "id", {...})`,
    // or require()'s last argument.
    for (const [, head] of source.matchAll(/throw input_error\(([^{;]*)/g))
      for (const [, id] of head.matchAll(/"([a-z0-9-]+)"/g)) named.add(id);
    for (const [, id] of source.matchAll(/require\([^;]*"([a-z0-9-]+)"\)/g)) named.add(id);
    assert.ok(named.size >= 35, `only ${named.size} ids found: the scan is blind`);
    for (const code of Object.keys(LANGUAGES)) {
      const words = catalogue(code);
      for (const id of named) assert.equal(typeof words[`error.${id}`], 'string', `${code} lacks error.${id}`);
    }
  });

  for (const c of CASES) {
    test(`English unchanged: ${c.english}`, () => {
      const error = thrown(c.problem);
      assert.equal(error.message, c.english);
      assert.ok(Object.hasOwn(en, error.message_id), `${error.message_id} is not in en.json`);
      assert.equal(errorWords(error), c.english);
      assert.equal(english(error.message_id, error.values), c.english);
      assert.equal(error.field, c.field);
      assert.equal(error.row, c.row);
      assert.equal(error.column, c.column);
    });
  }

  test('every language says each error with its own words, naming the same input, row and column', async () => {
    for (const code of Object.keys(LANGUAGES).filter((c) => c !== 'en')) {
      const t = await loadTranslator(code);
      const own = catalogue(code);
      for (const c of CASES) {
        const error = thrown(c.problem);
        assert.ok(Object.hasOwn(own, error.message_id), `${code} lacks ${error.message_id}`);
        const said = errorWords(error, t);
        assert.notEqual(said, error.message, `${code} ${error.message_id} is English`);
        assert.doesNotMatch(said, /[{}]/, `${code} ${error.message_id}: ${said}`);
        // The input named (a matrix's name, an option's key where English writes it: keys stay verbatim;
        // "mask" is a word, translated) and every number.
        const key = c.field?.replace(/^options\./, '');
        if (key && key !== 'mask' && c.english.includes(key)) assert.ok(said.includes(key), `${code}: ${said} does not name ${key}`);
        for (const n of c.english.match(/\d+(?:e[+-]\d+)?/g) ?? []) assert.ok(said.includes(n), `${code}: ${said} lacks ${n}`);
      }
    }
  });

  test('French: the row and column named are the English ones', async () => {
    const fr = await loadTranslator('fr');
    const error = thrown({
      Q: [
        [1, 2],
        [3, Infinity],
      ],
      K: [[1, 2]],
      V: [[1]],
    });
    assert.equal(error.message, 'Q row 2, column 2 is inf: inputs must be finite numbers (only an additive mask may hold -inf)');
    assert.equal(
      errorWords(error, fr),
      'Q ligne 2, colonne 2 vaut inf : les entrées doivent être des nombres finis (seul un masque additif peut contenir -inf)',
    );
    assert.deepEqual([error.field, error.row, error.column], ['Q', 2, 2]);
  });

  test('runAll keeps its prefix, in English and as a message', async () => {
    const bad = CASES[0];
    let error;
    try {
      engine.runAll([one, bad.problem]);
    } catch (e) {
      error = e;
    }
    assert.equal(error.message, `problem 2 of 2: ${bad.english}`);
    assert.equal(errorWords(error), error.message);
    assert.equal(error.problemIndex, 1);
    const fr = await loadTranslator('fr');
    assert.equal(errorWords(error, fr), `problème 2 sur 2 : ${errorWords(error.cause, fr)}`);
    assert.match(errorWords(error, fr), /^problème 2 sur 2 : K a 2 lignes mais V en a 1/);
  });

  test('an error without an id (a JavaScript check, a file not yet converted) says its English message', async () => {
    const fr = await loadTranslator('fr');
    const error = thrown({ ...one, options: { window: [1.5, null] } });
    assert.equal(error.message_id, undefined);
    assert.equal(errorWords(error, fr), error.message);
    assert.equal(errorWords(new Error('plain')), 'plain');
  });

  test('every catalogue formats every error message with the values of its English (selects and plurals included)', async () => {
    for (const code of Object.keys(LANGUAGES)) {
      const t = await loadTranslator(code);
      for (const c of CASES) {
        const error = thrown(c.problem);
        assert.doesNotThrow(() => t(error.message_id, error.values), `${code} ${error.message_id}`);
      }
    }
  });
});

// cpp/model_config.cpp: a training configuration's errors (the playground's and the CLI's `train`).
const SMALL_MODEL = { vocab: 5, context: 4, d_model: 4 };
const CONFIG_CASES = [
  {
    config: { model: SMALL_MODEL, bogus: 1 },
    english: "configuration: unknown key 'bogus' (it takes model, task, optimizer, steps, batch, seed, eval_every)",
  },
  { config: { model: { context: 4, d_model: 4 } }, english: 'model.vocab is missing (a whole number)' },
  { config: { model: { ...SMALL_MODEL, layers: 0 } }, english: 'model.layers: expected a whole number from 1 to 32, got 0' },
  {
    config: { model: { ...SMALL_MODEL, d_model: 6, heads: 4 } },
    english: 'model.heads: 4 heads do not divide d_model = 6 (give d_head, or heads that divide d_model)',
  },
  {
    config: { model: { ...SMALL_MODEL, positions: 'nope' } },
    english: 'model.positions: expected one of "learned", "sinusoidal", "rope", "none", got "nope"',
  },
  { config: { model: SMALL_MODEL, optimizer: { beta1: 1 } }, english: 'optimizer.beta1: expected a number in [0, 1), got 1' },
  {
    config: { model: SMALL_MODEL, task: 'nope' },
    english: 'task: unknown task "nope" (the tasks are previous, reverse, sort, recall, induction, text, custom)',
  },
  {
    config: { model: SMALL_MODEL, task: { name: 'text', text: 'aaaa' } },
    english: 'task.text: the text has 1 distinct character; it needs at least 2 to predict one from another',
  },
  {
    config: { model: { ...SMALL_MODEL, vocab: 32, context: 8 }, task: 'induction' },
    english: 'model.context: the task induction needs a context of at least 9 (BOS and two copies of 4 or more tokens), got 8',
  },
  {
    config: { model: SMALL_MODEL, task: { name: 'custom', tokens: [[1, 2], [1]] } },
    english: 'task.tokens[1]: 1 tokens but tokens[0] has 2 (the sequences of a batch have one length; pad with targets -1)',
  },
  {
    config: { model: SMALL_MODEL, task: { name: 'custom', tokens: [1, 2], targets: [1, 7] } },
    english: 'task.targets[1]: expected a token from 0 to 4, or -1 for no loss, got 7',
  },
];

describe('a training configuration names its errors by message id', () => {
  test('ids model_config.cpp, tasks.cpp and bindings_model.cpp throw are in English and in every catalogue', () => {
    const source = ['model_config.cpp', 'tasks.cpp', 'bindings_model.cpp']
      .map((f) => readFileSync(join(repo, 'cpp', f), 'utf8'))
      .join('\n');
    const named = new Set([...source.matchAll(/"((?:config|model)-[a-z0-9-]+)"/g)].map(([, id]) => id));
    assert.ok(named.size >= 39, `only ${named.size} ids found: the scan is blind`);
    for (const code of Object.keys(LANGUAGES)) {
      const words = catalogue(code);
      for (const id of named) assert.equal(typeof words[`error.${id}`], 'string', `${code} lacks error.${id}`);
    }
  });

  test('each error is the same English, and each language says it in its own words with every key and number', async () => {
    for (const c of CONFIG_CASES) {
      let error;
      try {
        engine.model(c.config).dispose();
      } catch (e) {
        error = e;
      }
      assert.ok(error, `${c.english}: nothing thrown`);
      assert.equal(error.message, c.english);
      assert.match(error.message_id, /^error\.config-/);
      assert.equal(english(error.message_id, error.values), c.english);
      for (const code of Object.keys(LANGUAGES)) {
        if (code === 'en') continue;
        const said = errorWords(error, await loadTranslator(code));
        assert.notEqual(said, error.message, `${code} ${error.message_id} is English`);
        for (const word of c.english.match(/[a-z_]+\.[a-z_.[\]0-9]+|\d+/g) ?? [])
          assert.ok(said.includes(word), `${code}: ${said} lacks ${word}`);
      }
    }
  });
});

test("the model worker's errors keep their message id and values (the playground says them in its language)", async () => {
  const { connectModelWorker } = await import(`${dist}model-client.js`);
  const { failed } = await import(`${dist}playground-state.js`);
  let error;
  try {
    engine.model({ model: { ...SMALL_MODEL, layers: 0 } });
  } catch (e) {
    error = e;
  }
  // A stand-in Worker that answers as model-worker.js does.
  const listeners = {};
  const worker = {
    addEventListener: (type, f) => (listeners[type] = f),
    removeEventListener: () => {},
    terminate: () => {},
    postMessage: ({ id }) =>
      queueMicrotask(() => listeners.message({ data: { id, error: error.message, message_id: error.message_id, values: error.values } })),
  };
  const remote = connectModelWorker(worker);
  const rejected = await remote.create({}).then(
    () => null,
    (e) => e,
  );
  assert.equal(rejected.message, 'model.layers: expected a whole number from 1 to 32, got 0');
  assert.equal(rejected.message_id, 'error.config-expected-whole');
  const fr = await loadTranslator('fr');
  assert.equal(errorWords(rejected, fr), 'model.layers : un nombre entier de 1 à 32 était attendu, reçu 0');
  const state = failed({}, rejected.message, { message_id: rejected.message_id, values: rejected.values });
  assert.equal(errorWords({ message: state.error, ...state.errorSaid }, fr), errorWords(rejected, fr));
});

test("a model's errors (bindings_model.cpp, tasks.cpp) are message ids, said in every language", async () => {
  const config = { model: { vocab: 8, context: 8, d_model: 8, layers: 2, heads: 2 }, task: 'previous' };
  const model = engine.model(config);
  const gone = engine.model(config);
  gone.dispose();
  const cases = [
    [
      () =>
        model.predict([
          [1, 2],
          [3, 4],
        ]),
      'tokens: expected one sequence (a list of tokens)',
    ],
    [() => model.evaluate({ ablate: 5 }), 'ablate: expected a list of [layer, head] pairs'],
    [() => model.evaluate({ ablate: [[3, 1]] }), 'ablate: [3,1] is not [layer, head] of this model (layers 1 to 2, heads 1 to 2)'],
    [
      () => engine.model({ model: config.model }).train(1),
      'task is missing: this model was made without one (give the configuration a task to train it)',
    ],
    [() => gone.evaluate(), 'this model was disposed of (dispose() frees it; make a new one)'],
  ];
  for (const [body, text] of cases) {
    let error;
    try {
      body();
    } catch (e) {
      error = e;
    }
    assert.equal(error.message, text);
    assert.match(error.message_id, /^error\.model-/);
    for (const code of Object.keys(LANGUAGES)) {
      if (code === 'en') continue;
      const said = errorWords(error, await loadTranslator(code));
      assert.notEqual(said, text, `${code} ${error.message_id} is English`);
      for (const word of text.match(/\[[^\]]*\]|\d+|dispose\(\)/g) ?? []) assert.ok(said.includes(word), `${code}: ${said} lacks ${word}`);
    }
  }
  model.dispose();
});
