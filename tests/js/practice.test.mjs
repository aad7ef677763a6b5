// Attention in practice through the package: engine.decode, engine.tiles, engine.onlineSoftmax
// and the CLI's decode and tiles commands, against run()'s numbers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { dist } from './helpers.mjs';

const { loadAttention } = await import(`${dist}node.js`);
const engine = await loadAttention();

const cli = join(dist, 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'attention-practice-'));
function runCli(args) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
function file(name, value) {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
}

const maxAbs = (a, b) => Math.max(...[a].flat(Infinity).map((x, i) => Math.abs(x - [b].flat(Infinity)[i])));
const stepOf = (trace, id, head = 0) => trace.steps.find((s) => s.id === id && s.head === head);

// Self-attention from X: 4 query heads sharing 2 key/value heads, W_O, RoPE and a window.
const [X, W_Q, W_K, W_V, W_O] = engine.random(
  7,
  [
    [5, 8],
    [8, 8],
    [8, 4],
    [8, 6],
    [12, 8],
  ].map((shape) => ({ kind: 'randn', shape })),
);
const gqa = { X, W_Q, W_K, W_V, W_O, options: { heads: 4, kv_heads: 2, rope: true, window: [2, 0] } };

describe('engine.decode', () => {
  test('every step is row t of causal attention; the cache grows a row a step', () => {
    const full = engine.run({ ...gqa, options: { ...gqa.options, causal: true } });
    const d = engine.decode(gqa);
    assert.equal(d.steps.length, 5);
    for (const s of d.steps) {
      assert.equal(s.cache_rows, s.t + 1);
      for (let h = 0; h < 4; h++) {
        const row = stepOf(full, 'weights', h).data[s.t];
        assert.equal(s.weights[h].length, s.t + 1);
        assert.ok(maxAbs(s.weights[h], row.slice(0, s.t + 1)) <= 1e-12, `t ${s.t}, head ${h}`);
        assert.ok(row.slice(s.t + 1).every((w) => w === 0));
        assert.ok(maxAbs(s.scores[h], stepOf(full, 'scores', h).data[s.t].slice(0, s.t + 1)) <= 1e-12);
      }
      assert.ok(maxAbs(s.output, full.output[s.t]) <= 1e-12);
      assert.ok(s.difference <= 1e-12);
    }
    assert.ok(maxAbs(d.output, full.output) <= 1e-12);
  });

  test('the columns layout gives the output in columns', () => {
    const T = (m) => m[0].map((_, j) => m.map((row) => row[j]));
    const columns = { X: T(X), W_Q: T(W_Q), W_K: T(W_K), W_V: T(W_V), W_O: T(W_O), options: { ...gqa.options, layout: 'columns' } };
    const d = engine.decode(columns);
    assert.equal(d.output.length, 8);
    assert.ok(maxAbs(T(d.output), engine.decode(gqa).output) <= 1e-12);
  });

  test('multiply-adds with the cache and without, counted by hand', () => {
    // Q, K, V given (no projections), one head, d_k 2, d_v 3: t = 2 reads 3 keys.
    const d = engine.decode({
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
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
      ],
    });
    assert.deepEqual(
      d.steps.map((s) => s.flops_cached),
      [5, 10, 15],
    ); // n·(2 + 3)
    assert.deepEqual(
      d.steps.map((s) => s.flops_full),
      [5, 20, 45],
    ); // n²·(2 + 3)
    assert.equal(d.flops_cached, 30);
    assert.equal(d.flops_full, 70);
  });

  test('what decode does not take gets a clear error', () => {
    const Q = [
      [1, 0],
      [0, 1],
    ];
    assert.throws(() => engine.decode({ Q, K: Q, V: Q, past_K: [[1, 1]], past_V: [[1, 1]] }), {
      message:
        "decode builds the KV cache itself, token by token: give the tokens' Q, K and V (or X with W_Q, W_K and W_V) without past_K and past_V",
    });
    assert.throws(() => engine.decode({ Q, K: [[1, 0]], V: [[1, 0]] }), {
      message: 'decode needs one key and one value per query (each token generated brings its own): Q has 2 rows but K has 1',
    });
    assert.throws(() => engine.decode({ Q, K: Q, V: Q, options: { causal: 'yes' } }), {
      message: /^options\.causal must be true or false/,
    });
  });
});

