// The problem JSON as the wire table describes it (cpp/wire.h: each slot's and option's key, JSON
// type and expected phrase): the messages it gives, issue 13's inputs and options reaching the core,
// the trace's meta naming the scale and mask kinds, and the CLI's help listing the same keys.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { before, describe, test } from 'node:test';

import { dist } from './helpers.mjs';

const pkg = await import(`${dist}node.js`);
let engine;
before(async () => {
  engine = await pkg.loadAttention();
});

const Q = [
  [1, 0, 0.5, -1],
  [0, 1, -0.5, 2],
  [1, 1, 0, 0.25],
];
const V = [
  [1, 2],
  [3, -4],
  [0.5, 0],
];
const ok = (options) => ({ Q, K: Q, V, options });

/** `problem` fails with exactly `message`, naming `field`. */
function refused(problem, message, field) {
  assert.throws(
    () => engine.run(problem),
    (error) => {
      assert.ok(error instanceof Error);
      assert.equal(error.message, message);
      assert.equal(error.field, field);
      return true;
    },
  );
}

describe('the problem JSON from the wire table', () => {
  test('problemKeys lists every key with what it holds, inputs first, in the table order', () => {
    const keys = engine.problemKeys.map((k) => k.key);
    assert.deepEqual(keys.slice(0, 17), [
      'Q',
      'K',
      'V',
      'X',
      'X_kv',
      'W_Q',
      'W_K',
      'W_V',
      'W_O',
      'b_Q',
      'b_K',
      'b_V',
      'b_O',
      'past_K',
      'past_V',
      'P',
      'dO',
    ]);
    assert.deepEqual(keys.slice(17, 19), ['W_G', 'b_G']); // the output gate (issue 31)
    assert.deepEqual(keys.slice(19, 28), ['W_DKV', 'W_UK', 'W_UV', 'W_KR', 'W_QR', 'W_DQ', 'W_UQ', 'past_c_KV', 'past_k_R']);
    assert.deepEqual(
      keys.slice(28).filter((k) => !/qk_norm|score_fn|sigmoid_bias|differential/.test(k)),
      [
        'options.layout',
        'options.scale',
        'options.causal',
        'options.mask',
        'options.softcap',
        'options.heads',
        'options.kv_heads',
        'options.precision',
        'options.rope',
        'options.rope.style',
        'options.rope.base',
        'options.rope.dims',
        'options.rope.cos',
        'options.rope.sin',
        'options.positional',
        'options.alibi',
        'options.window[0]',
        'options.window[1]',
        'options.sink_tokens',
        'options.mask_fill',
        'options.fully_masked',
        'options.attention',
        'options.feature_map',
        'options.normalize',
        'options.decay',
        'options.positions.queries',
        'options.positions.keys',
        'options.sink_logit',
      ],
    );
    const expected = Object.fromEntries(engine.problemKeys.map((k) => [k.key, k.expected]));
    assert.equal(expected['options.softcap'], '0 (off) or a positive number');
    assert.equal(expected['options.rope.style'], '"half" or "interleaved"');
    assert.equal(expected['options.fully_masked'], '"zero" or "nan"');
    assert.ok(Object.isFrozen(engine.problemKeys));
  });

  test("a key's message says what its table entry expects", () => {
    const expected = Object.fromEntries(engine.problemKeys.map((k) => [k.key, k.expected]));
    for (const [key, bad] of [
      ['softcap', -1],
      ['causal', 'yes'],
      ['heads', 0],
      ['sink_tokens', -2],
      ['rope', 'on'],
      ['mask_fill', 'inf'],
    ]) {
      const field = `options.${key}`;
      refused(
        ok({ [key]: bad }),
        `${field} must be ${expected[field]}, got ${typeof bad} ${bad}`.replace(`string ${bad}`, `"${bad}"`),
        field,
      );
    }
  });

  test('the existing messages are unchanged', () => {
    refused(ok({ softcap: -1 }), 'options.softcap must be 0 (off) or a positive number, got number -1', 'options.softcap');
    refused(ok({ heads: 5000 }), 'options.heads is 5000: at most 4096', 'options.heads');
    refused(ok({ kv_heads: 1.5 }), 'options.kv_heads must be a positive integer, got number 1.5', 'options.kv_heads');
    refused(ok({ layout: 'row' }), `options.layout must be "rows" or "columns", got "row" (did you mean 'rows'?)`, 'options.layout');
    refused(ok({ scale: Infinity }), 'options.scale must be a finite number, got Infinity', 'options.scale');
    refused(ok({ causal: null }), 'options.causal must be true or false, got null', 'options.causal');
    refused({ ...ok(), options: 3 }, 'options is number 3: expected an object', 'options');
    refused(
      ok({ mask: [[true, 1]] }),
      'options.mask mixes booleans and numbers: a mask is either all true/false (keep) or all numbers (additive)',
      'options.mask',
    );
    // null inputs and a null mask are absent, as before
    assert.equal(engine.run({ ...ok({ mask: null }), X: null, b_O: null }).output.length, 3);
  });
});

