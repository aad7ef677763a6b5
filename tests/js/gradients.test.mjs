// The backward pass through the API (engine.gradients) and the CLI (attention-explorer gradients):
// every gradient of an input equals central finite differences of engine.run's loss Σ O∘dO,
// computed here; dO's default and its errors.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { join } from 'node:path';

import { dist } from './helpers.mjs';

const { loadAttention } = await import(join(dist, 'node.js'));
const engine = await loadAttention();
const cli = join(dist, 'cli.js');

// Small deterministic numbers (no random stream needed): entry (i, j) of matrix `seed`.
const matrix = (rows, cols, seed) =>
  Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => Math.sin(seed * 7.1 + i * 1.3 + j * 2.9)));

const loss = (problem, dO) => engine.run(problem).output.reduce((sum, row, i) => sum + row.reduce((s, v, j) => s + v * dO[i][j], 0), 0);

// The matrix inputs of `problem` (biases as lists), by name.
const INPUTS = ['Q', 'K', 'V', 'X', 'X_kv', 'W_Q', 'W_K', 'W_V', 'W_O', 'b_Q', 'b_K', 'b_V', 'b_O', 'past_K', 'past_V', 'P'];

/** Every "d" + input step (head null) of `result` against central differences of `problem`'s loss. */
function checkAgainstDifferences(problem, dO, result) {
  assert.ok(Math.abs(result.loss - loss(problem, dO)) <= 1e-12 * Math.max(1, Math.abs(result.loss)), 'loss');
  let checked = 0;
  for (const name of INPUTS.filter((n) => problem[n] !== undefined)) {
    const step = result.steps.find((s) => s.id === `d${name}` && s.head === null);
    assert.ok(step, `the gradient of ${name}`);
    const flat = step.data.flat();
    const largest = Math.max(...flat.map(Math.abs));
    const isBias = !Array.isArray(problem[name][0]);
    const entries = isBias ? problem[name].map((_, k) => [k]) : problem[name].flatMap((row, i) => row.map((_, j) => [i, j]));
    assert.equal(flat.length, entries.length, `${name}: one gradient per entry`);
    entries.forEach((at, k) => {
      const nudged = (by) => {
        const copy = structuredClone(problem);
        if (isBias) copy[name][at[0]] += by;
        else copy[name][at[0]][at[1]] += by;
        return loss(copy, dO);
      };
      const h = 1e-5;
      const difference = (nudged(h) - nudged(-h)) / (2 * h);
      assert.ok(
        Math.abs(flat[k] - difference) <= 1e-6 * Math.max(Math.abs(difference), largest, 1e-3),
        `${name} entry ${k}: ${flat[k]} vs differences ${difference}`,
      );
      checked++;
    });
  }
  return checked;
}

