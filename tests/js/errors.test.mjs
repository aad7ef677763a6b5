// Every error path of the JS API: each is a real Error whose message names the field (and for
// runAll the problem), or carries the core's message naming the matrices and their shapes.
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { before, describe, test } from 'node:test';

import { dist } from './helpers.mjs';

const pkg = await import(`${dist}node.js`);
let engine;
before(async () => {
  engine = await pkg.loadAttention();
});

const Q = [
  [1, 0],
  [0, 1],
  [1, 1],
];
const ok = () => ({ Q, K: Q, V: Q });

/** `fn` throws an Error (not a bare number) whose message matches `pattern`. */
function throwsError(fn, pattern, field) {
  let caught;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof Error, `expected an Error, got ${typeof caught} ${caught}`);
  assert.match(caught.message, pattern);
  if (field !== undefined) assert.equal(caught.field, field);
  return caught;
}

describe('problem JSON checked in JS', () => {
  test('unknown keys, with a suggestion', () => {
    throwsError(
      () => engine.run({ ...ok(), options: { casual: true } }),
      /^unknown option 'casual' \(did you mean 'causal'\?\)$/,
      'options.casual',
    );
    throwsError(() => engine.run({ ...ok(), Wq: Q }), /^unknown key 'Wq' \(did you mean 'W_Q'\?\)$/, 'Wq');
    throwsError(() => engine.run({ ...ok(), bogus: 1 }), /unknown key 'bogus'; expected one of Q, K, V, X/);
    throwsError(() => engine.run({ ...ok(), options: { precison: 'float32' } }), /did you mean 'precision'/);
  });

  test('the problem and options must be objects', () => {
    throwsError(() => engine.run(null), /the problem is null: expected an object/);
    throwsError(() => engine.run([ok()]), /the problem is an array/);
    throwsError(() => engine.run({ ...ok(), options: [] }), /^options is an array: expected an object$/, 'options');
  });

  test('matrices: wrong types, ragged rows, bad entries, empty', () => {
    throwsError(() => engine.run({ ...ok(), Q: 5 }), /^Q is number 5: expected a nested array of numbers or a string$/, 'Q');
    throwsError(() => engine.run({ ...ok(), K: [[1, 2], [3]] }), /^K row 2 has 1 number but row 1 has 2$/, 'K');
    throwsError(
      () =>
        engine.run({
          ...ok(),
          V: [
            [1, 'x'],
            [3, 4],
            [5, 6],
          ],
        }),
      /^V row 1, column 2 is "x": expected a number or "inf", "-inf", "nan"$/,
      'V',
    );
    throwsError(() => engine.run({ ...ok(), Q: [] }), /^Q is empty$/);
    throwsError(() => engine.run({ ...ok(), Q: [[]] }), /^Q is empty$/);
    throwsError(() => engine.run({ ...ok(), Q: [[1, 2], 3] }), /^Q mixes numbers and lists/);
    throwsError(() => engine.run({ ...ok(), Q: [[true, false]] }), /^Q row 1, column 1 is true: only options.mask may hold booleans$/);
    throwsError(() => engine.run({ ...ok(), Q: { shape: [2, 2], data: [1, 2, 3] } }), /^Q has 3 values but its shape 2x2 needs 4$/);
    throwsError(() => engine.run({ ...ok(), Q: { shape: [2], data: [1, 2] } }), /^Q.shape must be \[rows, columns\]/);
    throwsError(() => engine.run({ ...ok(), Q: { shape: [1, 2], data: [1, 2], extra: 1 } }), /^Q: unknown key 'extra'/);
  });

  test('biases', () => {
    const X = [
      [1, 0],
      [0, 1],
    ];
    const base = { X, W_Q: X, W_K: X, W_V: X };
    throwsError(() => engine.run({ ...base, b_Q: 'abc' }), /b_Q/);
    throwsError(() => engine.run({ ...base, b_Q: {} }), /^b_Q is an object: expected a list of numbers or a string$/, 'b_Q');
    throwsError(() => engine.run({ ...base, b_K: [] }), /^b_K is empty$/);
    throwsError(
      () =>
        engine.run({
          ...base,
          b_V: [
            [1, 2],
            [3, 4],
          ],
        }),
      /^b_V is 2x2: expected a list of numbers$/,
    );
    throwsError(() => engine.run({ ...base, b_V: [1, null] }), /^b_V entry 2 is null/);
  });

  test('options: each wrong type or value', () => {
    const run = (options) => () => engine.run({ ...ok(), options });
    throwsError(
      run({ layout: 'row' }),
      /^options.layout must be "rows" or "columns", got "row" \(did you mean 'rows'\?\)$/,
      'options.layout',
    );
    throwsError(
      run({ scale: 'sqrtdk' }),
      /^options.scale must be "sqrt_dk", "none", a number, "1\/sqrt\(<n>\)" or "1\/<n>", got "sqrtdk" \(did you mean 'sqrt_dk'\?\)$/,
    );
    throwsError(run({ scale: Infinity }), /^options.scale must be a finite number/);
    throwsError(run({ scale: '1/sqrt(-3)' }), /^options.scale must be/);
    throwsError(run({ scale: true }), /^options.scale must be/);
    throwsError(run({ causal: 'yes' }), /^options.causal must be true or false, got "yes"$/, 'options.causal');
    throwsError(run({ softcap: -1 }), /^options.softcap must be 0 \(off\) or a positive number, got number -1$/);
    throwsError(run({ heads: 1.5 }), /^options.heads must be a positive integer, got number 1.5$/, 'options.heads');
    throwsError(run({ kv_heads: 0 }), /^options.kv_heads must be a positive integer/);
    throwsError(run({ precision: 'float16' }), /^options.precision must be "float64" or "float32", got "float16"/);
    throwsError(
      run({
        mask: [
          [true, 0, 0],
          [0, 0, 0],
          [0, 0, 0],
        ],
      }),
      /^options.mask mixes booleans and numbers/,
    );
    throwsError(run({ mask: 'nonsense' }), /mask/);
  });
});