describe("issue 13's problem JSON: each option's shape errors", () => {
  test('inputs past_K, past_V, P are matrices like K', () => {
    refused({ ...ok(), past_K: [[1, 2], [3]] }, 'past_K row 2 has 1 number but row 1 has 2', 'past_K');
    refused({ ...ok(), past_V: 5 }, 'past_V is number 5: expected a nested array of numbers or a string', 'past_V');
    refused({ ...ok(), P: [[true]] }, 'P row 1, column 1 is true: only options.mask may hold booleans', 'P');
    refused({ ...ok(), past_k: [[1]] }, "unknown key 'past_k' (did you mean 'past_K'?)", 'past_k');
  });

  test('positions: { queries, keys } of integers', () => {
    refused(ok({ positions: [0, 1, 2] }), 'options.positions is an array: expected an object', 'options.positions');
    refused(
      ok({ positions: { query: [0] } }),
      "options.positions: unknown key 'query'; expected one of queries, keys",
      'options.positions.query',
    );
    refused(
      ok({ positions: { queries: [0, 1.5, 2] } }),
      'options.positions.queries must be a list of integers: entry 2 is number 1.5',
      'options.positions.queries',
    );
    refused(ok({ positions: { keys: [] } }), 'options.positions.keys is empty', 'options.positions.keys');
    refused(ok({ positions: { keys: 3 } }), 'options.positions.keys must be a list of integers, got number 3', 'options.positions.keys');
    refused(
      ok({ positions: { keys: [0, 'inf'] } }),
      'options.positions.keys must be a list of integers: entry 2 is "inf"',
      'options.positions.keys',
    );
  });

  test('rope: true, or its settings, or cos/sin tables', () => {
    refused(
      ok({ rope: 1 }),
      'options.rope must be true, false, { base, style, dims } or { style, cos, sin }, got number 1',
      'options.rope',
    );
    refused(
      ok({ rope: { style: 'hlf' } }),
      `options.rope.style must be "half" or "interleaved", got "hlf" (did you mean 'half'?)`,
      'options.rope.style',
    );
    refused(ok({ rope: { base: 0 } }), 'options.rope.base must be a positive number, got number 0', 'options.rope.base');
    refused(ok({ rope: { dims: 2.5 } }), 'options.rope.dims must be a positive integer, got number 2.5', 'options.rope.dims');
    refused(ok({ rope: { bse: 10 } }), "options.rope: unknown key 'bse' (did you mean 'base'?)", 'options.rope.bse');
    refused(ok({ rope: { cos: [[1], [1, 2]] } }), 'options.rope.cos row 2 has 2 numbers but row 1 has 1', 'options.rope.cos');
  });

  test('positional, alibi, window, sinks, mask_fill, fully_masked', () => {
    refused(
      ok({ positional: 'sinusoid' }),
      `options.positional must be "none" or "sinusoidal" or "learned", got "sinusoid" (did you mean 'sinusoidal'?)`,
      'options.positional',
    );
    refused(ok({ alibi: 'yes' }), "options.alibi: row 1, column 1: expected a number but found 'yes'", 'options.alibi');
    refused(
      ok({ alibi: { slopes: [1] } }),
      'options.alibi must be true, false or a list of slopes, one per head, got an object',
      'options.alibi',
    );
    refused(ok({ alibi: [0.5, null] }), 'options.alibi must be a list of numbers, one slope per head: entry 2 is null', 'options.alibi');
    refused(ok({ window: [3] }), 'options.window needs two entries, got 1', 'options.window');
    refused(ok({ window: 3 }), 'options.window must be a list of two entries, got number 3', 'options.window');
    refused(ok({ window: [2, -1] }), 'options.window[1] must be an integer >= 0 or null (unbounded), got number -1', 'options.window[1]');
    refused(ok({ window: ['inf', 0] }), 'options.window[0] must be an integer >= 0 or null (unbounded), got "inf"', 'options.window[0]');
    refused(ok({ sink_tokens: 1.5 }), 'options.sink_tokens must be an integer >= 0, got number 1.5', 'options.sink_tokens');
    refused(ok({ sink_tokens: 2 ** 31 }), 'options.sink_tokens is 2147483648: at most 2147483647', 'options.sink_tokens');
    refused(
      ok({ sink_logit: [0, 'nan'] }),
      'options.sink_logit must be a number, "-inf" or a list of them, one per head: entry 2 is "nan"',
      'options.sink_logit',
    );
    refused(
      ok({ sink_logit: true }),
      'options.sink_logit must be a number, "-inf" or a list of them, one per head: entry 1 is boolean true',
      'options.sink_logit',
    );
    refused(ok({ mask_fill: Infinity }), 'options.mask_fill must be "-inf" or a finite number, got number Infinity', 'options.mask_fill');
    refused(ok({ mask_fill: 'nan' }), 'options.mask_fill must be "-inf" or a finite number, got "nan"', 'options.mask_fill');
    refused(
      ok({ fully_masked: 'zeros' }),
      `options.fully_masked must be "zero" or "nan", got "zeros" (did you mean 'zero'?)`,
      'options.fully_masked',
    );
    refused(
      ok({ slidingwindow: [1, 0] }),
      "unknown option 'slidingwindow'; expected one of layout, scale, causal, mask, softcap, heads, kv_heads, precision, rope, positional, alibi, window, sink_tokens, mask_fill, fully_masked, attention, feature_map, normalize, decay, qk_norm, score_fn, sigmoid_bias, differential, positions, sink_logit",
      'options.slidingwindow',
    );
  });

  test('lists given as text are checked by the core with the same messages', () => {
    assert.throws(() => engine.run(ok({ positions: { queries: '0 1.5 2' } })), {
      message: 'options.positions.queries must be a list of integers: entry 2 is number 1.5',
    });
    assert.throws(() => engine.run(ok({ positions: { keys: '0 1\n2 3' } })), {
      message: 'options.positions.keys must be a list of integers, got a 2x2 matrix',
    });
    assert.throws(() => engine.run(ok({ sink_logit: '0 nan' })), {
      message: 'options.sink_logit must be a number, "-inf" or a list of them, one per head: entry 2 is number nan',
    });
    assert.throws(() => engine.run(ok({ alibi: '0.5 -inf' })), {
      message: 'options.alibi must be a list of numbers, one slope per head: entry 2 is number -inf',
    });
  });
});