describe('engine.tiles', () => {
  const [Q, K, V] = engine.random(
    3,
    [
      [5, 4],
      [7, 4],
      [7, 3],
    ].map((shape) => ({ kind: 'randn', shape })),
  );

  test('the output equals the trace for block sizes 1, 2, 3, 7, L and S', () => {
    const output = engine.run({ Q, K, V }).output;
    for (const block_q of [1, 2, 3, 7, 5]) {
      for (const block_k of [1, 2, 3, 7]) {
        const t = engine.tiles({ Q, K, V }, { block_q, block_k });
        assert.ok(maxAbs(t.output, output) <= 1e-12, `${block_q} x ${block_k}`);
        assert.ok(t.max_difference <= 1e-12);
        assert.equal(t.tiles.length, Math.ceil(5 / block_q) * Math.ceil(7 / block_k));
        assert.equal(t.skipped, 0);
      }
    }
  });

  test('the running statistics obey their recurrences; causal tiles above the diagonal are skipped', () => {
    const problem = { Q, K: Q, V: K.slice(0, 5), options: { causal: true } };
    const trace = engine.run(problem);
    const t = engine.tiles(problem, { block_q: 2, block_k: 2 });
    assert.ok(maxAbs(t.output, trace.output) <= 1e-12);
    assert.deepEqual([t.visited, t.skipped], [6, 3]);
    assert.deepEqual(
      t.tiles.filter((x) => x.skipped).map((x) => [x.q_block, x.k_block]),
      [
        [0, 1],
        [0, 2],
        [1, 2],
      ],
    );
    const values = trace.steps.find((s) => s.id === 'V').data;
    for (const tile of t.tiles.filter((x) => !x.skipped)) {
      const [k0] = tile.keys;
      tile.scores.forEach((row, r) => {
        const m = Math.max(tile.m_before[r], ...row);
        assert.equal(tile.m_after[r], m);
        const p = row.map((x) => (x === -Infinity ? 0 : Math.exp(x - m)));
        const factor = Math.exp(tile.m_before[r] - m);
        assert.ok(Math.abs(tile.rescale[r] - factor) <= 1e-15);
        assert.ok(Math.abs(tile.l_after[r] - (factor * tile.l_before[r] + p.reduce((a, b) => a + b, 0))) <= 1e-14);
        tile.partial_after[r].forEach((o, c) => {
          const expected = factor * tile.partial_before[r][c] + p.reduce((a, pj, j) => a + pj * values[k0 + j][c], 0);
          assert.ok(Math.abs(o - expected) <= 1e-13);
        });
      });
    }
    // O = Õ / ℓ per query block.
    for (const block of t.blocks) {
      const last = t.tiles.filter((x) => x.q_block === block.q_block && !x.skipped).at(-1);
      block.output.forEach((row, r) => row.forEach((o, c) => assert.ok(Math.abs(o - last.partial_after[r][c] / block.l[r]) <= 1e-15)));
    }
  });

  test('a fully masked row is 0 as run() gives; bytes counted by hand', () => {
    const problem = {
      Q: Q.slice(0, 4),
      K: K.slice(0, 4),
      V: V.slice(0, 4),
      options: {
        mask: [
          [true, true, true, true],
          [false, false, false, false],
          [true, false, true, false],
          [true, true, false, false],
        ],
      },
    };
    const t = engine.tiles(problem, { block_q: 2, block_k: 2 });
    assert.deepEqual(t.output[1], [0, 0, 0]);
    assert.ok(maxAbs(t.output, engine.run(problem).output) <= 1e-12);
    // L = S = 4, d_k 4, d_v 3, a mask matrix: standard Q 16 + K 16 + V 12 + O 12 + S and P
    // written and read 4·16 + the mask 16 = 136 elements; flash: 2 query blocks of Q_i 8 + O_i 6,
    // and every tile keeps a key (row 2 keeps keys 1 and 3), each K_j 8 + V_j 6 + mask 4: 100.
    assert.equal(t.skipped, 0);
    assert.equal(t.bytes_standard, 136 * 8);
    assert.equal(t.bytes_flash, 100 * 8);
    assert.equal(t.element_bytes, 8);
  });

  test('block sizes are checked, naming the option', () => {
    const problem = { Q, K, V };
    assert.throws(() => engine.tiles(problem, { block_q: 0, block_k: 2 }), {
      message: 'block_q must be a positive integer, got number 0',
      field: 'block_q',
    });
    assert.throws(() => engine.tiles(problem, { block_q: 2, block_k: 1.5 }), {
      message: 'block_k must be a positive integer, got number 1.5',
      field: 'block_k',
    });
    assert.throws(() => engine.tiles(problem, { block_q: '2', block_k: 2 }), { message: 'block_q must be a positive integer, got "2"' });
    assert.throws(() => engine.tiles(problem, { block_q: 2 }), { message: 'block_k must be a positive integer, got undefined' });
    assert.throws(() => engine.tiles(problem, { block_q: 2, block_k: 2, blockq: 1 }), {
      message: /unknown key 'blockq' \(did you mean 'block_q'\?\)/,
    });
    assert.throws(() => engine.tiles(problem), { message: 'tiles takes { block_q, block_k } after the problem, got undefined' });
    // The problem JSON's errors come first.
    assert.throws(() => engine.tiles({ Q, K, V, options: { causal: 'yes' } }, { block_q: 0, block_k: 0 }), {
      message: /^options\.causal must be true or false/,
    });
  });
});

