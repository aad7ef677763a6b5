// Exports of engine.decode's and engine.tiles' results: the long CSVs read back number by number
// against the engine's results (and their rows and columns against run()'s matrices), the LaTeX's
// numbers at the chosen decimals and its braces and environments balanced, JSON through stringify.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { dist, repo } from './helpers.mjs';

const pkg = await import(`${dist}node.js`);
const { decodeCsv, decodeLatex, stringify, texNumber, tilesCsv, tilesLatex } = pkg;
const engine = await pkg.loadAttention();
const katex = createRequire(join(repo, 'package.json'))('katex');

// Two heads sharing one key/value head (GQA), RoPE and a causal window: every decode option at once.
const decodeProblem = {
  Q: [
    [1, 0, 0.5, -1],
    [0, 1, -0.5, 2],
    [1, 1, 0, 0],
    [0.5, -1, 2, 1],
  ],
  K: [
    [1, 0],
    [0, 1],
    [1, 1],
    [-1, 0.5],
  ],
  V: [
    [1, 0],
    [0, 1],
    [2, 2],
    [-1, 3],
  ],
  options: { heads: 2, kv_heads: 1, rope: true, window: [2, 0] },
};
// Masked (causal), a sink logit, blocks that do not divide the sequence.
const tilesProblem = {
  Q: [
    [1, 0],
    [0, 1],
    [1, 1],
    [0.5, -1],
    [2, 0],
  ],
  K: [
    [1, 0],
    [0, 1],
    [1, 1],
    [0.5, -1],
    [2, 0],
  ],
  V: [
    [1, 0],
    [0, 1],
    [1, 1],
    [0, 2],
    [3, 0],
  ],
  options: { causal: true, sink_logit: 0.5 },
};

/** A CSV written by the exports (no quoted fields) as objects, numbers as text. */
function readCsv(text) {
  assert.ok(text.endsWith('\n'));
  const [header, ...lines] = text.trimEnd().split('\n');
  const keys = header.split(',');
  return lines.map((line) => {
    const cells = line.split(',');
    assert.equal(cells.length, keys.length, line);
    return Object.fromEntries(keys.map((k, i) => [k, cells[i]]));
  });
}
const number = (s) => ({ inf: Infinity, '-inf': -Infinity, nan: NaN })[s] ?? Number(s);
const index = (s) => (s === '' ? null : Number(s));

/** Every number of a LaTeX text's bmatrices, in order. */
function bmatrixNumbers(tex) {
  return [...tex.matchAll(/\\begin\{bmatrix\}\n([^]*?)\n\\end\{bmatrix\}/g)].flatMap(([, body]) => body.split(/ \\\\\n| & /));
}

/** Braces balance, and every \begin{env} is closed by its own \end{env} in order. */
function assertBalanced(tex) {
  let depth = 0;
  for (const [i, c] of [...tex].entries()) {
    if (tex[i - 1] === '\\') continue;
    if (c === '{') depth++;
    if (c === '}') depth--;
    assert.ok(depth >= 0, `a } without its { at ${i}`);
  }
  assert.equal(depth, 0, 'unclosed {');
  const open = [];
  for (const [, kind, env] of tex.matchAll(/\\(begin|end)\{(\w+\*?)\}/g)) {
    if (kind === 'begin') open.push(env);
    else assert.equal(open.pop(), env, `\\end{${env}} closes another environment`);
  }
  assert.deepEqual(open, []);
  // Display math: every \[ has its \].
  assert.equal((tex.match(/\\\[/g) ?? []).length, (tex.match(/\\\]/g) ?? []).length);
}

/** `shown` is x at `decimals` places as texNumber writes it, and within half a last place of x. */
function assertShown(shown, x, decimals, where) {
  assert.equal(shown, texNumber(x, decimals), where);
  if (Number.isFinite(x) && shown !== '0' && !shown.includes('times')) {
    assert.match(shown, new RegExp(`^-?\\d+\\.\\d{${decimals}}$`), where);
    assert.ok(Math.abs(Number(shown) - x) <= 0.5 * 10 ** -decimals * (1 + 1e-9), `${where}: ${shown} for ${x}`);
  }
}

