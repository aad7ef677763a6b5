// Robustness of the JS layer (issue 6): the bad-input categories errors.test.mjs and
// cli.test.mjs do not already try (JSON that is not an object, non-integer / negative / huge
// sizes, wrong option types, deeply nested arrays), each through the API with its exact message
// and through the CLI with exit status 1 and that message on stderr; and an abort inside the
// wasm, after which the engine reloads the module and keeps giving the right numbers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { dist } from './helpers.mjs';

const pkg = await import(`${dist}node.js`);
const { instantiate } = await import(`${dist}engine.js`);
const { default: createAttentionModule } = await import(`${dist}attention.js`);
let engine;
before(async () => {
  engine = await pkg.loadAttention();
});

const cli = join(dist, 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'attention-robust-'));
const I = [
  [1, 0],
  [0, 1],
];
const ok = (extra = {}) => ({ Q: I, K: I, V: I, ...extra });
// JSON text of `depth` + 1 nested arrays around `inner` (too deep for JSON.stringify, not for
// JSON.parse).
const deepText = (depth, inner) => `${'['.repeat(depth + 1)}${inner}${']'.repeat(depth + 1)}`;

// [what, problem (as JSON text for the CLI, or a value), exact message, field]
const CATALOGUE = [
  // JSON that is not an object
  ['a number', '42', 'the problem is number 42: expected an object with Q, K, V or X, W_Q, W_K, W_V', undefined],
  ['a string', '"Q K V"', 'the problem is "Q K V": expected an object with Q, K, V or X, W_Q, W_K, W_V', undefined],
  ['null', 'null', 'the problem is null: expected an object with Q, K, V or X, W_Q, W_K, W_V', undefined],
  ['true', 'true', 'the problem is boolean true: expected an object with Q, K, V or X, W_Q, W_K, W_V', undefined],
  ['options as a string', { ...ok(), options: 'causal' }, 'options is "causal": expected an object', 'options'],
  ['options null', { ...ok(), options: null }, 'options is null: expected an object', 'options'],
  // unknown option names
  [
    'unknown option, no near name',
    { ...ok(), options: { dropout: 0.1 } },
    "unknown option 'dropout'; expected one of layout, scale, causal, mask, softcap, heads, kv_heads, precision, rope, positional, alibi, window, sink_tokens, mask_fill, fully_masked, attention, feature_map, normalize, decay, qk_norm, score_fn, sigmoid_bias, differential, positions, sink_logit",
    'options.dropout',
  ],
  [
    'unknown option, near name',
    { ...ok(), options: { kvheads: 1 } },
    "unknown option 'kvheads' (did you mean 'kv_heads'?)",
    'options.kvheads',
  ],
  [
    'unknown key in a matrix object',
    { ...ok(), Q: { shape: [1, 2], data: [1, 2], dtype: 'f4' } },
    "Q: unknown key 'dtype'; expected one of shape, data",
    'Q.dtype',
  ],
  // wrong option types
  ['heads as a string', { ...ok(), options: { heads: '2' } }, 'options.heads must be a positive integer, got "2"', 'options.heads'],
  ['heads NaN-like', { ...ok(), options: { heads: null } }, 'options.heads must be a positive integer, got null', 'options.heads'],
  [
    'softcap as a string',
    { ...ok(), options: { softcap: '1' } },
    'options.softcap must be 0 (off) or a positive number, got "1"',
    'options.softcap',
  ],
  ['layout as a number', { ...ok(), options: { layout: 1 } }, 'options.layout must be "rows" or "columns", got number 1', 'options.layout'],
  [
    'precision null',
    { ...ok(), options: { precision: null } },
    'options.precision must be "float64" or "float32", got null',
    'options.precision',
  ],
  ['causal as 1', { ...ok(), options: { causal: 1 } }, 'options.causal must be true or false, got number 1', 'options.causal'],
  [
    'mask as a number',
    { ...ok(), options: { mask: 5 } },
    'options.mask is number 5: expected a nested array of numbers or a string',
    'options.mask',
  ],
  [
    'scale as an object',
    { ...ok(), options: { scale: {} } },
    'options.scale must be "sqrt_dk", "none", a number, "1/sqrt(<n>)" or "1/<n>", got an object',
    'options.scale',
  ],
  [
    'a number as a string',
    {
      ...ok(),
      Q: [
        ['1', 0],
        [0, 1],
      ],
    },
    'Q row 1, column 1 is "1": expected a number or "inf", "-inf", "nan"',
    'Q',
  ],
  [
    'an object as a number',
    {
      ...ok(),
      V: [
        [{ v: 1 }, 0],
        [0, 1],
      ],
    },
    'V row 1, column 1 is an object: expected a number or "inf", "-inf", "nan"',
    'V',
  ],
  ['data as text', { ...ok(), K: { shape: [1, 2], data: '1 2' } }, 'K entry 1 is "1": expected a number or "inf", "-inf", "nan"', 'K'],
  // non-integer, negative, zero and huge sizes
  ['heads 0', { ...ok(), options: { heads: 0 } }, 'options.heads must be a positive integer, got number 0', 'options.heads'],
  ['heads -2', { ...ok(), options: { heads: -2 } }, 'options.heads must be a positive integer, got number -2', 'options.heads'],
  [
    'kv_heads 0.5',
    { ...ok(), options: { kv_heads: 0.5 } },
    'options.kv_heads must be a positive integer, got number 0.5',
    'options.kv_heads',
  ],
  ['heads 1e20', { ...ok(), options: { heads: 1e20 } }, 'options.heads is 100000000000000000000: at most 4096', 'options.heads'],
  ['kv_heads 2**31', { ...ok(), options: { kv_heads: 2 ** 31 } }, 'options.kv_heads is 2147483648: at most 4096', 'options.kv_heads'],
  [
    'shape negative',
    { ...ok(), Q: { shape: [-1, 2], data: [] } },
    'Q.shape must be [rows, columns] with positive integers, got [-1,2]',
    'Q',
  ],
  [
    'shape fractional',
    { ...ok(), Q: { shape: [1.5, 2], data: [1, 2] } },
    'Q.shape must be [rows, columns] with positive integers, got [1.5,2]',
    'Q',
  ],
  ['shape zero', { ...ok(), Q: { shape: [0, 2], data: [] } }, 'Q.shape must be [rows, columns] with positive integers, got [0,2]', 'Q'],
  [
    'shape as strings',
    { ...ok(), Q: { shape: ['1', '2'], data: [1, 2] } },
    'Q.shape must be [rows, columns] with positive integers, got ["1","2"]',
    'Q',
  ],
  [
    'over the token limit',
    { Q: { shape: [5000, 1], data: new Array(5000).fill(1) }, K: [[1]], V: [[1]] },
    'Q has 5000 rows: at most 4096 are accepted (every step of the trace is kept in memory)',
    'Q',
  ],
  // deeply nested arrays
  ['3-deep', { ...ok(), Q: [[[1, 0]], [[0, 1]]] }, 'Q row 1, column 1 is an array: expected a number or "inf", "-inf", "nan"', 'Q'],
  [
    '100,000-deep',
    `{"Q": ${deepText(100_000, '1')}, "K": [[1, 0], [0, 1]], "V": [[1, 0], [0, 1]]}`,
    'Q row 1, column 1 is an array: expected a number or "inf", "-inf", "nan"',
    'Q',
  ],
  [
    '10,000-deep mask',
    `{"Q": [[1, 0], [0, 1]], "K": [[1, 0], [0, 1]], "V": [[1, 0], [0, 1]], "options": {"mask": ${deepText(10_000, '0')}}}`,
    'options.mask row 1, column 1 is an array: expected a number or "inf", "-inf", "nan"',
    'options.mask',
  ],
  [
    '10,000-deep bias',
    `{"X": [[1, 0], [0, 1]], "W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]], "b_Q": ${deepText(10_000, '1')}}`,
    'b_Q row 1, column 1 is an array: expected a number or "inf", "-inf", "nan"',
    'b_Q',
  ],
];