describe("issue 13's options reach the core", () => {
  test('options that change nothing give the same trace as none', () => {
    const plain = engine.run(ok({ causal: true }));
    const neutral = engine.run(
      ok({
        causal: true,
        window: [null, null],
        sink_tokens: 0,
        mask_fill: '-inf',
        fully_masked: 'zero',
        rope: false,
        alibi: false,
        positional: 'none',
        sink_logit: '-inf',
        positions: { queries: [0, 1, 2], keys: [0, 1, 2] },
      }),
    );
    assert.deepEqual(neutral.output, plain.output);
    assert.deepEqual(
      neutral.steps.map((s) => [s.id, s.data]),
      plain.steps.map((s) => [s.id, s.data]),
    );
    // A window wide enough to hide nothing, given as numbers.
    assert.deepEqual(engine.run(ok({ causal: true, window: [5, 5] })).output, plain.output);
  });

  test('a problem with every new input and option packs and runs', () => {
    const past_K = [
      [0.5, -0.5, 1, 0],
      [1, 0, 0, 1],
    ];
    const past_V = [
      [2, 1],
      [-1, 0.5],
    ];
    const trace = engine.run({
      Q,
      K: Q,
      V,
      past_K,
      past_V,
      options: {
        causal: true,
        positions: { queries: [2, 3, 4], keys: [0, 1, 2, 3, 4] },
        rope: { style: 'interleaved', base: 100, dims: 2 },
        alibi: [0.5],
        window: [3, 0],
        sink_tokens: 1,
        sink_logit: [0],
        mask_fill: -1e9,
        fully_masked: 'nan',
      },
    });
    assert.equal(trace.output.length, 3);
    assert.equal(trace.output[0].length, 2);
    for (const row of trace.output) for (const v of row) assert.ok(Number.isFinite(v), `output ${v}`);
    // Explicit tables and slopes as text; learned positions P with X.
    const X = [
      [1, 0],
      [0, 1],
      [1, 1],
    ];
    const W = [
      [1, 0, 0, 1],
      [0, 1, 1, 0],
    ];
    const projected = engine.run({
      X,
      W_Q: W,
      W_K: W,
      W_V: W,
      P: [
        [0, 0.1],
        [0.2, 0],
        [0, 0],
      ],
      options: {
        rope: {
          style: 'half',
          cos: [
            [1, 1],
            [0.5, 0.9],
            [0.1, 0.8],
          ],
          sin: [
            [0, 0],
            [0.8, 0.4],
            [0.9, 0.6],
          ],
        },
        alibi: '0.25',
      },
    });
    assert.equal(projected.output.length, 3);
    // The relative-position check is made with computed angles (cache included), not with tables.
    assert.equal(trace.facts[0].rope_shift, 100);
    assert.ok(trace.facts[0].rope_shift_change < 1e-12, `change ${trace.facts[0].rope_shift_change}`);
    assert.deepEqual([projected.facts[0].rope_shift, projected.facts[0].rope_shift_change], [0, 0]);
  });

  test("the trace's meta names the scale and mask kinds", () => {
    const kinds = (options) => [engine.run(ok(options)).meta.scale_kind, engine.run(ok(options)).meta.mask_kind];
    assert.deepEqual(kinds(undefined), ['sqrt_dk', 'none']);
    assert.deepEqual(
      kinds({
        scale: 'none',
        mask: [
          [true, true, false],
          [true, false, true],
          [false, true, true],
        ],
      }),
      ['none', 'keep'],
    );
    assert.deepEqual(
      kinds({
        scale: 2,
        mask: [
          [0, 0, '-inf'],
          [0, -1, 0],
          [0, 0, 0],
        ],
      }),
      ['multiply', 'additive'],
    );
    assert.deepEqual(kinds({ scale: '1/3' }), ['divide', 'none']);
    assert.deepEqual(kinds({ scale: '1/sqrt(3)', mask: '1 1 0\n1 1 1\n0 1 1' }), ['divide_sqrt', 'additive']);
  });

  test('the exports read the mask kind from the trace', () => {
    const problem = ok({
      mask: [
        [true, true, false],
        [true, false, true],
        [false, true, true],
      ],
    });
    const trace = engine.run(problem);
    assert.equal(pkg.problemContext(problem, trace).maskKind, 'keep');
    assert.equal(pkg.problemContext(ok(), engine.run(ok())).maskKind, 'none');
    assert.throws(() => pkg.problemContext(problem), {
      message: 'export: the mask kind is in the trace: pass it too (problemContext(problem, trace))',
    });
  });
});

