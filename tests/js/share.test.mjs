// The link format (dist/share.js): v2 (deflate) and v1 links decode, bad links give messages,
// and a page state stands for the same problem as the problem it was made from.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

const { encodeStateString, decodeStateString, stateInputs, stateToProblem, problemToState, MAX_LINK_LENGTH, SHARE_VERSION } = await import(
  `${dist}share.js`
);
const { loadAttention, presetProblem, findPreset } = await import(`${dist}node.js`);
const engine = await loadAttention();

test('v2 links round-trip a state and are shorter than v1', async () => {
  const { problem } = presetProblem(findPreset('000'), engine);
  const state = problemToState(problem, { tokens: { q: ['w1', 'w2', 'w3', 'w4'] }, decimals: 3 });
  const link = await encodeStateString(state);
  assert.equal(SHARE_VERSION, 2);
  assert.match(link, /^v2=[A-Za-z0-9_-]+$/);
  const back = await decodeStateString(`#${link}`);
  assert.deepEqual(back.state, state);
  assert.equal(back.version, 2);
  const v1 = `v1=${Buffer.from(JSON.stringify(state)).toString('base64url')}`;
  assert.ok(link.length < 0.75 * v1.length, `v2 ${link.length} characters, v1 ${v1.length}`);
  assert.deepEqual((await decodeStateString(v1)).state, state);
});