describe('engine.gradients', () => {
  test('Q, K, V given, two heads, causal: equals finite differences; dO from the settings', () => {
    const problem = { Q: matrix(3, 4, 1), K: matrix(4, 4, 2), V: matrix(4, 4, 3), options: { heads: 2, causal: true, softcap: 2 } };
    const dO = matrix(3, 4, 4);
    const result = engine.gradients(problem, { dO });
    assert.ok(checkAgainstDifferences(problem, dO, result) === 44);
    assert.deepEqual(result.steps.find((s) => s.id === 'dO').given, ['dO']);
    // The trace's steps come first, then the gradients, whose inputs index the same list.
    assert.deepEqual(
      result.steps.slice(0, engine.run(problem).steps.length).map((s) => s.id),
      engine.run(problem).steps.map((s) => s.id),
    );
    const dS = result.steps.find((s) => s.id === 'dS' && s.head === 1);
    assert.equal(dS.text, 'dS̄⁽²⁾ = A⁽²⁾ ∘ (dA⁽²⁾ − rowsum(dA⁽²⁾ ∘ A⁽²⁾))');
    assert.deepEqual(
      dS.inputs.map((i) => result.steps[i].id),
      ['weights', 'dA'],
    );
  });

  test('X in the columns layout with weights and biases, GQA, RoPE: equals finite differences', () => {
    // Columns: X is d_model x L, the Ω's d x d_model, dO shaped like the output (d_out x L).
    const problem = {
      X: matrix(4, 3, 5),
      W_Q: matrix(4, 4, 6),
      W_K: matrix(2, 4, 7),
      W_V: matrix(2, 4, 8),
      W_O: matrix(3, 4, 9),
      b_Q: [0.1, -0.2, 0.3, 0.05],
      b_K: [0.2, -0.1],
      b_V: [-0.3, 0.4],
      b_O: [0.5, -0.5, 0.25],
      options: { layout: 'columns', heads: 2, kv_heads: 1, rope: true, causal: true },
    };
    const dO = matrix(3, 3, 10);
    const result = engine.gradients({ ...problem, dO });
    checkAgainstDifferences(problem, dO, result);
    assert.deepEqual(result.steps.find((s) => s.id === 'dW_Q').shape, [4, 4]);
    assert.equal(result.steps.find((s) => s.id === 'dW_Q').text, 'dΩ_Q = dQ·Xᵀ');
    assert.deepEqual(result.steps.find((s) => s.id === 'db_K').shape, [2, 1]);
  });

  test('a KV cache, ALiBi, a window with a sink and a sink logit: equals finite differences', () => {
    const problem = {
      Q: matrix(2, 2, 11),
      K: matrix(2, 2, 12),
      V: matrix(2, 2, 13),
      past_K: matrix(3, 2, 14),
      past_V: matrix(3, 2, 15),
      options: { causal: true, alibi: true, window: [2, 0], sink_tokens: 1, sink_logit: 0.5 },
    };
    const dO = matrix(2, 2, 16);
    checkAgainstDifferences(problem, dO, engine.gradients(problem, { dO }));
  });

  test('dO defaults to ones; a bad dO or setting is refused with a clear message', () => {
    const problem = { Q: matrix(4, 2, 17), K: matrix(3, 2, 18), V: matrix(3, 2, 19) };
    const result = engine.gradients(problem);
    assert.deepEqual(
      result.steps.find((s) => s.id === 'dO').data,
      matrix(4, 2, 0).map((row) => row.map(() => 1)),
    );
    assert.ok(
      Math.abs(
        result.loss -
          engine
            .run(problem)
            .output.flat()
            .reduce((a, b) => a + b, 0),
      ) < 1e-12,
    );
    assert.throws(() => engine.gradients(problem, { dO: matrix(3, 2, 1) }), {
      message: 'dO has 3 rows but the output has 4 (dO is 3x2, the output is 4x2)',
    });
    assert.throws(() => engine.gradients({ ...problem, dO: [[1, 'a']] }), /dO row 1, column 2/);
    // The core's dO errors carry their place, as every input's do: dO, and a bad entry's row and column (1-based).
    const at = (fn) => {
      try {
        fn();
      } catch (e) {
        return [e.message, e.field, e.fields, e.row, e.column];
      }
      return 'no error';
    };
    assert.deepEqual(
      at(() => engine.gradients(problem, { dO: matrix(4, 3, 1) })),
      ['dO has 3 columns but the output has 2 (dO is 4x3, the output is 4x2)', 'dO', ['dO'], undefined, undefined],
    );
    const bad = matrix(4, 2, 1);
    bad[2][1] = 'inf';
    assert.deepEqual(
      at(() => engine.gradients(problem, { dO: bad })),
      ['dO: row 3, column 2 is inf, not a finite number', 'dO', ['dO'], 3, 2],
    );
    assert.throws(() => engine.gradients(problem, { d0: 1 }), { message: "gradients: unknown setting 'd0' (it takes { dO })" });
  });
});

describe('attention-explorer gradients', () => {
  const run = (args, input) => spawnSync(process.execPath, [cli, ...args], { input, encoding: 'utf8' });

  test('JSON in, the gradients as JSON out, equal to finite differences of engine.run', () => {
    const problem = { X: matrix(3, 4, 20), W_Q: matrix(4, 2, 21), W_K: matrix(4, 2, 22), W_V: matrix(4, 2, 23), b_V: [0.5, -0.5] };
    const dO = matrix(3, 2, 24);
    const r = run(['gradients', '-'], JSON.stringify({ ...problem, dO }));
    assert.equal(r.status, 0, r.stderr);
    const result = JSON.parse(r.stdout);
    checkAgainstDifferences(problem, dO, result);
    const table = run(['gradients', '--table'], JSON.stringify(problem));
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /^dW_Q 4x2: Gradient of W_Q, dW_Q = Xᵀ·dQ$/m);
    assert.match(table.stdout, /^loss -?\d+\.\d{8}$/m);
  });

  test('a bad dO: exit 1 naming it', () => {
    const r = run(['gradients'], JSON.stringify({ Q: [[1, 0]], K: [[1, 0]], V: [[1, 0]], dO: [[1], [2]] }));
    assert.equal(r.status, 1);
    assert.match(r.stderr, /problem 1: dO has 2 rows but the output has 1/);
  });
});