describe('errors from the core, as JS Errors with its message', () => {
  test('shapes that disagree name the matrices and their shapes', () => {
    const e = throwsError(() => engine.run({ Q, K: [[1, 2]], V: Q }), /K has 1 rows but V has 3.*K is 1x2, V is 3x2/);
    assert.ok(!(e instanceof TypeError));
    throwsError(() => engine.run({ Q: [[1, 2, 3]], K: Q, V: Q }), /Q.*3.*K.*2|K.*2.*Q.*3/);
    throwsError(
      () =>
        engine.run({
          ...ok(),
          options: {
            mask: [
              [0, 0],
              [0, 0],
            ],
          },
        }),
      /^mask is 2x2 but the scores are 3x3/,
    );
    throwsError(() => engine.run({ X: [[1, 0]], W_Q: [[1], [0], [0]], W_K: [[1], [0]], W_V: [[1], [0]] }), /W_Q has 3 rows/);
    throwsError(() => engine.run({ Q }), /K is missing/);
    throwsError(() => engine.run({}), /no inputs/);
    throwsError(() => engine.run({ ...ok(), options: { heads: 3 } }), /heads = 3 does not divide/);
  });

  test('non-finite inputs are refused with their position', () => {
    throwsError(
      () =>
        engine.run({
          ...ok(),
          Q: [
            [1, 'inf'],
            [0, 1],
            [1, 1],
          ],
        }),
      /^Q row 1, column 2 is inf: inputs must be finite/,
    );
    throwsError(
      () =>
        engine.run({
          ...ok(),
          V: [
            [1, 'nan'],
            [0, 1],
            [1, 1],
          ],
        }),
      /^V row 1, column 2 is nan/,
    );
    throwsError(
      () =>
        engine.run({
          ...ok(),
          options: {
            mask: [
              [0, 'inf', 0],
              [0, 0, 0],
              [0, 0, 0],
            ],
          },
        }),
      /^mask row 1, column 2 is inf/,
    );
  });

  test("the core's errors carry the input they concern: field, fields, row and column (1-based)", () => {
    const at = (e) => [e.field, e.fields, e.row, e.column];
    assert.deepEqual(
      at(
        throwsError(
          () =>
            engine.run({
              ...ok(),
              V: [
                [1, 'nan'],
                [0, 1],
                [1, 1],
              ],
            }),
          /^V row 1/,
        ),
      ),
      ['V', ['V'], 1, 2],
    );
    assert.deepEqual(at(throwsError(() => engine.run({ Q, K: [[1, 2]], V: Q }), /^K has 1 rows/)), ['V', ['V', 'K'], undefined, undefined]);
    assert.deepEqual(
      at(
        throwsError(
          () =>
            engine.run({
              ...ok(),
              options: {
                mask: [
                  [0, 'inf', 0],
                  [0, 0, 0],
                  [0, 0, 0],
                ],
              },
            }),
          /^mask row 1/,
        ),
      ),
      ['options.mask', ['options.mask'], 1, 2],
    );
    assert.deepEqual(at(throwsError(() => engine.run({ ...ok(), options: { heads: 3 } }), /heads = 3/)), [
      'options.heads',
      ['options.heads', 'Q'],
      undefined,
      undefined,
    ]);
    assert.deepEqual(
      at(throwsError(() => engine.run({ ...ok(), options: { score_fn: 'sigmoid', attention: 'linear' } }), /exclude one another/)),
      ['options.attention', ['options.attention', 'options.score_fn'], undefined, undefined],
    );
    // A problem-wide error concerns no one input.
    assert.deepEqual(at(throwsError(() => engine.run({}), /no inputs/)), [undefined, undefined, undefined, undefined]);
  });

  test('text matrices go through the parser, whose messages name the matrix', () => {
    throwsError(() => engine.run({ ...ok(), Q: '[[1, 2], [3]]' }), /^Q/);
    throwsError(() => engine.parseMatrix('[[1, 2], [3]]', 'pasted'), /^pasted/);
    throwsError(() => engine.parseMatrix(''), /^matrix/);
    throwsError(() => engine.parseMatrix(12), /^parseMatrix takes text, got number 12$/);
  });

  test('runAll names the problem', () => {
    const e = throwsError(
      () => engine.runAll([ok(), ok(), { ...ok(), options: { casual: true } }]),
      /^problem 3 of 3: unknown option 'casual' \(did you mean 'causal'\?\)$/,
    );
    assert.equal(e.problemIndex, 2);
    assert.equal(e.field, 'options.casual');
    const core = throwsError(() => engine.runAll([{ Q, K: [[1, 2]], V: Q }]), /^problem 1 of 1: K has 1 rows but V has 3/);
    assert.equal(core.problemIndex, 0);
    throwsError(() => engine.runAll(ok()), /^runAll takes an array of problems, got an object$/);
  });

  test('explain: bad cells', () => {
    const at = (e) => [e.field, e.fields, e.row, e.column];
    // The core's refusals name what is wrong: the step, the head read against the step, or the
    // coordinate outside the step with the cell asked for (1-based, as the message counts).
    assert.deepEqual(at(throwsError(() => engine.explain(ok(), { step: 'nope', row: 0, col: 0 }), /no step 'nope'/)), [
      'step',
      ['step'],
      undefined,
      undefined,
    ]);
    assert.deepEqual(
      at(
        throwsError(
          () => engine.explain(ok(), { step: 'weights', head: 2, row: 0, col: 0 }),
          /^the trace has no step 'weights' for head 2: its heads are 0$/,
        ),
      ),
      ['head', ['head', 'step'], undefined, undefined],
    );
    assert.deepEqual(
      at(throwsError(() => engine.explain(ok(), { step: 'scores', row: 9, col: 0 }), /^step 'scores' is 3x3: it has no row 10, column 1$/)),
      ['row', ['row', 'step'], 10, 1],
    );
    assert.deepEqual(
      at(throwsError(() => engine.explain(ok(), { step: 'scores', row: 1, col: 3 }), /^step 'scores' is 3x3: it has no row 2, column 4$/)),
      ['col', ['col', 'step'], 2, 4],
    );
    throwsError(() => engine.explain(ok(), { step: 'scores', row: -1, col: 0 }), /^row must be an integer >= 0/);
    throwsError(() => engine.explain(ok(), { step: 'scores', row: 0 }), /^col must be an integer >= 0/);
    throwsError(() => engine.explain(ok(), { step: 3, row: 0, col: 0 }), /^step must be a step id/);
    throwsError(() => engine.explain(ok(), { step: 'scores', row: 0, col: 0, colum: 1 }), /^cell: unknown key 'colum'/);
  });

  test('random: bad seeds and draws', () => {
    throwsError(() => engine.random(-1, []), /^seed must be an integer from 0 to 2\*\*32 - 1/);
    throwsError(() => engine.random(2 ** 32, []), /^seed must be/);
    throwsError(() => engine.random(0, {}), /^draws is an object: expected an array of draws$/);
    throwsError(
      () => engine.random(0, [{ kind: 'uniform', shape: [1, 1] }]),
      /^draws\[0\].kind must be "randn" or "normal" or "rand" or "randint"/,
    );
    throwsError(() => engine.random(0, [{ kind: 'randn', shape: [0, 1] }]), /^draws\[0\].shape must be \[rows, columns\]/);
    throwsError(
      () => engine.random(0, [{ kind: 'randn', shape: [1, 1], shap: 1 }]),
      /^draws\[0\]: unknown key 'shap' \(did you mean 'shape'\?\)/,
    );
    throwsError(() => engine.random(0, [{ kind: 'randint', shape: [1, 1] }]), /^draws\[0\].high is missing/);
    throwsError(() => engine.random(0, [{ kind: 'randint', shape: [1, 1], low: 5, high: 5 }]), /low|high/);
    throwsError(() => engine.random(0, [{ kind: 'normal', shape: [1, 1], scale: 'big' }]), /^draws\[0\].scale must be a finite number/);
  });

  test('the engine keeps working after errors', () => {
    for (let i = 0; i < 50; i++) assert.throws(() => engine.run({ Q, K: [[1, 2]], V: Q }));
    assert.equal(engine.run(ok()).output.length, 3);
  });
});

