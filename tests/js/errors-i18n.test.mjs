// The core's input errors as message ids (issue 33): cpp/validate.cpp throws "error.*" messages
// with parameters, the wire carries them (message_id, values) and web/lib fills error.message with
// English from en.json, byte for byte the English the API always gave; i18n.js errorWords gives the
// same message in any language, naming the same input, row and column. The parser's errors too
// (cpp/parse.cpp, cpp/parse/*.cpp: error.parse-*), through parseMatrix and parseCell.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { dist, repo } from './helpers.mjs';

const { LANGUAGES, errorWords, english, loadTranslator } = await import(`${dist}i18n.js`);
const { loadAttention } = await import(`${dist}node.js`);
const engine = await loadAttention();
const problemModule = await import(`${dist}problem.js`);

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

/** An error says case `c`'s English (its message, by its id from en.json) and names its field, row and column. */
function saysEnglish(error, c) {
  assert.equal(error.message, c.english);
  assert.ok(Object.hasOwn(en, error.message_id), `${error.message_id} is not in en.json`);
  assert.equal(errorWords(error), c.english);
  assert.equal(english(error.message_id, error.values), c.english);
  assert.equal(error.field, c.field);
  assert.equal(error.row, c.row);
  assert.equal(error.column, c.column);
}

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
      saysEnglish(thrown(c.problem), c);
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

  test('an error without an id (a programmer error, a file not yet converted) says its English message', async () => {
    const fr = await loadTranslator('fr');
    const error = new Error('wire: the packed trace has 3 numbers left over');
    assert.equal(errorWords(error, fr), error.message);
    assert.equal(errorWords({ message: 'English', message_id: 'error.no-such-id', values: {} }, fr), 'English');
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

// The rest of the core (issue 33): the walkthroughs (cpp/practice.cpp), gradients and explain, the
// scores overflowing, numpy's random draws and the output-only path (cpp/fast_attention.cpp,
// cpp/bindings_fast.cpp) name their errors by id too.
const CORE_FILES = [
  'practice.cpp',
  'fast_attention.cpp',
  'bindings_fast.cpp',
  'gradients.cpp',
  'explain.cpp',
  'explain_gradients.cpp',
  'attention.cpp',
  'numpy_random.cpp',
];

/** The ids `files` (in cpp/) throw: the hyphenated strings of their input_error( and report_first( calls. */
function idsThrownIn(files) {
  const named = new Set();
  for (const file of files) {
    const source = readFileSync(join(repo, 'cpp', file), 'utf8');
    // A call runs to its `;`, a lambda's body ("; }") inside it included.
    for (const [call] of source.matchAll(/(?:input_error|report_first)\((?:[^;]|;\s*\})*/g)) {
      for (const [, id] of call.matchAll(/"([a-z][a-z0-9]*(?:-[a-z0-9]+)+)"/g)) named.add(id);
    }
  }
  return named;
}

const LIST = { Q: [[1], [2], [3]], K: [[1], [2], [3]], V: [[1], [2], [3]] };

/** Calls that reach the errors of the core's other files through the JS API. */
const CORE_CASES = [
  {
    call: () =>
      engine.decode({
        Q: [
          [1, 2],
          [3, 4],
        ],
        K: [
          [1, 2],
          [3, 4],
          [5, 6],
        ],
        V: [[1], [2], [3]],
      }),
    english: 'decode needs one key and one value per query (each token generated brings its own): Q has 2 rows but K has 3',
    field: 'K',
  },
  {
    call: () => engine.decode({ ...LIST, options: { positions: { queries: [0, 5, 6], keys: [0, 5, 2] } } }),
    english:
      'decode: positions.keys entry 3 (2) is not after positions.queries entry 2 (5): token 3 is generated after token 2, so its key must sit at a later position',
    field: 'positions.keys',
    row: 3,
  },
  {
    call: () => engine.decode({ ...one, past_K: [[1, 2]], past_V: [[1]] }),
    english:
      "decode builds the KV cache itself, token by token: give the tokens' Q, K and V (or X with W_Q, W_K and W_V) without past_K and past_V",
    field: 'past_K',
  },
  {
    call: () =>
      engine.tiles({ Q: [[1e200], [1e200]], K: [[1e200], [1e200]], V: [[1], [1]], options: { scale: 'none' } }, { block_q: 1, block_k: 1 }),
    english: 'tiles: the scores overflow: row 1, column 1 is inf, which no running max can rescale; scale the inputs down',
  },
  {
    call: () => engine.recurrent(one),
    english:
      'recurrent needs causal linear attention: options.attention "linear" with options.causal true (without causal every query reads every key, and nothing is carried from token to token)',
    field: 'options.attention',
  },
  {
    call: () => engine.onlineSoftmax([]),
    english: 'the row is empty: a softmax needs at least one number',
    field: 'row',
  },
  {
    call: () => engine.onlineSoftmax([1e39], { precision: 'float32' }),
    english: "entry 1 of the row is 1e+39: expected a finite number or -inf (a hidden entry) within float32's range",
    field: 'row',
    row: 1,
  },
  {
    call: () => engine.gradients(one, { dO: [[1, 2]] }),
    english: 'dO has 2 columns but the output has 1 (dO is 1x2, the output is 1x1)',
    field: 'dO',
  },
  {
    call: () => engine.gradients(one, { dO: [[NaN]] }),
    english: 'dO: row 1, column 1 is nan, not a finite number',
    field: 'dO',
    row: 1,
    column: 1,
  },
  {
    call: () => engine.explain(one, { step: 'weights', row: 5, col: 0 }),
    english: "step 'weights' is 1x1: it has no row 6, column 1",
    field: 'row',
    row: 6,
    column: 1,
  },
  {
    call: () => engine.explain(one, { step: 'softcapped', row: 0, col: 0 }),
    english: "the trace has no step 'softcapped' for head 0: its steps are Q, K, V, scores, scaled, weights, output",
    field: 'step',
  },
  {
    call: () =>
      engine.run({
        Q: [[1e300, 1e300]],
        K: [
          [1e300, -1e300],
          [1, 1],
        ],
        V: [[1], [2]],
        options: { scale: 'none' },
      }),
    english: 'the scores overflow float64: row 1, column 1 is not a number (inf - inf or 0 x inf); scale the inputs down',
  },
  {
    call: () => engine.attention({ Q: [[1, NaN]], K: [[1, 2]], V: [[1]] }),
    english: 'Q row 1, column 2 is nan: inputs must be finite numbers (only an additive mask may hold -inf)',
    field: 'Q',
    row: 1,
    column: 2,
  },
  {
    call: () => engine.attention({ Q: [[1, 2]], K: [[1, 2]], V: [[1]], mask: [[Infinity]] }),
    english: 'mask row 1, column 1 is inf: an additive mask holds finite numbers or -inf',
    field: 'mask',
    row: 1,
    column: 1,
  },
];

/** The error `call` throws (fails when it throws none). */
function thrownBy(call) {
  try {
    call();
  } catch (error) {
    return error;
  }
  assert.fail(`no error from ${call}`);
}

describe('the walkthroughs, gradients, explain and the fast path name their errors by message id', () => {
  test('ids the core files throw are in English and in every catalogue', () => {
    const named = idsThrownIn(CORE_FILES);
    assert.ok(named.size >= 40, `only ${named.size} ids found: the scan is blind`);
    for (const code of Object.keys(LANGUAGES)) {
      const words = catalogue(code);
      for (const id of named) assert.equal(typeof words[`error.${id}`], 'string', `${code} lacks error.${id}`);
    }
  });

  test("the fast entry's English (fast.js FAST_ENGLISH, no catalogue loaded) is en.json's, for every id the fast path throws", async () => {
    const { FAST_ENGLISH } = await import(`${dist}fast.js`);
    for (const id of idsThrownIn(['fast_attention.cpp', 'bindings_fast.cpp'])) {
      assert.equal(FAST_ENGLISH[`error.${id}`], en[`error.${id}`], id);
    }
    for (const [id, words] of Object.entries(FAST_ENGLISH)) assert.equal(words, en[id], id);
  });

  test('the lean fast entry says its errors in English too', async () => {
    const { loadFastAttention } = await import(`${dist}fast-node.js`);
    const fast = await loadFastAttention();
    const error = thrownBy(() => fast.attention({ Q: [[1, NaN]], K: [[1, 2]], V: [[1]] }));
    assert.equal(error.message, CORE_CASES.find((c) => c.field === 'Q').english);
    assert.equal(error.message_id, 'error.fast-not-finite');
  });

  for (const c of CORE_CASES) {
    test(`English unchanged: ${c.english}`, () => {
      saysEnglish(thrownBy(c.call), c);
    });
  }

  test('every language says each of them with its own words, naming the same keys and every number', async () => {
    for (const code of Object.keys(LANGUAGES).filter((c) => c !== 'en')) {
      const t = await loadTranslator(code);
      for (const c of CORE_CASES) {
        const error = thrownBy(c.call);
        const said = errorWords(error, t);
        assert.notEqual(said, error.message, `${code} ${error.message_id} is English`);
        assert.doesNotMatch(said, /[{}]/, `${code} ${error.message_id}: ${said}`);
        // Code names stay verbatim: the keys and functions English names (decode, positions.keys,
        // past_K, dO, softcapped, float32 ...), and every number.
        for (const name of c.english.match(/\b(?:[A-Za-z]+_[A-Za-z_]+|[a-z]+\.[a-z.]+|[A-Z]\b|dO|float\d\d|decode|tiles|recurrent)\b/g) ??
          []) {
          assert.ok(said.includes(name), `${code}: ${said} does not name ${name}`);
        }
        for (const n of c.english.match(/\d+(?:e[+-]\d+)?/g) ?? []) assert.ok(said.includes(n), `${code}: ${said} lacks ${n}`);
      }
    }
  });
});

// Bad texts and the English the parser said before its errors became message ids (what() of main's
// parser), one or more per throw site: singular and plural, a whole row and a cell, each tool's
// advice. `cell` parses one table cell (parseCell) at [row, column].
const PARSE_CASES = [
  { text: '1 2 abc', english: "W_Q: row 1, column 3: expected a number but found 'abc'" },
  { text: '[[1, 2], 3]', english: "W_Q: row 2: expected '[' (every row is a list) but found '3'" },
  { text: '[[1], (2)]', english: "W_Q: row 2: expected a number but found '('" },
  { text: '[[1, 1e999]]', english: 'W_Q: row 1, column 2: 1e999 is out of the range of a double' },
  {
    text: 'array([[1, ..., 3]])',
    english:
      "W_Q: row 1, column 2: expected a number but found '...': numpy shortened this array; print it in full with np.set_printoptions(threshold=sys.maxsize)",
  },
  {
    text: 'tensor([[1., ..., 3.]])',
    english:
      'W_Q: row 1, column 2: expected a number but found \'...\': PyTorch shortened this tensor; print it in full with torch.set_printoptions(profile="full")',
  },
  {
    text: '2×2 Matrix{Float64}:\n 1.0  …\n 3.0  4.0',
    english:
      'W_Q: row 1, column 2: expected a number but found \'…\': Julia shortened this matrix; print it in full with show(IOContext(stdout, :limit => false), "text/plain", A)',
  },
  {
    text: '\\begin{bmatrix}1 & \\cdots\\end{bmatrix}',
    english: "W_Q: row 1, column 2: expected a number but found '\\cdots': the matrix leaves values out; write every value",
  },
  {
    text: '[[1+2j, 3]]',
    english:
      "W_Q: row 1, column 1: found the complex number '1+2j', but attention takes real numbers: paste the real part (in numpy A.real)",
  },
  { text: '  \n ', english: 'W_Q: no numbers found (the text is empty)' },
  { text: '[[], []]', english: 'W_Q: no numbers found (only empty lists)' },
  { text: '1 2\n3', english: 'W_Q: row 2 has 1 number but row 1 has 2' },
  { text: '1 2 3\n4 5', english: 'W_Q: row 2 has 2 numbers but row 1 has 3' },
  {
    text: 'A =\n\n Columns 1 through 2:\n\n 1 2\n 3 4\n\n Columns 3 and 4:\n\n 5 6\n',
    english: 'W_Q: the columns from line 8 have 1 row but those from line 3 have 2',
  },
  {
    text: 'A =\n\n Columns 1 through 2:\n\n 1 2\n\n Columns 4 through 5:\n\n 3 4\n',
    english: 'W_Q: the columns from line 7 start at column 4 but column 3 comes next',
  },
  {
    text: '\n<tf.Tensor: shape=(1,), numpy=array([1.]',
    english: "W_Q: the TensorFlow tensor from line 2 is never closed by '>'",
  },
  { text: '[1, 2}', english: "W_Q: unbalanced brackets: '}' at line 1 closes the '[' from line 1" },
  { text: '}', english: "W_Q: unbalanced brackets: '}' at line 1 has no matching '{'" },
  { text: '\n\n[[1,\n 2]', english: "W_Q: unbalanced brackets: '[' at line 3 is never closed" },
  { text: 'array([1], 2)', english: "W_Q: expected 'dtype=...' or ')' in the 'array(' from line 1 but found '2'" },
  { text: 'tensor([1.], 2)', english: "W_Q: expected a keyword argument or ')' in the 'tensor(' from line 1 but found '2'" },
  { text: 'array()', english: "W_Q: expected '[' after 'array(' at line 1 but found ')'" },
  { text: '[[1]; [2]]', english: "W_Q: unexpected ';' at line 1: ';' ends a row only in MATLAB-style text like [1 2; 3 4]" },
  {
    text: '[1] [2]',
    english: "W_Q: expected the end of the text after the matrix but found '[' at line 1 (give one matrix at a time)",
  },
  {
    text: '[[[1,2],[3,4]],[[5,6],[7,8]],[[1,2],[3,4]]]',
    english:
      'W_Q: expected a matrix (2 dimensions) but found a 3-D array of shape 3 x 2 x 2: 3 slices of 2 x 2; paste one 2-D slice at a time (e.g. A[0])',
  },
  {
    text: '[[[1]],[[1,2]],[[1]],[[1]],[[1]]]',
    english:
      'W_Q: expected a matrix (2 dimensions) but found a 3-D array whose slices differ: slice 1 is 1 x 1, slice 2 is 1 x 2, slice 3 is 1 x 1, slice 4 is 1 x 1, ...; paste one 2-D slice at a time',
  },
  {
    text: '[[[1,2],[3]],[[4,5],[6,7]]]',
    english:
      'W_Q: expected a matrix (2 dimensions) but found a 3-D array whose slices differ: slice 1 is ragged (rows of different lengths), slice 2 is 2 x 2; paste one 2-D slice at a time',
  },
  {
    text: '[[[1],[2]],[[3]]]',
    english: 'W_Q: column vector 2 has 1 row but column vector 1 has 2 (they become the columns of one matrix)',
  },
  { text: '2×2 Matrix{Float64}:\n 1.0 2.0\n', english: 'W_Q: the header at line 1 says 2 x 2 but the rows below it hold 1 x 2' },
  { text: '\\begin{bmatrix} 1', english: 'W_Q: \\begin{bmatrix} at line 1 is never closed by \\end{bmatrix}' },
  { text: 'A =\n\n Columns\n', english: "W_Q: line 3: expected a column number after 'Columns' but found nothing" },
  {
    text: '1,234\t5,6',
    english:
      "W_Q: row 1, column 1: '1,234' is ambiguous: 1.234 with a decimal comma, or 1234 with a thousands separator; use a dot for the decimal point",
  },
  {
    text: '1 2;3',
    english: "W_Q: row 1, column 2: expected ';' before '2' (each ';'-separated cell holds one number; no thousands separators)",
  },
  {
    text: '     [,1] [,2]\n[1,]    1    2   3\n',
    english: 'W_Q: row 1 has 3 numbers but the header at line 1 names 2 columns',
  },
  { text: '[1] 1 2 3\n[5] 4', english: "W_Q: line 2: expected the index [4] but found '[5]'" },
  { text: '', cell: [2, 3], english: 'Q: row 2, column 3 is empty: type a number' },
  { text: '1 2', cell: [2, 1], english: "Q: row 2, column 1: a cell holds one number but found '1 2'" },
];

/** The error parsing `c.text` throws (fails when it throws none). */
function parseThrown(c) {
  try {
    if (c.cell) engine.parseCell(c.text, 'Q', ...c.cell);
    else engine.parseMatrix(c.text, 'W_Q');
  } catch (error) {
    return error;
  }
  assert.fail(`no error for ${JSON.stringify(c.text)}`);
}

describe("the parser's errors are message ids too", () => {
  test('ids cpp/parse.cpp and cpp/parse/*.cpp throw are in English and in every catalogue', () => {
    const files = [
      'parse.cpp',
      ...['scan.h', 'scan.cpp', 'plain.cpp', 'bracketed.cpp', 'julia.cpp', 'latex.cpp', 'octave.cpp', 'r.cpp'].map((f) => join('parse', f)),
    ];
    const named = new Set();
    for (const file of files) {
      const source = readFileSync(join(repo, 'cpp', file), 'utf8');
      // Reader::fail("id", ...): every throw of the parser goes through it.
      for (const [, id] of source.matchAll(/fail\(\s*"([a-z0-9-]+)"/g)) named.add(id);
      // A call that is not Reader::fail's own (its declarations, its Position overload passing `id` on).
      assert.doesNotMatch(source, /(?<!void )\bfail\(\s*(?!"|id,|\))/, `${file}: a fail() without an id`);
      assert.doesNotMatch(source, /\bfail\(\s*"[^"]*[^a-z0-9"-]/, `${file}: a fail() with words, not an id`);
    }
    assert.ok(named.size >= 40, `only ${named.size} ids found: the scan is blind`);
    for (const code of Object.keys(LANGUAGES)) {
      const words = catalogue(code);
      for (const id of named) assert.equal(typeof words[`error.${id}`], 'string', `${code} lacks error.${id}`);
    }
  });

  for (const c of PARSE_CASES) {
    test(`English unchanged: ${c.english}`, () => {
      const error = parseThrown(c);
      assert.equal(error.message, c.english);
      assert.match(error.message_id, /^error\.parse-/);
      assert.equal(errorWords(error), c.english);
      assert.equal(english(error.message_id, error.values), c.english);
      assert.equal(error.field, c.cell ? 'Q' : 'W_Q');
      assert.equal(error.row, c.cell?.[0]);
      assert.equal(error.column, c.cell?.[1]);
    });
  }

  test('every language says each with its own words, naming the input, the word found and every number', async () => {
    for (const code of Object.keys(LANGUAGES).filter((c) => c !== 'en')) {
      const t = await loadTranslator(code);
      for (const c of PARSE_CASES) {
        const error = parseThrown(c);
        const said = errorWords(error, t);
        assert.notEqual(said, error.message, `${code} ${error.message_id} is English`);
        for (const key of Object.keys(error.values)) assert.ok(!said.includes(`{${key}`), `${code} ${error.message_id}: ${said}`);
        assert.ok(said.startsWith(c.cell ? 'Q' : 'W_Q'), `${code}: ${said} does not start with the input's name`);
        for (const word of c.english.match(/'[^' ]+'/g) ?? []) assert.ok(said.includes(word), `${code}: ${said} lacks ${word}`);
        for (const n of c.english.match(/\d+(?:e[+-]?\d+)?/g) ?? []) assert.ok(said.includes(n), `${code}: ${said} lacks ${n}`);
        // The advice's code, verbatim.
        const advice = /\b(?:np|torch)\.set_printoptions\([^)]*\)|show\(IOContext\([^)]*\), "text\/plain", A\)|print\(t\.numpy\(\)\)/g;
        for (const snippet of c.english.match(advice) ?? []) assert.ok(said.includes(snippet), `${code}: ${said} lacks ${snippet}`);
      }
    }
  });

  test('French: a whole row, a cell and a plural', async () => {
    const fr = await loadTranslator('fr');
    assert.equal(
      errorWords(parseThrown(PARSE_CASES[1]), fr),
      "W_Q : ligne 2 : '[' était attendu (chaque ligne est une liste), mais on trouve '3'",
    );
    assert.equal(errorWords(parseThrown(PARSE_CASES[0]), fr), "W_Q : ligne 1, colonne 3 : un nombre était attendu, mais on trouve 'abc'");
    assert.equal(errorWords(parseThrown({ text: '1 2 3\n4 5' }), fr), 'W_Q : la ligne 2 a 2 nombres mais la ligne 1 en a 3');
    assert.equal(errorWords(parseThrown({ text: '1 2\n3' }), fr), 'W_Q : la ligne 2 a 1 nombre mais la ligne 1 en a 2');
  });
});

// ---- the JS API's own input errors (web/lib/problem.js, engine.js, fast.js) -------------------------

const { loadFastAttention } = await import(`${dist}fast-node.js`);

const fast = await loadFastAttention();
const { problemContext } = await import(`${dist}export.js`);
const bare = await loadAttention({ walkthroughs: false, model: false }); // without the walkthroughs and model modules

// Calls of the JS API with bad input and the English the API said before its errors became message
// ids (byte for byte), with the field each names.
const JS_CASES = [
  { call: () => engine.run(5), english: 'the problem is number 5: expected an object with Q, K, V or X, W_Q, W_K, W_V' },
  { call: () => engine.run([1]), english: 'the problem is an array: expected an object with Q, K, V or X, W_Q, W_K, W_V' },
  { call: () => engine.run({ ...one, Qq: 1 }), english: "unknown key 'Qq' (did you mean 'Q'?)", field: 'Qq' },
  {
    call: () => engine.run({ ...one, options: { casual: true } }),
    english: "unknown option 'casual' (did you mean 'causal'?)",
    field: 'options.casual',
  },
  {
    call: () => engine.run({ ...one, options: { rope: { bse: 1 } } }),
    english: "options.rope: unknown key 'bse' (did you mean 'base'?)",
    field: 'options.rope.bse',
  },
  {
    call: () => engine.run({ ...one, Q: { shape: [1, 2], data: [1, 2], dtype: 'f' } }),
    english: "Q: unknown key 'dtype'; expected one of shape, data",
    field: 'Q.dtype',
  },
  { call: () => engine.run({ ...one, options: 3 }), english: 'options is number 3: expected an object', field: 'options' },
  { call: () => engine.run({ ...one, Q: true }), english: 'Q is boolean true: expected a nested array of numbers or a string', field: 'Q' },
  { call: () => engine.run({ ...one, Q: [[1], 2] }), english: 'Q mixes numbers and lists: expected a list of rows', field: 'Q' },
  { call: () => engine.run({ ...one, Q: [] }), english: 'Q is empty', field: 'Q' },
  { call: () => engine.run({ ...one, Q: [[1, 2], [1]] }), english: 'Q row 2 has 1 number but row 1 has 2', field: 'Q' },
  { call: () => engine.run({ ...one, Q: [[1], [1, 2, 3]] }), english: 'Q row 2 has 3 numbers but row 1 has 1', field: 'Q' },
  {
    call: () => engine.run({ ...one, Q: [[true, 2]] }),
    english: 'Q row 1, column 1 is true: only options.mask may hold booleans',
    field: 'Q',
  },
  {
    call: () => engine.run({ ...one, K: [[1, 'x']] }),
    english: 'K row 1, column 2 is "x": expected a number or "inf", "-inf", "nan"',
    field: 'K',
  },
  {
    call: () => engine.run({ ...one, options: { mask: [[true, 0]] } }),
    english: 'options.mask mixes booleans and numbers: a mask is either all true/false (keep) or all numbers (additive)',
    field: 'options.mask',
  },
  {
    call: () => engine.run({ ...one, Q: { shape: [1], data: [1, 2] } }),
    english: 'Q.shape must be [rows, columns] with positive integers, got [1]',
    field: 'Q',
  },
  {
    call: () => engine.run({ ...one, Q: { shape: [1, 3], data: [1, 2] } }),
    english: 'Q has 2 values but its shape 1x3 needs 3',
    field: 'Q',
  },
  {
    call: () => engine.run({ ...one, Q: { shape: [1, 2], data: [1, 'q'] } }),
    english: 'Q entry 2 is "q": expected a number or "inf", "-inf", "nan"',
    field: 'Q',
  },
  {
    call: () => engine.run({ ...one, options: { layout: 'row' } }),
    english: 'options.layout must be "rows" or "columns", got "row" (did you mean \'rows\'?)',
    field: 'options.layout',
  },
  {
    call: () => engine.run({ ...one, options: { scale: {} } }),
    english: 'options.scale must be "sqrt_dk", "none", a number, "1/sqrt(<n>)" or "1/<n>", got an object',
    field: 'options.scale',
  },
  {
    call: () => engine.run({ ...one, options: { scale: Infinity } }),
    english: 'options.scale must be a finite number, got Infinity',
    field: 'options.scale',
  },
  {
    call: () => engine.run({ ...one, options: { causal: 'yes' } }),
    english: 'options.causal must be true or false, got "yes"',
    field: 'options.causal',
  },
  {
    call: () => engine.run({ ...one, options: { heads: 1.5 } }),
    english: 'options.heads must be a positive integer, got number 1.5',
    field: 'options.heads',
  },
  {
    call: () => engine.run({ ...one, options: { window: [1.5, null] } }),
    english: 'options.window[0] must be an integer >= 0 or null (unbounded), got number 1.5',
    field: 'options.window[0]',
  },
  {
    call: () => engine.run({ ...one, options: { window: [1] } }),
    english: 'options.window needs two entries, got 1',
    field: 'options.window',
  },
  {
    call: () => engine.run({ ...one, options: { window: 3 } }),
    english: 'options.window must be a list of two entries, got number 3',
    field: 'options.window',
  },
  {
    call: () => engine.run({ ...one, options: { rope: null } }),
    english: 'options.rope must be true, false, { base, style, dims } or { style, cos, sin }, got null',
    field: 'options.rope',
  },
  {
    call: () => engine.run({ ...one, options: { alibi: ['a'] } }),
    english: 'options.alibi must be a list of numbers, one slope per head: entry 1 is "a"',
    field: 'options.alibi',
  },
  {
    call: () => engine.run({ ...one, options: { qk_norm: 3 } }),
    english: 'options.qk_norm must be false or { type, eps, g_q, g_k } (type "rms" or "layer"), got number 3',
    field: 'options.qk_norm',
  },
  {
    call: () =>
      engine.run({
        ...one,
        b_Q: [
          [1, 2],
          [3, 4],
        ],
      }),
    english: 'b_Q is 2x2: expected a list of numbers',
    field: 'b_Q',
  },
  { call: () => engine.run({ ...one, b_Q: 3 }), english: 'b_Q is number 3: expected a list of numbers or a string', field: 'b_Q' },
  {
    call: () => engine.runAll([one, { ...one, options: { causal: 1 } }]),
    english: 'problem 2 of 2: options.causal must be true or false, got number 1',
    field: 'options.causal',
  },
  { call: () => engine.explain(one, 3), english: 'the cell is number 3: expected { step, head, row, col }' },
  { call: () => engine.explain(one, { step: 3 }), english: 'step must be a step id such as "scores", got number 3', field: 'step' },
  {
    call: () => engine.explain(one, { step: 'scores', head: 'x' }),
    english: 'head must be an integer >= 0 or null, got "x"',
    field: 'head',
  },
  {
    call: () => engine.explain(one, { step: 'scores', row: -1, col: 0 }),
    english: 'row must be an integer >= 0 (counted from 0), got number -1',
    field: 'row',
  },
  {
    call: () => engine.random(-1, []),
    english: 'seed must be an integer from 0 to 2**32 - 1 (as np.random.seed takes), got number -1',
    field: 'seed',
  },
  { call: () => engine.random(1, 3), english: 'draws is number 3: expected an array of draws', field: 'draws' },
  { call: () => engine.random(1, [3]), english: 'draws[0] is number 3: expected { kind, shape }', field: 'draws[0]' },
  {
    call: () => engine.random(1, [{ kind: 'randint', shape: [1, 1] }]),
    english: 'draws[0].high is missing: randint draws from [low, high)',
    field: 'draws[0].high',
  },
  {
    call: () => engine.random(1, [{ kind: 'randint', shape: [1, 1], low: 0.5, high: 3 }]),
    english: 'draws[0]: randint needs integer low and high',
    field: 'draws[0]',
  },
  {
    call: () => engine.random(1, [{ kind: 'randn', shape: [1, 1], loc: 'x' }]),
    english: 'draws[0].loc must be a finite number, got "x"',
    field: 'draws[0].loc',
  },
  { call: () => engine.tiles(one, 3), english: 'tiles takes { block_q, block_k } after the problem, got number 3' },
  {
    call: () => engine.tiles(one, { block_q: 0, block_k: 1 }),
    english: 'block_q must be a positive integer, got number 0',
    field: 'block_q',
  },
  { call: () => engine.recurrent(one, { chunk: 0 }), english: 'chunk must be a positive integer, got number 0', field: 'chunk' },
  { call: () => engine.onlineSoftmax([1, 'x']), english: 'onlineSoftmax takes a list of numbers, got an entry "x"', field: 'row' },
  { call: () => engine.onlineSoftmax([1], 3), english: "onlineSoftmax's options are number 3: expected { subtractMax, precision }" },
  {
    call: () => engine.onlineSoftmax([1], { subtractMax: 1 }),
    english: 'subtractMax must be true or false, got number 1',
    field: 'subtractMax',
  },
  // engine.js: the calls' own arguments.
  { call: () => engine.run(one, 3), english: 'run takes a problem and { reuse }, got number 3' },
  { call: () => engine.run(one, { reus: 1 }), english: "run: unknown setting 'reus' (it takes { reuse })" },
  { call: () => engine.run(one, { reuse: 3 }), english: 'run: reuse must be a trace from engine.run, got number 3' },
  { call: () => engine.gradients(one, []), english: 'gradients takes a problem and { dO }, got an array' },
  { call: () => engine.gradients(one, { do: 1 }), english: "gradients: unknown setting 'do' (it takes { dO })" },
  { call: () => engine.runAll(3), english: 'runAll takes an array of problems, got number 3' },
  { call: () => engine.parseMatrix(3), english: 'parseMatrix takes text, got number 3' },
  { call: () => engine.parseCell('1', 'm', 0), english: 'parseCell: row must be a whole number from 1, got number 0' },
  {
    call: () => bare.decode(one),
    english: 'engine.decode needs the walkthroughs module: await engine.loadWalkthroughs() first, or loadAttention({ walkthroughs: true })',
  },
  {
    call: () => bare.explain(one, { step: 'dQ', row: 0, col: 0 }),
    english:
      "engine.explain of gradient step 'dQ' needs the walkthroughs module: await engine.loadWalkthroughs() first, or loadAttention({ walkthroughs: true })",
  },
  {
    call: () => bare.modelCatalogue(),
    english: 'engine.modelCatalogue needs the model module: await engine.loadModel() first, or loadAttention({ model: true })',
  },
  // fast.js: attention() of the whole engine and of the lean entry (attention-explorer/fast).
  ...[engine.attention, fast.attention].flatMap((attention) => [
    { call: () => attention(3), english: 'attention takes an object { Q, K, V, L?, S?, causal?, scale?, mask?, precision? }' },
    {
      call: () => attention({ ...one, heads: 2 }),
      english:
        'unknown key "heads": attention takes Q, K, V, L, S, causal, scale, mask, precision; the problem\'s other options (heads, softcap, rope, window, ...) are engine.run\'s',
      field: 'heads',
    },
    { call: () => attention({ ...one, Q: 3 }), english: 'Q must be a typed array, an array of numbers or an array of rows', field: 'Q' },
    { call: () => attention({ ...one, Q: [] }), english: 'Q is empty', field: 'Q' },
    { call: () => attention({ ...one, Q: [[1, 2], [1]] }), english: 'Q row 2 has 1 entries but row 1 has 2', field: 'Q' },
    { call: () => attention({ ...one, Q: [[1, 2], 3] }), english: 'Q row 2 has no entries but row 1 has 2', field: 'Q' },
    { call: () => attention({ ...one, Q: [[1, 'x']] }), english: 'Q row 1, column 2 is "x": expected a number', field: 'Q' },
    { call: () => attention({ ...one, mask: [[true, 1]] }), english: 'mask row 1, column 2 is 1: expected true or false', field: 'mask' },
    {
      call: () => attention({ Q: [1, 2], K: one.K, V: one.V }),
      english: 'L (the number of queries) is needed when Q is a flat array',
      field: 'L',
    },
    {
      call: () => attention({ Q: one.Q, K: [1, 2], V: one.V }),
      english: 'S (the number of keys) is needed when K is a flat array',
      field: 'S',
    },
    { call: () => attention({ ...one, L: 0 }), english: 'L must be a positive integer, got 0', field: 'L' },
    { call: () => attention({ ...one, L: 2 }), english: 'Q has 1 rows but L is 2', field: 'L' },
    { call: () => attention({ ...one, S: 2 }), english: 'K has 1 rows but S is 2', field: 'S' },
    { call: () => attention({ ...one, V: [[1], [2]] }), english: 'V has 2 rows but K has 1: every key needs a value', field: 'V' },
    {
      call: () => attention({ Q: [1, 2, 3], K: [[1, 2]], V: [[1]], L: 2 }),
      english: 'Q has 3 values: not a whole number of rows of 2 queries',
      field: 'Q',
    },
    {
      call: () => attention({ ...one, K: [[1, 2, 3]] }),
      english: 'Q has 2 columns but K has 3: queries and keys need the same d_k',
      field: 'K',
    },
    {
      call: () => attention({ Q: one.Q, K: [1, 2, 3], V: [[1], [2]], S: 2 }),
      english: 'K has 3 values: not a whole number of rows of 2 keys',
      field: 'K',
    },
    {
      call: () => attention({ Q: one.Q, K: [1, 2, 1, 2], V: [1, 2, 3], S: 2 }),
      english: 'V has 3 values: not a whole number of rows of 2 keys',
      field: 'V',
    },
    {
      call: () => attention({ ...one, precision: 'float16' }),
      english: 'precision must be "float32" or "float64", got "float16"',
      field: 'precision',
    },
    {
      call: () => attention({ ...one, mask: [[1, 2]] }),
      english: 'mask has 2 values but the scores are 1x1 (queries x keys)',
      field: 'mask',
    },
    {
      call: () => attention({ ...one, mask: new Int32Array(1) }),
      english: 'an additive mask is a Float32Array, Float64Array or numbers; a keep mask is a Uint8Array or booleans',
      field: 'mask',
    },
    {
      call: () => attention({ ...one, scale: 'x' }),
      english: 'scale must be "sqrt_dk", "none", a finite number, "1/sqrt(n)" or "1/n", got "x"',
      field: 'scale',
    },
    { call: () => attention({ ...one, causal: 1 }), english: 'causal must be true or false, got 1', field: 'causal' },
  ]),
];

describe("the JS API's own input errors are message ids too", () => {
  test('ids problem.js, engine.js and fast.js name are in English and in every catalogue', () => {
    const named = new Set();
    for (const file of ['problem.js', 'engine.js', 'fast.js', 'load.js', 'context.js']) {
      const source = readFileSync(join(repo, 'web', 'lib', file), 'utf8');
      // said('id', ...) adds "error."; a message inside a message is { id: 'error.x' } or 'expected.x'.
      for (const [, id] of source.matchAll(/said\('([a-z0-9-]+)'/g)) named.add(`error.${id}`);
      for (const [, id] of source.matchAll(/'((?:error|expected)\.[a-z0-9-]+)'/g)) named.add(id);
    }
    assert.ok(named.size >= 40, `only ${named.size} ids found: the scan is blind`);
    for (const code of Object.keys(LANGUAGES)) {
      const words = catalogue(code);
      for (const id of named) assert.equal(typeof words[id], 'string', `${code} lacks ${id}`);
    }
  });

  test("every phrase of the wire table's `expected` is a message (expected.*)", () => {
    const { expectedWords } = problemModule;
    const phrases = engine.problemKeys.map((k) => k.expected).filter((p) => !p.startsWith('a matrix') && !p.startsWith('"'));
    assert.ok(phrases.length >= 15);
    for (const phrase of phrases) {
      if (phrase === 'a list of numbers') continue; // a bias's type, said by error.bias-type
      const words = expectedWords(phrase);
      assert.equal(typeof words, 'object', `no expected.* message says ${phrase}`);
      assert.equal(english(words.id), phrase);
    }
  });

  for (const c of JS_CASES) {
    test(`English unchanged: ${c.english}`, () => {
      const error = thrownBy(c.call);
      assert.equal(error.message, c.english);
      assert.ok(Object.hasOwn(en, error.message_id), `${error.message_id} is not in en.json`);
      assert.equal(errorWords(error), c.english);
      assert.equal(english(error.message_id, error.values), c.english);
      assert.equal(error.field, c.field);
    });
  }

  test('every language says each error with its own words, naming the same key and every number', async () => {
    for (const code of Object.keys(LANGUAGES).filter((c) => c !== 'en')) {
      const t = await loadTranslator(code);
      const own = catalogue(code);
      for (const c of JS_CASES) {
        const error = thrownBy(c.call);
        assert.ok(Object.hasOwn(own, error.message_id), `${code} lacks ${error.message_id}`);
        const said = errorWords(error, t);
        assert.notEqual(said, error.message, `${code} ${error.message_id} is English`);
        // Keys stay verbatim ("mask" aside: a word); every number of the English is there.
        const key = c.field?.replace(/^options\./, '');
        if (key && key !== 'mask' && c.english.includes(key)) assert.ok(said.includes(key), `${code}: ${said} does not name ${key}`);
        for (const n of c.english.match(/\d+(?:\.\d+)?/g) ?? []) assert.ok(said.includes(n), `${code}: ${said} lacks ${n}`);
        // A value quoted in English ("x") is quoted the same.
        for (const q of c.english.match(/"[^"]*"/g) ?? []) assert.ok(said.includes(q), `${code}: ${said} lacks ${q}`);
      }
    }
  });

  test('French, in full', async () => {
    const fr = await loadTranslator('fr');
    const error = thrownBy(() => engine.run({ ...one, options: { layout: 'row' } }));
    assert.equal(errorWords(error, fr), 'options.layout doit être "rows" ou "columns", reçu "row" (vouliez-vous dire « rows » ?)');
    assert.equal(
      errorWords(
        thrownBy(() => engine.run({ ...one, options: 3 })),
        fr,
      ),
      'options vaut le nombre 3 : attendu un objet',
    );
  });
});

describe("the package's loading and export errors are message ids too", () => {
  const { writeFileSync, mkdtempSync } = /** @type {typeof import('node:fs')} */ (fs);
  const where = mkdtempSync(join(tmpdir(), 'errors-i18n-'));
  writeFileSync(join(where, 'page.wasm'), '<!doctype html>\n<html></html>');
  const rejection = async (promise) => {
    try {
      await promise;
    } catch (error) {
      return error;
    }
    return assert.fail('no error');
  };
  const LOAD_CASES = [
    {
      error: () => rejection(loadAttention({ wasmUrl: join(where, 'none.wasm'), walkthroughs: false, model: false })),
      english: `could not load the WebAssembly module from ${join(where, 'none.wasm')}: no such file`,
    },
    {
      error: () => rejection(loadFastAttention({ wasmUrl: join(where, 'page.wasm') })),
      english:
        `${join(where, 'page.wasm')} is not a WebAssembly module (it starts with "<!doctype html> ", not "\\0asm"); ` +
        'a server or bundler may be answering with an HTML page: pass { wasmUrl } pointing at the .wasm file',
    },
    { error: async () => thrownBy(() => problemContext(3)), english: 'export: the problem must be an object' },
    { error: async () => thrownBy(() => problemContext({ ...one, Q: [[1, 'x']] })), english: 'export: Q holds "x": expected numbers' },
    {
      error: async () => thrownBy(() => problemContext({ ...one, Q: '1 2' })),
      english: 'export: Q is text: parse it first (engine.parseMatrix) so the export has numbers',
    },
  ];

  test('English unchanged, and the same as en.json says (load.js says its own English: the lean entry loads no catalogue)', async () => {
    for (const c of LOAD_CASES) {
      const error = await c.error();
      assert.equal(error.message, c.english);
      assert.equal(english(error.message_id, error.values), c.english);
    }
  });

  test('every language says them with its own words and the same path', async () => {
    for (const code of Object.keys(LANGUAGES).filter((c) => c !== 'en')) {
      const t = await loadTranslator(code);
      for (const c of LOAD_CASES) {
        const error = await c.error();
        const said = errorWords(error, t);
        assert.notEqual(said, error.message, `${code} ${error.message_id} is English`);
        for (const word of c.english.match(/\/[^\s:]+|\bQ\b/g) ?? []) assert.ok(said.includes(word), `${code}: ${said} lacks ${word}`);
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
  test('ids model_config.cpp, model.cpp, tasks.cpp and bindings_model.cpp throw are in English and in every catalogue', () => {
    const source = ['model_config.cpp', 'model.cpp', 'tasks.cpp', 'bindings_model.cpp']
      .map((f) => readFileSync(join(repo, 'cpp', f), 'utf8'))
      .join('\n');
    const named = new Set([...source.matchAll(/"(?:error\.)?((?:config|model)-[a-z0-9-]+)"/g)].map(([, id]) => id));
    assert.ok(named.size >= 51, `only ${named.size} ids found: the scan is blind`);
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

test("a model's errors (bindings_model.cpp, tasks.cpp, model.cpp) are message ids, said in every language", async () => {
  const config = { model: { vocab: 8, context: 8, d_model: 8, layers: 2, heads: 2 }, task: 'previous' };
  const model = engine.model(config);
  const gone = engine.model(config);
  gone.dispose();
  const weights = model.weights();
  /** The model of `config` from `weights` changed by `edit`. */
  const withWeights = (edit) => () => {
    const w = structuredClone(weights);
    edit(w);
    engine.model(config, { weights: w }).dispose();
  };
  const cases = [
    [() => engine.model(config, { weights: 5 }), 'weights: expected an object (E, layers, ...), got 5'],
    [withWeights((w) => delete w.E), 'weights.E is missing: expected 8×8 (vocab×d_model)'],
    [withWeights((w) => (w.E[1][2] = 'a')), 'weights.E: row 2, column 3 is "a", not a finite number'],
    [withWeights((w) => (w.E = w.E.slice(1))), 'weights.E: expected 8×8 (vocab×d_model), got 7 rows'],
    [withWeights((w) => (w.E[2] = w.E[2].slice(1))), 'weights.E: row 3 has 7 columns, expected 8 (vocab×d_model)'],
    [withWeights((w) => (w.E[2] = 7)), 'weights.E: row 3 has no columns, expected 8 (vocab×d_model)'],
    [
      withWeights((w) => (w.layers[1].bogus = [1])),
      'weights.layers[1].bogus: this model has no such weight (keys the configuration does not use must be absent: its bias, norm, mlp, tied and positions say which)',
    ],
    [withWeights((w) => w.layers.push(w.layers[0])), 'weights.layers: expected a list of 2 layers (model.layers)'],
    [() => model.headProblem(3, 1, [1]), 'layer: 3 is not a layer of this model (1 to 2)'],
    [() => model.headProblem(1, 3, [1]), 'head: 3 is not a head of this model (1 to 2)'],
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
      for (const word of text.match(/\[[^\]]*\]|\d+|dispose\(\)|weights\.[\w.[\]]+/g) ?? [])
        assert.ok(said.includes(word), `${code}: ${said} lacks ${word}`);
    }
  }
  model.dispose();
});

// ---- the scan of the core: no English sentence thrown outside the catalogue -------------------------
// Every InputError the core throws (and the parser's fail()) is a message id; an argument holding a
// string literal with words and a space is an English sentence a user would read. The files whose
// throws only the package's own JavaScript reaches, after its own checks with message ids (the wire's
// codes, packed data and types: wire.h, bindings_shared.h, bindings.cpp's random kinds), are allowed.
const PROGRAMMER_ONLY = new Set(['cpp/wire.h', 'cpp/bindings_shared.h', 'cpp/bindings.cpp']);

/** The English sentences thrown in a C++ source: [{ line, text }]. */
function sentencesThrown(source) {
  const found = [];
  for (const m of source.matchAll(/\b(?:InputError|fail)\s*\(/g)) {
    // The call's arguments, up to its closing parenthesis (string literals skipped whole).
    let depth = 0;
    let end = m.index + m[0].length - 1;
    for (let quoted = false; end < source.length; end++) {
      const c = source[end];
      if (quoted) {
        if (c === '\\') end++;
        else if (c === '"') quoted = false;
      } else if (c === '"') quoted = true;
      else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) break;
    }
    const args = source.slice(m.index, end);
    for (const [, text] of args.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
      if (/[A-Za-z]{2,}/.test(text) && / /.test(text)) found.push({ line: source.slice(0, m.index).split('\n').length, text });
    }
  }
  return found;
}

describe('the scan of the core', () => {
  const files = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(join(repo, dir), { withFileTypes: true })) {
      if (e.isDirectory()) walk(`${dir}/${e.name}`);
      else if (/\.(cpp|h)$/.test(e.name)) files.push(`${dir}/${e.name}`);
    }
  };
  walk('cpp');

  test('it reads every source file of the core and finds a sentence thrown (it is not blind)', () => {
    assert.ok(files.length >= 30 && files.includes('cpp/parse/scan.h'), files.join(' '));
    assert.deepEqual(sentencesThrown('throw InputError(ErrorPlace("Q"), "Q is " + x + " wide"); fail("parse-x", {{"word", "an ab"}});'), [
      { line: 1, text: 'Q is ' },
      { line: 1, text: ' wide' },
      { line: 1, text: 'an ab' },
    ]);
    assert.deepEqual(
      sentencesThrown('throw input_error(place, "qk-width", {{"q_cols", text(n)}}); fail("parse-x", {{"word", "\',\'"}});'),
      [],
    );
  });

  test("no InputError of the core says English words of its own: they are the catalogues' (error.*)", () => {
    const left = files
      .filter((f) => !PROGRAMMER_ONLY.has(f))
      .flatMap((f) => sentencesThrown(fs.readFileSync(join(repo, f), 'utf8')).map((s) => `${f}:${s.line}: "${s.text}"`));
    assert.deepEqual(left, []);
  });
});