describe('gradient cells explained and exported', async () => {
  const pkg = await import(join(dist, 'node.js'));
  const { cellLatex, cellText, stepLatex, solutionLatex, stepCsv, traceCsv, parseCsv, traceJson } = pkg;
  const problem = {
    X: matrix(3, 4, 1),
    W_Q: matrix(4, 4, 2),
    W_K: matrix(4, 2, 3),
    W_V: matrix(4, 2, 4),
    b_V: [0.5, -1],
    W_O: matrix(4, 3, 5),
    options: { heads: 2, kv_heads: 1, causal: true, softcap: 2 },
  };
  const dO = matrix(3, 3, 6);
  const result = engine.gradients(problem, { dO });
  const withDO = { ...problem, dO };
  const step = (id, head) => result.steps.find((s) => s.id === id && s.head === head);

  test('engine.explain explains a gradient cell with its numbers (the problem carries dO)', () => {
    const dV = engine.explain(withDO, { step: 'dV', head: 1, row: 2, col: 0 });
    assert.equal(dV.kind, 'gradient_dot');
    assert.equal(dV.value, step('dV', 1).data[2][0]);
    assert.equal(dV.terms.index, 'query');
    const sum = dV.products.reduce((s, x) => s + x, 0);
    assert.ok(Math.abs(sum - dV.value) <= 1e-12, `${sum} vs ${dV.value}`);
    // dV[j][c] = Σ_i A[i][j]·dhead[i][c]: the left factors are column j of the head's weights.
    assert.deepEqual(
      dV.left,
      step('weights', 1).data.map((row) => row[2]),
    );
    const dS = engine.explain(withDO, { step: 'dS', head: 0, row: 1, col: 0 });
    assert.equal(dS.kind, 'softmax_grad');
    const mean = dS.products.reduce((s, x) => s + x, 0);
    assert.ok(Math.abs(dS.factor * (dS.input - mean) - dS.value) <= 1e-12);
    // head null: the whole gradient, the sum over the key/value group's two heads.
    const dK = engine.explain(withDO, { step: 'dK', head: null, row: 0, col: 1 });
    assert.equal(dK.kind, 'head_sum');
    assert.equal(dK.head, null);
    assert.deepEqual(dK.terms.columns[0], [1, 2]);
    assert.equal(dK.value, step('dK', null).data[0][1]);
    const db = engine.explain(withDO, { step: 'db_V', row: 0, col: 1 });
    assert.equal(db.kind, 'token_sum');
    assert.ok(Math.abs(db.left.reduce((s, x) => s + x, 0) - step('db_V', null).data[0][1]) <= 1e-12);
    // Without dO in the problem, the gradients are those of L = Σ O.
    assert.equal(engine.explain(problem, { step: 'dO', head: null, row: 0, col: 0 }).value, 1);
    assert.throws(() => engine.explain(problem, { step: 'dQ_rot', head: 0, row: 0, col: 0 }), /the trace has no step 'dQ_rot' for head 0/);
  });

  test("every gradient step's explanation fills in: no placeholder left, every number known", () => {
    const { fillExplanation } = pkg;
    for (const s of result.steps.slice(result.steps.findIndex((t) => t.id === 'dO'))) {
      const last = [s.shape[0] - 1, s.shape[1] - 1];
      const e = engine.explain(withDO, { step: s.id, head: s.head, row: last[0], col: last[1] });
      assert.equal(e.value, s.data[last[0]][last[1]], `${s.id}:${s.head}`);
      for (const template of [...e.lines, e.text, e.terms?.caption ?? '']) {
        const filled = fillExplanation(template, e, { number: (x) => x.toFixed(4), label: (n) => `the ${n}` });
        assert.doesNotMatch(filled, /@|undefined|NaN/, `${s.id}:${s.head}: ${filled}`);
      }
    }
  });

  test('a gradient cell in LaTeX and text; gradient steps in LaTeX, CSV and JSON', () => {
    const e = engine.explain(withDO, { step: 'dS_kept', head: 1, row: 0, col: 2 });
    assert.equal(e.value, 0);
    // With softcap, the mask's gradient is that of the soft-capped scores Ŝ.
    assert.match(cellLatex(e, result), /^\\begin\{aligned\}\nd\\hat S\^\{\(2\)\}_\{1,3\} &= 0 \\quad\\text\{\(hidden by causal\)\}/);
    assert.match(cellText(e, result), /Hidden from this query by causal masking .* no gradient flows back through it\./);
    const dA = engine.explain(withDO, { step: 'dA', head: 0, row: 2, col: 1 });
    assert.match(cellText(dA, result), /the weight of key 2 multiplies the value of key 2/);
    assert.match(stepLatex(step('dW_O', null)), /^dW_\{O\} = \\begin\{bmatrix\}/);
    const latex = solutionLatex(problem, result);
    assert.ok(latex.includes(step('dS', 0).tex), 'the solution shows the gradient formulas');
    const rows = parseCsv(stepCsv(step('dX', null)));
    assert.deepEqual(rows, step('dX', null).data);
    const back = parseCsv(traceCsv(result));
    assert.deepEqual(
      back.steps.map((s) => `${s.id}:${s.head}`),
      result.steps.map((s) => `${s.id}:${s.head}`),
    );
    assert.deepEqual(back.steps.find((s) => s.id === 'dW_Q').data, step('dW_Q', null).data);
    const json = JSON.parse(traceJson(result));
    assert.equal(json.loss, result.loss);
    assert.deepEqual(json.steps.find((s) => s.id === 'dscores' && s.head === 1).data, step('dscores', 1).data);
  });
});