test("the CLI's --help lists the problem's keys from the same table", () => {
  const help = execFileSync(process.execPath, [`${dist}cli.js`, '--help'], { encoding: 'utf8' });
  for (const { key, expected } of engine.problemKeys.filter((k) => k.key.startsWith('options.'))) {
    assert.match(help, new RegExp(`^  ${key.replace(/[.[\]]/g, '\\$&')} +${expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
  }
  assert.match(help, /^ {2}Q, K, V, X, X_kv, W_Q, W_K, W_V, W_O: a matrix$/m);
  assert.match(help, /^ {2}past_K: a matrix: the cached keys, kv_heads\*d_k wide$/m);
});

test("meta.rope_positions are rope_angles' rows; positionsAxisLabels names them and the pairs", () => {
  const trace = engine.run({ Q: Q.slice(0, 2), K: Q, V, options: { rope: { dims: 4 }, positions: { queries: [7, 2], keys: [2, 5, 9] } } });
  assert.deepEqual(trace.meta.rope_positions, [2, 5, 7, 9]);
  const angles = trace.steps.find((s) => s.id === 'rope_angles');
  assert.deepEqual(
    angles.data.map((row) => row[0]),
    [2, 5, 7, 9],
  ); // θ_0 = 1: the angle is the position
  assert.deepEqual(pkg.positionsAxisLabels(angles, 'positions', trace.meta), {
    labels: ['p = 2', 'p = 5', 'p = 7', 'p = 9'],
    title: 'position',
  });
  assert.deepEqual(pkg.positionsAxisLabels(angles, 'features', trace.meta), { labels: ['i = 0', 'i = 1'], title: 'pair' });
  const scores = trace.steps.find((s) => s.id === 'scores');
  assert.equal(pkg.positionsAxisLabels(scores, 'queries', trace.meta), null);
  assert.deepEqual(engine.run(ok({})).meta.rope_positions, []);
});