describe('decode exports', () => {
  const decoding = engine.decode(decodeProblem);
  const causal = engine.run({ ...decodeProblem, options: { ...decodeProblem.options, causal: true } });

  test("decodeCsv: a row per number, each the engine's, rows and columns those of causal attention", () => {
    const rows = readCsv(decodeCsv(decoding));
    const heads = decoding.steps[0].weights.length;
    assert.equal(heads, 2);
    const perStep = (s) => 2 * heads * s.cache_rows + s.output.length + 4;
    assert.equal(
      rows.length,
      decoding.steps.reduce((a, s) => a + perStep(s), 0),
    );
    // Pivoted back: each head's L×L weights and scores, and the output.
    const L = decoding.steps.length;
    const grid = () => Array.from({ length: L }, () => Array(L).fill(0));
    const pivot = { weights: [grid(), grid()], scores: [grid(), grid()], output: causal.output.map((r) => r.map(() => NaN)) };
    for (const r of rows) {
      const s = decoding.steps[Number(r.t)];
      const value = number(r.value);
      if (['cache_rows', 'flops_cached', 'flops_full', 'difference'].includes(r.quantity)) {
        assert.deepEqual([r.head, r.row, r.col], ['', '', '']);
        assert.equal(value, s[r.quantity], `${r.quantity} of token ${r.t}`);
      } else if (r.quantity === 'output') {
        assert.equal(r.head, '');
        assert.equal(value, s.output[index(r.col)]);
        pivot.output[index(r.row)][index(r.col)] = value;
      } else {
        assert.equal(value, s[r.quantity][index(r.head)][index(r.col)], `${r.quantity} of token ${r.t}`);
        assert.equal(index(r.row), s.t);
        pivot[r.quantity][index(r.head)][index(r.row)][index(r.col)] = value;
      }
    }
    // Row t of each head's causal weights (run() with causal: true), to rounding: the rows are
    // where a spreadsheet's pivot puts them.
    for (let h = 0; h < heads; h++) {
      const want = causal.steps.find((st) => st.id === 'weights' && st.head === h).data;
      want.forEach((row, i) =>
        row.forEach((w, j) => assert.ok(Math.abs(pivot.weights[h][i][j] - w) < 1e-12, `head ${h + 1} weight ${i},${j}`)),
      );
    }
    causal.output.forEach((row, i) => row.forEach((o, c) => assert.ok(Math.abs(pivot.output[i][c] - o) < 1e-12)));
    // The scores are QKᵀ before scaling: the rotated queries and keys' dot products.
    const scores = causal.steps.find((st) => st.id === 'scores' && st.head === 1).data;
    scores.forEach((row, i) => row.slice(0, i + 1).forEach((x, j) => assert.ok(Math.abs(pivot.scores[1][i][j] - x) < 1e-12)));
  });

  test("decodeLatex: every token's numbers at the chosen decimals, balanced, a document when standalone", () => {
    const decimals = 3;
    const tex = decodeLatex(decoding, { decimals, labels: { tokensQ: ['the', 'cat_1'] } });
    assertBalanced(tex);
    assert.match(tex, /\\paragraph\{Token 2 \(cat\\_1\)\}/);
    assert.match(tex, /\\paragraph\{Token 3\}/);
    const shown = bmatrixNumbers(tex);
    // Per token: S and A of each head, then O; then the whole output.
    const want = decoding.steps
      .flatMap((s) => [...s.weights.flatMap((w, h) => [...s.scores[h], ...w]), ...s.output])
      .concat(decoding.output.flat());
    assert.equal(shown.length, want.length);
    shown.forEach((text, i) => assertShown(text, want[i], decimals, `number ${i + 1}`));
    for (const s of decoding.steps) {
      assert.ok(tex.includes(`Multiply-adds: ${s.flops_cached} with the cache, ${s.flops_full} recomputing`), `token ${s.t + 1}`);
      assert.ok(tex.includes(`Largest difference from row ${s.t + 1} of causal attention: $${texNumber(s.difference, decimals)}$`));
    }
    assert.ok(tex.includes('S^{(2)}_{4,:} &= ') && tex.includes('A^{(1)}_{1,:} &= '));
    assert.ok(tex.includes(`${decoding.flops_cached} with the cache, ${decoding.flops_full} without.`));
    const doc = decodeLatex(decoding, { standalone: true });
    assertBalanced(doc);
    assert.ok(doc.startsWith('\\documentclass{article}\n\\usepackage{amsmath}'));
    assert.ok(doc.endsWith('\\end{document}\n'));
    assert.ok(doc.includes('\\title{Decoding with a KV cache, token by token}'));
  });

  test('a trace is refused, naming what is expected', () => {
    assert.throws(() => decodeLatex(causal), {
      message: "export: decodeLatex takes engine.decode()'s result: an object with steps, output, flops_cached, flops_full",
    });
    assert.throws(() => decodeCsv(causal), /^Error: export: decodeCsv takes engine.decode\(\)'s result/);
  });

  test('JSON: stringify writes the result, its numbers read back exactly', () => {
    const text = stringify(decoding);
    assert.deepEqual(JSON.parse(text), decoding);
  });
});

describe('tiles exports', () => {
  const blocks = { block_q: 2, block_k: 3 };
  const tiles = engine.tiles(tilesProblem, blocks);
  const trace = engine.run(tilesProblem);

  test("tilesCsv: a row per number, each the engine's; tile scores are the trace's", () => {
    const rows = readCsv(tilesCsv(tiles));
    assert.ok(tiles.skipped >= 1, 'causal skips the tile above the diagonal');
    const count = (t) => 1 + (t.skipped ? 0 : t.scores.flat().length + 5 * t.m_before.length + 2 * t.partial_before.flat().length);
    assert.equal(rows.length, tiles.tiles.reduce((a, t) => a + count(t), 0) + tiles.output.flat().length + 4);
    const masked = trace.steps.find((s) => s.id === 'masked').data;
    const seen = new Set();
    for (const r of rows) {
      const value = number(r.value);
      if (r.tile === '') {
        assert.deepEqual([r.head, r.q_block, r.k_block], ['', '', '']);
        if (r.quantity === 'output') assert.equal(value, tiles.output[index(r.row)][index(r.col)]);
        else assert.equal(value, tiles[r.quantity], r.quantity);
        seen.add(r.quantity);
        continue;
      }
      const t = tiles.tiles[Number(r.tile)];
      assert.deepEqual([Number(r.head), Number(r.q_block), Number(r.k_block)], [t.head, t.q_block, t.k_block]);
      seen.add(r.quantity);
      if (r.quantity === 'skipped') {
        assert.equal(value, t.skipped ? 1 : 0);
        continue;
      }
      const held = t[r.quantity][index(r.row)];
      assert.equal(value, r.col === '' ? held : held[index(r.col)], `${r.quantity} of tile ${r.tile}`);
      // The tile's scores are the masked scores at the tile's offset (rows layout).
      if (r.quantity === 'scores') assert.equal(value, masked[t.queries[0] + index(r.row)][t.keys[0] + index(r.col)]);
    }
    assert.deepEqual([...seen].sort(), [
      'bytes_flash',
      'bytes_standard',
      'element_bytes',
      'l_after',
      'l_before',
      'm_after',
      'm_before',
      'max_difference',
      'output',
      'partial_after',
      'partial_before',
      'rescale',
      'scores',
      'skipped',
    ]);
  });

  test("tilesLatex: each tile's numbers at the chosen decimals, skipped tiles said, balanced", () => {
    const decimals = 2;
    const tex = tilesLatex(tiles, { decimals, labels: { tokensQ: ['a', 'b', 'c', 'd', 'e'] } });
    assertBalanced(tex);
    const shown = bmatrixNumbers(tex);
    const want = tiles.tiles
      .filter((t) => !t.skipped)
      .flatMap((t) => [
        ...t.scores.flat(),
        ...t.m_before,
        ...t.m_after,
        ...t.rescale,
        ...t.l_before,
        ...t.l_after,
        ...t.partial_before.flat(),
        ...t.partial_after.flat(),
      ])
      .concat(tiles.output.flat());
    assert.equal(shown.length, want.length);
    shown.forEach((text, i) => assertShown(text, want[i], decimals, `number ${i + 1}`));
    assert.equal((tex.match(/the algorithm skips it/g) ?? []).length, tiles.skipped);
    // The sink logit starts every query's running max at 0.5.
    assert.ok(tex.includes(`m &= \\begin{bmatrix}\n${texNumber(0.5, decimals)} & ${texNumber(0.5, decimals)}\n\\end{bmatrix}`));
    assert.match(tex, /Query block 3, key block 1: query 5 \(e\) with keys 1--3\./);
    assert.ok(tex.includes(`the standard algorithm ${tiles.bytes_standard}, these 2 $\\times$ 3 tiles ${tiles.bytes_flash}.`));
    assert.ok(tex.includes(`Largest difference from the trace's output (\\texttt{run()}): $${texNumber(tiles.max_difference, decimals)}$`));
    const doc = tilesLatex(tiles, { standalone: true, title: 'Tiles & more' });
    assertBalanced(doc);
    assert.ok(doc.includes('\\title{Tiles \\& more}') && doc.endsWith('\\end{document}\n'));
  });

  test('JSON: stringify writes -inf as the CLI does, and it reads back', () => {
    const text = stringify(tiles);
    assert.ok(text.includes('"-inf"'));
    const back = JSON.parse(text, (_, v) => (v === '-inf' ? -Infinity : v));
    assert.deepEqual(back, tiles);
  });

  test("columns layout: the CSV's tile scores and partial outputs are the transposed arrays, as the trace's steps", () => {
    const T = (m) => m[0].map((_, j) => m.map((r) => r[j]));
    const columns = {
      Q: T(tilesProblem.Q),
      K: T(tilesProblem.K),
      V: T(tilesProblem.V),
      options: { ...tilesProblem.options, layout: 'columns' },
    };
    const tc = engine.tiles(columns, blocks);
    const masked = engine.run(columns).steps.find((s) => s.id === 'masked').data;
    const rows = readCsv(tilesCsv(tc));
    let checked = 0;
    for (const r of rows.filter((x) => x.quantity === 'scores')) {
      const t = tc.tiles[Number(r.tile)];
      // keys × queries: row is the key, col the query, within the tile.
      assert.equal(number(r.value), masked[t.keys[0] + index(r.row)][t.queries[0] + index(r.col)]);
      checked++;
    }
    assert.equal(
      checked,
      tiles.tiles.reduce((a, t) => a + t.scores.flat().length, 0),
    );
    // The same numbers as the rows layout's, transposed.
    tc.tiles.forEach((t, i) => {
      if (!t.skipped) assert.deepEqual(T(t.partial_after), tiles.tiles[i].partial_after);
    });
  });

  test('a trace is refused', () => {
    assert.throws(() => tilesLatex(trace), /^Error: export: tilesLatex takes engine.tiles\(\)'s result/);
    assert.throws(() => tilesCsv(trace), /^Error: export: tilesCsv takes engine.tiles\(\)'s result/);
  });
});

// No TeX engine runs in the tests (the documents were compiled with pdflatex by hand): every piece
// of math, display and inline, must at least render in KaTeX, which is stricter than amsmath.
test('decodeLatex and tilesLatex: every display and inline formula renders in KaTeX', () => {
  const docs = {
    decode: decodeLatex(engine.decode(decodeProblem), { standalone: true }),
    tiles: tilesLatex(engine.tiles(tilesProblem, { block_q: 2, block_k: 3 }), { standalone: true }),
  };
  for (const [name, tex] of Object.entries(docs)) {
    const display = [...tex.matchAll(/\\\[([\s\S]*?)\\\]/g)].map((m) => m[1]);
    const inline = [...tex.replace(/\\\[[\s\S]*?\\\]/g, '').matchAll(/\$([^$]+)\$/g)].map((m) => m[1]);
    assert.ok(display.length >= 3 && inline.length >= 3, `${name}: ${display.length} display, ${inline.length} inline formulas`);
    for (const [math, displayMode] of [...display.map((m) => [m, true]), ...inline.map((m) => [m, false])]) {
      assert.doesNotThrow(() => katex.renderToString(math, { throwOnError: true, displayMode }), `${name}: ${math.slice(0, 200)}`);
    }
  }
});

// In another language (the page passes its `t`): the headings and sentences are the catalogue's,
// every formula and number English's; English by default, and English's words are the catalogue's.
test('decodeLatex and tilesLatex in French: French headings and sentences, the same formulas and numbers as English', async () => {
  const { createTranslator, english, loadCatalogue } = await import(`${dist}i18n.js`);
  const fr = createTranslator('fr', await loadCatalogue('fr'));
  const displays = (tex) => tex.match(/\\\[[\s\S]*?\\\]/g) ?? [];
  const inline = (tex) => tex.replace(/\\\[[\s\S]*?\\\]/g, '').match(/\$[^$]+\$/g) ?? [];
  // Every number of the text outside the formulas, in order (French keeps English's order here).
  const numbers = (tex) => tex.replace(/\\\[[\s\S]*?\\\]|\$[^$]+\$/g, '').match(/\d+(\.\d+)?/g) ?? [];
  const decoding = engine.decode(decodeProblem);
  const tiles = engine.tiles(tilesProblem, { block_q: 2, block_k: 3 });
  const cases = {
    decode: (options) => decodeLatex(decoding, { decimals: 3, standalone: true, labels: { tokensQ: ['the', 'cat_1'] }, ...options }),
    tiles: (options) => tilesLatex(tiles, { decimals: 2, standalone: true, labels: { tokensQ: ['a', 'b', 'c', 'd', 'e'] }, ...options }),
  };
  for (const [name, latex] of Object.entries(cases)) {
    const en = latex({});
    assert.equal(latex({ t: english }), en, `${name}: English by default`);
    const french = latex({ t: fr });
    assertBalanced(french);
    assert.notEqual(french, en, name);
    assert.ok(displays(en).length >= 3, name);
    assert.deepEqual(displays(french), displays(en), `${name}: the formulas and matrices`);
    assert.deepEqual(inline(french), inline(en), `${name}: the inline formulas`);
    assert.ok(numbers(en).length > 10, `${name}: ${numbers(en).length} numbers in the text`);
    assert.deepEqual(numbers(french), numbers(en), `${name}: the numbers of the text`);
    assert.ok(french.includes(`\\title{${fr(`export.${name}.title`)}}`), `${name}: the title`);
    // No English sentence is left: the words of every heading and sentence are French's.
    for (const english of [
      'Multiply-adds',
      'with the cache',
      'Every token',
      'Largest difference',
      'Tile 1 of',
      'Query block',
      'skips it',
      'One entry per query',
      'The recurrence',
      'The output',
    ])
      assert.ok(!french.includes(english), `${name}: "${english}" in the French export`);
  }
  const decodeFr = cases.decode({ t: fr });
  assert.match(decodeFr, /\\paragraph\{Jeton 2 \(cat\\_1\)\} Sa requête lit le cache : 2 clés et valeurs \(1 en cache et les siennes\)\./);
  assert.match(decodeFr, /\\paragraph\{Tous les jetons\} Les sorties, une ligne par jeton/);
  const d = decoding.steps[1];
  assert.ok(
    decodeFr.includes(
      `Multiplications-additions : ${d.flops_cached} avec le cache, ${d.flops_full} en recalculant les jetons 1--2 sans lui.`,
    ),
  );
  const tilesFr = cases.tiles({ t: fr });
  assert.match(tilesFr, /\\paragraph\{La récurrence\} Chaque tuile \$T\$ de scores/);
  assert.match(tilesFr, /Bloc de requêtes 3, bloc de clés 1 : requête 5 \(e\) avec clés 1--3\./);
  assert.equal((tilesFr.match(/l’algorithme la saute/g) ?? []).length, tiles.skipped);
  assert.ok(tilesFr.includes(`l’algorithme classique ${tiles.bytes_standard}, ces tuiles 2 $\\times$ 3 ${tiles.bytes_flash}.`));
});