describe('loading failures name the URL or path tried', () => {
  test('a missing file', async () => {
    await assert.rejects(pkg.loadAttention({ wasmUrl: '/nonexistent/attention.wasm' }), {
      message: 'could not load the WebAssembly module from /nonexistent/attention.wasm: no such file',
    });
  });

  test('a file that is not WebAssembly', async () => {
    const file = `${tmpdir()}/not-wasm-${process.pid}.wasm`;
    await writeFile(file, '<!doctype html><html>');
    await assert.rejects(pkg.loadAttention({ wasmUrl: file }), (error) => {
      assert.ok(error instanceof Error);
      assert.ok(error.message.startsWith(`${file} is not a WebAssembly module (it starts with "<!doctype html><`), error.message);
      return true;
    });
  });

  test('an HTTP 404 and an HTML page from a server', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/page.wasm') {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>fallback</html>');
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${server.address().port}`;
    try {
      await assert.rejects(pkg.loadAttention({ wasmUrl: `${base}/missing.wasm` }), {
        message: `could not load the WebAssembly module from ${base}/missing.wasm: HTTP 404 Not Found`,
      });
      await assert.rejects(pkg.loadAttention({ wasmUrl: `${base}/page.wasm` }), (error) =>
        error.message.startsWith(`${base}/page.wasm is not a WebAssembly module`),
      );
    } finally {
      server.close();
    }
  });
});

// An input error nobody catches: Node prints the line that threw it above the message. That line
// is the package's own short one (load.js unwrap), and the stack reaches the caller's script; not
// the compiled glue, whose one minified line is tens of KB.
test('an uncaught input error shows a readable line and the caller in its stack', async () => {
  const { spawnSync } = await import('node:child_process');
  const script = `${tmpdir()}/attention-uncaught-${process.pid}.mjs`;
  await writeFile(
    script,
    `import { loadAttention } from ${JSON.stringify(`${dist}node.js`)};\n` +
      'const engine = await loadAttention();\n' +
      'engine.run({ Q: [[1, 2], [3, 4]], K: [[1, 2, 3]], V: [[1, 2]] });\n',
  );
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8' });
  await rm(script, { force: true });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /Error: Q has 2 columns but K has 3: queries and keys need the same d_k/);
  assert.match(r.stderr, /attention-uncaught-\d+\.mjs:3/, `the caller's line is not in the stack:\n${r.stderr.slice(0, 2000)}`);
  assert.ok(r.stderr.length < 3000, `${r.stderr.length} characters on stderr, starting: ${r.stderr.slice(0, 300)}`);
});