const asValue = (p) => (typeof p === 'string' ? JSON.parse(p) : p);
const asText = (p) => (typeof p === 'string' ? p : JSON.stringify(p));

describe('bad inputs missing from errors.test.mjs and cli.test.mjs', () => {
  test(`API: ${CATALOGUE.length} inputs, each an Error with its exact message and field`, () => {
    for (const [what, problem, message, field] of CATALOGUE) {
      let caught;
      try {
        engine.run(asValue(problem));
      } catch (error) {
        caught = error;
      }
      assert.ok(caught instanceof Error, `${what}: no Error`);
      assert.equal(caught.message, message, what);
      assert.equal(caught.field, field, `${what}: field`);
    }
    assert.equal(engine.run(ok()).output.length, 2, 'the engine works after the catalogue');
  });

  test(`CLI: the same ${CATALOGUE.length} inputs, exit status 1, the message on stderr, nothing on stdout`, () => {
    CATALOGUE.forEach(([what, problem, message], i) => {
      const path = join(dir, `bad-${i}.json`);
      writeFileSync(path, asText(problem));
      const r = spawnSync(process.execPath, [cli, 'run', path], { encoding: 'utf8' });
      assert.equal(r.status, 1, `${what}: exit status ${r.status}, stderr ${r.stderr}`);
      assert.equal(r.stdout, '', what);
      assert.equal(r.stderr, `attention-explorer: ${path}: problem 1: ${message}\n`, what);
    });
  });

  test('CLI: a 100,000-deep JSON array and a JSON array of non-objects', () => {
    const path = join(dir, 'deep.json');
    writeFileSync(path, `${'['.repeat(100_000)}1${']'.repeat(100_000)}`);
    let r = spawnSync(process.execPath, [cli, 'run', path], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.equal(
      r.stderr,
      `attention-explorer: ${path}: problem 1 of 1: the problem is an array: expected an object with Q, K, V or X, W_Q, W_K, W_V\n`,
    );
    r = spawnSync(process.execPath, [cli, 'run'], { input: '[42, "x"]', encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.equal(
      r.stderr,
      'attention-explorer: standard input: problem 1 of 2: the problem is number 42: expected an object with Q, K, V or X, W_Q, W_K, W_V\n',
    );
  });
});

describe('an abort inside the wasm', () => {
  // The module is the real one; `_run` is wrapped so that one chosen call traps as a wasm
  // `unreachable` would, after which that instance stays broken (as an aborted Emscripten module
  // does). Everything else, the reload included, is the package's own code.
  test('is reported with the input, the module is reloaded, and the next run is right (seed 004)', async () => {
    let crashNext = false;
    let instances = 0;
    const createModule = (arg) =>
      createAttentionModule(arg).then((m) => {
        instances++;
        const real = m._run;
        let broken = false;
        m._run = (...args) => {
          if (crashNext || broken) {
            crashNext = false;
            broken = true;
            throw new WebAssembly.RuntimeError('unreachable');
          }
          return real(...args);
        };
        return m;
      });
    const bytes = readFileSync(join(dist, 'attention.wasm'));
    const eng = await instantiate(createModule, async () => bytes, 'attention.wasm');
    assert.equal(instances, 1);
    const seed004 = {
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
    };
    const before = eng.run(seed004).output;

    crashNext = true;
    let caught;
    try {
      eng.run({ Q: [[1, 2, 3]], K: [[4, 5, 6]], V: [[7]], options: { causal: true } });
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof Error);
    assert.equal(
      caught.message,
      'the attention engine crashed (unreachable) in run() and was reloaded; ' +
        'the input that caused it: Q 1x3, K 1x3, V 1x1, options {"causal":true}',
    );
    assert.ok(caught.cause instanceof WebAssembly.RuntimeError);
    await caught.reloaded;
    assert.equal(instances, 2, 'a fresh instance was made');
    const after = eng.run(seed004).output;
    assert.deepEqual(after, before);
    const expected = [
      [1.6604769, 2.6604769],
      [2.3395231, 3.3395231],
    ];
    after.flat().forEach((v, i) => assert.ok(Math.abs(v - expected.flat()[i]) < 5e-8, `output ${v}`));
    // explain, parse, random and heapStats use the fresh instance too.
    assert.deepEqual(eng.parseMatrix('1 2\n3 4'), [
      [1, 2],
      [3, 4],
    ]);
    assert.equal(
      eng.explain(seed004, { step: 'weights', row: 0, col: 1 }).value,
      eng.run(seed004).steps.find((s) => s.id === 'weights').data[0][1],
    );
    assert.ok(eng.heapStats());
  });

  test('a call while the fresh module is still loading says so', async () => {
    let crash = true;
    const createModule = (arg) =>
      createAttentionModule(arg).then((m) => {
        const real = m._parseMatrix;
        m._parseMatrix = (...args) => {
          if (crash) {
            crash = false;
            throw new WebAssembly.RuntimeError('Aborted(OOM)');
          }
          return real(...args);
        };
        return m;
      });
    const bytes = readFileSync(join(dist, 'attention.wasm'));
    const eng = await instantiate(createModule, async () => bytes, 'attention.wasm');
    assert.throws(() => eng.parseMatrix('1 2'), {
      message: 'the attention engine crashed (Aborted(OOM)) in parseMatrix() and was reloaded; the input that caused it: "1 2", "matrix"',
    });
    assert.throws(() => eng.parseMatrix('1 2'), {
      message: 'the attention engine crashed earlier (Aborted(OOM)) and is still being reloaded: try again in a moment',
    });
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(eng.parseMatrix('1 2'), [[1, 2]]);
  });
});