describe('engine.onlineSoftmax', () => {
  test('subtracting the running max: the weights of run() for the same logits', () => {
    const row = [1.5, -2, 3, 0.25, -Infinity];
    const s = engine.onlineSoftmax(row);
    // The same logits through run(): one query of 1, keys of the row, no scaling.
    const trace = engine.run({ Q: [[1]], K: row.slice(0, 4).map((x) => [x]), V: [[1], [2], [3], [4]], options: { scale: 'none' } });
    assert.ok(maxAbs(s.weights.slice(0, 4), trace.steps.find((x) => x.id === 'weights').data[0]) <= 1e-15);
    assert.equal(s.weights[4], 0);
    assert.deepEqual(
      s.steps.map((x) => x.m_after),
      [1.5, 1.5, 3, 3, 3],
    );
    assert.equal(s.steps[2].rescale, Math.exp(1.5 - 3));
    assert.equal(s.max, 3);
  });

  test('without it, float32 overflows: the sum is inf and the weights NaN', () => {
    const s = engine.onlineSoftmax([100, 1], { subtractMax: false, precision: 'float32' });
    assert.equal(s.sum, Infinity);
    assert.ok(Number.isNaN(s.weights[0]));
    assert.equal(s.weights[1], 0);
    assert.match(s.warnings[0], /^e\^x overflows float32 at entry 1 \(x = 100\)/);
    const safe = engine.onlineSoftmax([100, 1], { precision: 'float32' });
    assert.ok(Math.abs(safe.weights[0] - 1) < 1e-7);
    assert.deepEqual(safe.warnings, []);
  });

  test('bad rows and options get a clear error', () => {
    assert.throws(() => engine.onlineSoftmax('1 2'), { message: 'onlineSoftmax takes a list of numbers, got "1 2"' });
    assert.throws(() => engine.onlineSoftmax([1, '-inf']), { message: 'onlineSoftmax takes a list of numbers, got an entry "-inf"' });
    assert.throws(() => engine.onlineSoftmax([1, NaN]), {
      message: 'entry 2 of the row is nan: expected a finite number or -inf (a hidden entry)',
    });
    assert.throws(() => engine.onlineSoftmax([]), { message: 'the row is empty: a softmax needs at least one number' });
    assert.throws(() => engine.onlineSoftmax([1], { subtractMax: 'no' }), { message: 'subtractMax must be true or false, got "no"' });
    assert.throws(() => engine.onlineSoftmax([1], { precision: 'half' }), {
      message: 'precision must be "float64" or "float32", got "half"',
    });
  });
});