test('a state stands for the problem it was made from (every option kind)', async () => {
  const problems = [
    presetProblem(findPreset('000-causal'), engine).problem,
    presetProblem(findPreset('002'), engine).problem,
    presetProblem(findPreset('003'), engine).problem,
    presetProblem(findPreset('multihead'), engine).problem,
    presetProblem(findPreset('cross'), engine).problem,
    {
      X: [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
      W_Q: [
        [1, 0],
        [0, 1],
      ],
      W_K: [
        [1, 1],
        [0, 1],
      ],
      W_V: [
        [2, 0],
        [0, 2],
      ],
      b_Q: [0.5, -1],
      b_K: [0, 1],
      b_V: [1, 1],
      W_O: [
        [1, 0],
        [0, 1],
      ],
      b_O: [0.25, 0],
      options: {
        softcap: 3,
        scale: 0.5,
        mask: [
          [true, false, true],
          [true, true, false],
          [false, true, true],
        ],
      },
    },
    {
      Q: [
        [1, 0],
        [0, 1],
      ],
      K: [
        [1, 2],
        [3, 4],
      ],
      V: [
        [1, 1],
        [0, 2],
      ],
      options: {
        scale: 'none',
        mask: [
          [0, '-inf'],
          [-1, 0],
        ],
      },
    },
  ];
  for (const problem of problems) {
    const state = (await decodeStateString(await encodeStateString(problemToState(problem)))).state;
    const again = stateToProblem(state, engine);
    assert.deepEqual(engine.run(again), engine.run(problem));
  }
});

test('links carry every option of modern attention, and the cache and P inputs', async () => {
  const X = [
    [1, 0, 1, 0],
    [0, 2, 0, 2],
    [1, 1, 1, 1],
  ];
  const W = [
    [1, 0],
    [0, 1],
    [1, 1],
    [0, 0],
  ];
  const problem = {
    X,
    P: [
      [0.1, 0, 0, 0],
      [0, 0.1, 0, 0],
      [0, 0, 0.1, 0],
    ],
    W_Q: W,
    W_K: W,
    W_V: W,
    past_K: [
      [0.5, -0.5],
      [1, 0],
    ],
    past_V: [
      [1, 2],
      [3, 4],
    ],
    options: {
      causal: true,
      rope: { style: 'interleaved', base: 100, dims: 2 },
      alibi: true,
      window: [3, 0],
      sink_tokens: 1,
      sink_logit: 0.5,
      mask_fill: -1e9,
      fully_masked: 'nan',
    },
  };
  const state = (await decodeStateString(await encodeStateString(problemToState(problem)))).state;
  assert.deepEqual(state.use, { bias: false, W_O: false, b_O: false, P: true, cache: true });
  const again = stateToProblem(state, engine);
  for (const key of Object.keys(problem.options)) assert.deepEqual(again.options[key], problem.options[key], key);
  for (const name of ['P', 'past_K', 'past_V']) assert.deepEqual(again[name], problem[name], name);
  assert.deepEqual(engine.run(again), engine.run(problem));
  // Positions and the sinusoidal encoding travel the same way.
  const positioned = {
    X,
    W_Q: W,
    W_K: W,
    W_V: W,
    options: { positional: 'sinusoidal', positions: { queries: [4, 5, 6], keys: [4, 5, 6] }, rope: true },
  };
  const back = stateToProblem(problemToState(positioned), engine);
  assert.deepEqual(back.options.positions, positioned.options.positions);
  assert.equal(back.options.positional, 'sinusoidal');
  assert.equal(back.options.rope, true);
  assert.deepEqual(engine.run(back), engine.run(positioned));
});

test("links carry multi-head latent attention: its inputs, the queries' latent, its cache; no kv_heads", async () => {
  const [X, W_DKV, W_UK, W_UV, W_KR, W_QR, W_DQ, W_UQ, past_c_KV, past_k_R] = engine.random(
    5,
    [
      [3, 4],
      [4, 2],
      [2, 4],
      [2, 4],
      [4, 2],
      [4, 4],
      [4, 3],
      [3, 4],
      [2, 2],
      [2, 2],
    ].map((shape) => ({ kind: 'randn', shape })),
  );
  const problem = { X, W_DKV, W_UK, W_UV, W_KR, W_QR, W_DQ, W_UQ, past_c_KV, past_k_R, options: { heads: 2, causal: true } };
  const state = (await decodeStateString(await encodeStateString(problemToState(problem)))).state;
  assert.deepEqual(state.use, { bias: false, W_O: false, b_O: false, cache: true, W_DKV: true, W_KR: true, W_DQ: true });
  assert.deepEqual(stateInputs(state), ['X', 'W_DKV', 'W_UK', 'W_UV', 'W_KR', 'W_QR', 'W_DQ', 'W_UQ', 'past_c_KV', 'past_k_R']);
  const again = stateToProblem(state, engine);
  // The core refuses kv_heads with latent attention: the page's kv_heads (equal to heads) is not sent.
  assert.ok(!('kv_heads' in again.options));
  for (const name of Object.keys(problem).filter((n) => n !== 'options')) assert.deepEqual(again[name], problem[name], name);
  assert.deepEqual(engine.run(again), engine.run(problem));
  // Set apart from heads, it is sent, and the core's message names both keys.
  assert.throws(() => engine.run(stateToProblem({ ...state, options: { ...state.options, kv_heads: 1 } }, engine)), {
    message: /^W_DKV \(multi-head latent attention\) and options\.kv_heads cannot be combined/,
  });
  // Without the rotary part there is no k_R to cache; in cross-attention the flags are not read.
  assert.deepEqual(stateInputs({ ...state, use: { ...state.use, W_KR: false, W_DQ: false } }), [
    'X',
    'W_DKV',
    'W_UK',
    'W_UV',
    'W_Q',
    'past_c_KV',
  ]);
  assert.deepEqual(stateInputs({ ...state, mode: 'cross' }), ['X', 'X_kv', 'W_Q', 'W_K', 'W_V', 'past_K', 'past_V']);
});

test('bad links: too long, damaged, not a state, newer version', async () => {
  const long = await decodeStateString(`v2=${'A'.repeat(MAX_LINK_LENGTH + 1)}`);
  assert.equal(long.state, null);
  assert.match(long.error, /^This link is too long \(1,000,004 characters; at most 1,000,000\)/);
  for (const bad of ['v2=AAAA$$$', 'v2=AAAAAAAA', 'v1=bm90IGpzb24', `v1=${Buffer.from('[1,2]').toString('base64url')}`]) {
    const r = await decodeStateString(bad);
    assert.equal(r.state, null, bad);
    assert.match(r.error, /^This link is damaged/, bad);
  }
  assert.match((await decodeStateString('hello')).error, /does not hold an explorer state/);
  assert.match((await decodeStateString('v3=abc')).error, /newer version of the explorer \(state v3\)/);
  assert.deepEqual(await decodeStateString(''), { state: null });
  // A deflate bomb is cut off: 20 MB of spaces compress to a short link.
  const bomb = await encodeStateString({ x: ' '.repeat(20_000_000) });
  assert.ok(bomb.length < 100_000);
  assert.match((await decodeStateString(bomb)).error, /more than 8 MB/);
});

test("a bad link's message in any language: English's words byte for byte, French's its own", async () => {
  const { createTranslator, loadCatalogue } = await import(`${dist}i18n.js`);
  const fr = createTranslator('fr', await loadCatalogue('fr'));
  const bomb = await encodeStateString({ x: ' '.repeat(20_000_000) });
  const cases = [
    ['hello', 'This link does not hold an explorer state (it should start with #v2= or #v1=).', 'Ce lien ne contient pas'],
    ['v3=abc', 'This link was made by a newer version of the explorer (state v3); showing the default example instead.', '(état v3)'],
    [
      `v2=${'A'.repeat(MAX_LINK_LENGTH + 1)}`,
      'This link is too long (1,000,004 characters; at most 1,000,000) — it may have been cut or padded; showing the default example instead.',
      'Ce lien est trop long',
    ],
    [
      'v1=bm90IGpzb24',
      'This link is damaged (its state could not be read); showing the default example instead.',
      'son état n’a pas pu être lu',
    ],
    [
      bomb,
      'This link is damaged (its state could not be read (it unpacks to more than 8 MB)); showing the default example instead.',
      'il dépasse 8 Mo',
    ],
    [
      `v1=${Buffer.from('{"mode":"sideways"}').toString('base64url')}`,
      /^This link is damaged \(mode is "sideways"[^]*\); showing the default example instead\.$/,
      'Ce lien est endommagé (mode',
    ],
  ];
  for (const [link, english, french] of cases) {
    const r = await decodeStateString(link);
    assert.equal(r.state, null);
    if (typeof english === 'string') assert.equal(r.error, english);
    else assert.match(r.error, english);
    assert.ok(fr.message(r.message).includes(french), fr.message(r.message));
    assert.ok(!fr.message(r.message).includes('This link'), fr.message(r.message));
  }
});

test('stateToProblem names the input it cannot read', () => {
  assert.throws(
    () => stateToProblem({ mode: 'qkv', inputs: { Q: { text: '1 2' }, K: { text: '1 x' }, V: { text: '1 2' } } }, engine),
    /^Error: K/,
  );
  assert.throws(() => stateToProblem({ mode: 'qkv', inputs: { Q: { text: '1 2' } } }, engine), /K is missing from the state/);
});

test('a problem with heads but no kv_heads keeps one key/value head per head', () => {
  const X = [
    [1, 0, 2, 1],
    [0, 1, 1, 3],
  ];
  const W = [
    [1, 0, 0, 1],
    [0, 1, 1, 0],
    [1, 1, 0, 0],
    [0, 0, 1, 1],
  ];
  const problem = { X, W_Q: W, W_K: W, W_V: W, options: { heads: 2 } };
  const state = problemToState(problem);
  assert.equal(state.options.kv_heads, 2);
  const again = engine.run(stateToProblem(state, engine));
  assert.deepEqual(again.meta.kv_heads, 2);
  assert.deepEqual(again.output, engine.run(problem).output);
});