describe('attention-explorer decode and tiles', () => {
  const problem = {
    Q: [
      [1, 0],
      [0, 1],
      [1, 1],
    ],
    K: [
      [1, 0],
      [0, 1],
      [1, 1],
    ],
    V: [
      [1, 0],
      [0, 1],
      [2, 2],
    ],
    options: { causal: true },
  };

  test('decode prints what engine.decode returns, as JSON', () => {
    const r = runCli(['decode', file('decode.json', problem)]);
    assert.equal(r.code, 0, r.stderr);
    const d = JSON.parse(r.stdout);
    assert.deepEqual(d, JSON.parse(JSON.stringify(engine.decode(problem))));
    assert.ok(maxAbs(d.output, engine.run(problem).output) <= 1e-15);
  });

  test('tiles prints what engine.tiles returns, with "-inf" for hidden scores', () => {
    const r = runCli(['tiles', '--block-q', '2', '--block-k', '2', file('tiles.json', problem)]);
    assert.equal(r.code, 0, r.stderr);
    const t = JSON.parse(r.stdout);
    assert.deepEqual(t.tiles[0].scores[0], [0.7071067811865475, '-inf']);
    assert.equal(t.tiles[1].skipped, true);
    assert.deepEqual(t.output, engine.tiles(problem, { block_q: 2, block_k: 2 }).output);
    assert.deepEqual([t.bytes_standard, t.bytes_flash], [480, 256]);
  });

  /** --table's output as { caption line: rows of numbers (without the rows' labels) }, each caption's tables in order. */
  function tables(stdout) {
    const found = [];
    for (const line of stdout.split('\n')) {
      if (/^ {2}\S/.test(line)) {
        // cells are two or more spaces apart; a row may start with its label ("head 1", "q2")
        const cells = line.trim().split(/ {2,}/);
        if (cells[0] !== '-inf' && Number.isNaN(Number(cells[0]))) cells.shift();
        found.at(-1).rows.push(cells.map((x) => (x === '-inf' ? -Infinity : Number(x))));
      } else if (line) found.push({ caption: line, rows: [] });
    }
    return found;
  }
  /** `rows` are `want` printed with `digits` places. */
  function assertPrinted(rows, want, digits, what) {
    assert.deepEqual(
      rows.map((r) => r.length),
      want.map((r) => r.length),
      what,
    );
    rows.forEach((r, i) =>
      r.forEach((x, j) => {
        if (want[i][j] === -Infinity) assert.equal(x, -Infinity, what);
        else assert.ok(Math.abs(x - want[i][j]) <= 0.5 * 10 ** -digits + 1e-12, `${what} [${i}][${j}]: ${x} for ${want[i][j]}`);
      }),
    );
  }

  test("decode --table: each token's rows, output and work, at --digits", () => {
    const two = {
      ...problem,
      options: { heads: 2 },
      Q: [
        [1, 0, 2, 1],
        [0, 1, -1, 0],
        [1, 1, 0.5, 2],
      ],
      K: [
        [1, 0, 0, 1],
        [0, 1, 1, 0],
        [1, 1, -1, 1],
      ],
    };
    const r = runCli(['decode', '--table', '--digits', '3', file('decode.json', two)]);
    assert.equal(r.code, 0, r.stderr);
    const d = engine.decode(two);
    const found = tables(r.stdout);
    d.steps.forEach((s, t) => {
      const [head, scores, weights, output] = found.slice(4 * t, 4 * t + 4);
      assert.equal(
        head.caption,
        `token ${t + 1}: ${s.cache_rows === 1 ? '1 key and value' : `${s.cache_rows} keys and values`} (${t} cached and its own), ` +
          `multiply-adds ${s.flops_cached} with the cache, ${s.flops_full} without; difference from causal attention ${s.difference}`,
      );
      assert.equal(scores.caption, 'scores (QKᵀ before scaling), a row per head');
      assertPrinted(scores.rows, s.scores, 3, `token ${t + 1} scores`);
      assertPrinted(weights.rows, s.weights, 3, `token ${t + 1} weights`);
      assertPrinted(output.rows, [s.output], 3, `token ${t + 1} output`);
      assert.equal(s.weights.length, 2);
    });
    assert.equal(found.at(-1).caption, `multiply-adds ${d.flops_cached} with the cache, ${d.flops_full} without`);
  });

  test("tiles --table: each tile's scores, statistics and partial outputs, skipped tiles, the bytes", () => {
    const r = runCli(['tiles', '--block-q', '2', '--block-k', '2', '--table', file('tiles.json', problem)]);
    assert.equal(r.code, 0, r.stderr);
    const t = engine.tiles(problem, { block_q: 2, block_k: 2 });
    const found = tables(r.stdout);
    let k = 0;
    t.tiles.forEach((tile, i) => {
      const where = found[k++];
      assert.ok(where.caption.startsWith(`tile ${i + 1} of 4 (head 1): query block ${tile.q_block + 1}`), where.caption);
      if (tile.skipped) {
        assert.match(where.caption, /: skipped, every score hidden$/);
        return;
      }
      assertPrinted(found[k++].rows, tile.scores, 4, `tile ${i + 1} scores`);
      assertPrinted(
        found[k++].rows,
        tile.m_before.map((_, q) => [tile.m_before[q], tile.m_after[q], tile.rescale[q], tile.l_before[q], tile.l_after[q]]),
        4,
        `tile ${i + 1} statistics`,
      );
      assertPrinted(found[k++].rows, tile.partial_before, 4, `tile ${i + 1} partial before`);
      assertPrinted(found[k++].rows, tile.partial_after, 4, `tile ${i + 1} partial after`);
    });
    assert.equal(found[k].caption, 'output');
    assertPrinted(found[k].rows, t.output, 4, 'output');
    assert.equal(found[k + 1].caption, 'block_q 2, block_k 2: 3 tiles computed, 1 skipped; max difference from run 0');
    assert.equal(found[k + 2].caption, 'bytes between HBM and SRAM (8 per number): standard 480, flash 256');
  });

  test('bad block sizes and misplaced options: exit 2 naming the option', () => {
    const path = file('tiles.json', problem);
    const cases = [
      [['tiles', '--block-q', '0', '--block-k', '2', path], '--block-q takes a positive integer, got 0'],
      [['tiles', '--block-q', '2', '--block-k', '1.5', path], '--block-k takes a positive integer, got 1.5'],
      [['tiles', '--block-q', '2', path], 'tiles needs --block-q N and --block-k N'],
      [['run', '--block-q', '2', path], '--block-q is an option of tiles'],
      [['preset', '--table'], '--table is an option of run, decode, tiles and gradients'],
    ];
    for (const [args, message] of cases) {
      const r = runCli(args);
      assert.equal(r.code, 2, args.join(' '));
      assert.equal(r.stderr.split('\n')[0], `attention-explorer: ${message}`);
      assert.match(r.stderr, /\nusage: attention-explorer run /);
    }
  });

  test('a problem decode does not take: exit 1 naming it', () => {
    const r = runCli(['decode', file('cross.json', { Q: [[1]], K: [[1], [2]], V: [[1], [2]] })]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /problem 1: decode needs one key and one value per query .*Q has 1 rows but K has 2/);
  });
});
