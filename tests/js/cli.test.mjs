// The CLI (dist/cli.js): seed numbers as JSON and as tables, exit codes, messages.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { assertPrinted, dist } from './helpers.mjs';

const cli = join(dist, 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'attention-cli-'));

function run(args, input) {
  const r = spawnSync(process.execPath, [cli, ...args], { input, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function file(name, value) {
  const path = join(dir, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
}

// Seed 000's inputs as the preset command prints them (np.random.seed(42), three randn(4, 8)).
const seed000 = () => JSON.parse(run(['preset', '000']).stdout);

describe('attention-explorer run', () => {
  test('seed 000 from a file: the trace as JSON with the printed numbers', () => {
    const r = run(['run', file('seed000.json', seed000())]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const trace = JSON.parse(r.stdout);
    assert.deepEqual(
      trace.steps.map((s) => s.id),
      ['Q', 'K', 'V', 'scores', 'scaled', 'weights', 'output'],
    );
    assertPrinted(trace.steps[3].data[0], '-2.72357421  0.40818741  2.39601116 -1.18323729', 'scores row 1');
    assertPrinted(trace.steps[5].data[0], '0.08431243 0.25513027 0.51521078 0.14534652', 'weights row 1');
    assertPrinted(trace.output[0].slice(0, 2), '-0.1308104   0.77212573', 'output row 1');
    assert.equal(trace.meta.d_k, 8);
  });

  test('seed 000 causal from standard input: "-inf" strings and the masked output', () => {
    const problem = { ...seed000(), options: { causal: true } };
    const r = run(['run', '-'], JSON.stringify(problem));
    assert.equal(r.code, 0, r.stderr);
    const trace = JSON.parse(r.stdout);
    const masked = trace.steps.find((s) => s.id === 'masked');
    assert.deepEqual(masked.data[0].slice(1), ['-inf', '-inf', '-inf']);
    assertPrinted(trace.output[1].slice(0, 2), '0.66641301  1.39213367', 'masked output row 2');
    // FILE defaults to standard input.
    assert.equal(run(['run'], JSON.stringify(problem)).stdout, r.stdout);
  });

  test('an array of problems gives an array of traces', () => {
    const r = run(['run', file('two.json', [seed000(), { ...seed000(), options: { scale: 'none' } }])]);
    assert.equal(r.code, 0, r.stderr);
    const traces = JSON.parse(r.stdout);
    assert.equal(traces.length, 2);
    assert.equal(traces[1].meta.scale, 1);
  });

  test('--table prints each step with its name, head and shape, aligned', () => {
    const r = run(['run', '--table', file('seed000.json', seed000())]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('scores'));
    assert.equal(lines[at], 'scores (head 1) 4x4: Scores, S = Q·Kᵀ');
    assert.equal(lines[at + 1], '  q1  -2.7236   0.4082   2.3960  -1.1832');
    assert.equal(lines[at + 2], '  q2   5.6001   1.1598  -4.7249   2.4386');
    const w = lines.findIndex((l) => l.startsWith('weights'));
    assert.equal(lines[w + 1], '  q1  0.0843  0.2551  0.5152  0.1453');
    assert.match(r.stdout, /variance of scores 6.83756524, after scaling 0.85469566/);
    const digits = run(['run', '--table', '--digits', '8', file('seed000.json', seed000())]);
    assert.match(digits.stdout, /\n {2}q1 {2}0\.08431243 {2}0\.25513027 {2}0\.51521078 {2}0\.14534652\n/);
  });

  test("--lang fr: the tables' captions, heads and facts in French, the numbers as in English; an unknown code is bad usage", () => {
    const fr = JSON.parse(readFileSync(join(dist, 'locales', 'fr.json'), 'utf8'));
    const path = file('seed000.json', seed000());
    const english = run(['run', '--table', path]);
    const r = run(['run', '--table', '--lang', 'fr', path]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('scores'));
    assert.equal(lines[at], `scores (tête 1) 4x4 : ${fr['step.scores']}, S = Q·Kᵀ`);
    const w = lines.find((l) => l.startsWith('weights'));
    assert.ok(w.startsWith(`weights (tête 1) 4x4 : ${fr['step.weights']}, `), w);
    assert.notEqual(fr['step.weights'], 'Attention weights');
    assert.match(r.stdout, /\ntête 1 : variance des scores 6\.83756524, après mise à l’échelle 0\.85469566\n/);
    assert.doesNotMatch(r.stdout, /variance of scores|queries, |\(head 1\)/);
    // The formulas' words in French too ("Q (given)": the step's formula_ids filled by stepFormula).
    assert.equal(
      lines.find((l) => l.startsWith('Q ')),
      `Q (tête 1) 4x8 : ${fr['step.Q']}, Q (${fr['formula.given']})`,
    );
    assert.doesNotMatch(r.stdout, /\(given\)|along each row/);
    // The numbers are the same lines as English's: only the words change.
    const numbers = (text) => text.split('\n').filter((l) => l.startsWith('  '));
    assert.deepEqual(numbers(r.stdout), numbers(english.stdout));
    // --lang en is the default, byte for byte; JSON is the same in any language.
    assert.equal(run(['run', '--table', '--lang', 'en', path]).stdout, english.stdout);
    assert.equal(run(['run', '--lang', 'ar', path]).stdout, run(['run', path]).stdout);
    const gradients = run(['gradients', '--table', '--lang', 'fr', path]);
    assert.match(gradients.stdout, /\nperte \d/);
    const bad = run(['run', '--table', '--lang', 'xx', path]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^attention-explorer: --lang takes one of en, zh-CN, es, pt-BR, fr, ja, ko, ar, got xx\n/);
    assert.equal(bad.stdout, '');
  });

  test("--lang: model's and train's messages about their input in the language, English's by default", () => {
    const unknown = file('model-bogus.json', { model: 1, weights: 2, tokens: 3, bogus: 1 });
    const english = run(['model', unknown]);
    assert.equal(english.code, 1);
    assert.equal(english.stderr, `attention-explorer: ${unknown}: unknown key 'bogus' (it takes model, weights, tokens, targets)\n`);
    const french = run(['model', '--lang', 'fr', unknown]);
    assert.equal(french.code, 1);
    assert.equal(
      french.stderr,
      `attention-explorer: ${unknown} : clé inconnue « bogus » (les clés admises sont model, weights, tokens, targets)\n`,
    );
    const notObject = run(['model', '--lang', 'ja', '-'], '5');
    assert.equal(notObject.stderr, 'attention-explorer: 標準入力：オブジェクト { "model", "weights", "tokens", "targets" } が必要です\n');
    const weights = run(
      ['model', '--lang', 'fr', '-'],
      JSON.stringify({ model: { vocab: 5, context: 4, d_model: 4 }, weights: 5, tokens: [1] }),
    );
    assert.equal(weights.stderr, 'attention-explorer: l’entrée standard : weights : un objet était attendu (E, layers, ...), reçu 5\n');
    const train = run(['train', '--lang', 'fr', '-'], '{');
    assert.match(train.stderr, /^attention-explorer: l’entrée standard n’est pas du JSON valide : /);
  });

  test("--lang: decode's, tiles' and recurrent's tables, a cache's row labels and a list's headings in the language; English's numbers", () => {
    const fr = JSON.parse(readFileSync(join(dist, 'locales', 'fr.json'), 'utf8'));
    const preset = (id) => file(`${id}.json`, JSON.parse(run(['preset', id]).stdout));
    const cache = file('cache.json', {
      Q: [[1, 0]],
      K: [[1, 2]],
      V: [[1, 1]],
      past_K: [[0, 1]],
      past_V: [[5, 5]],
      options: { causal: true, rope: true },
    });
    const commands = [
      ['decode', '--table', preset('multihead')],
      ['tiles', '--block-q', '2', '--block-k', '1', '--table', preset('000-causal')],
      ['recurrent', '--table', preset('linear')],
      ['recurrent', '--chunk', '2', '--table', preset('linear')],
      ['run', '--table', cache],
      ['run', '--table', file('two.json', [seed000(), seed000()])],
    ];
    // A table's numbers, line by line (its cells after the label: columns are two spaces apart at least).
    const numbers = (text) =>
      text
        .split('\n')
        .filter((l) => l.startsWith('  '))
        .map((l) => l.split(/ {2,}/).filter((c) => /^(-?\d[\d.e+-]*|-?inf|nan)$/.test(c)));
    const seen = [];
    for (const args of commands) {
      const english = run(args);
      assert.equal(english.code, 0, english.stderr);
      // --lang en is the default, byte for byte.
      assert.equal(run([...args, '--lang', 'en']).stdout, english.stdout, args.join(' '));
      for (const code of ['zh-CN', 'es', 'pt-BR', 'fr', 'ja', 'ko', 'ar']) {
        const r = run([...args, '--lang', code]);
        assert.equal(r.code, 0, r.stderr);
        assert.doesNotMatch(
          r.stdout,
          /[{}]|multiply-adds|partial output|state S after|every score hidden|token by token|chunk of tokens|a row per head|# problem |cached|warning:/,
          `${code}: ${args.join(' ')}`,
        );
        // The numbers are English's, in the same places.
        assert.equal(r.stdout.split('\n').length, english.stdout.split('\n').length, `${code}: ${args.join(' ')}`);
        assert.deepEqual(numbers(r.stdout), numbers(english.stdout), `${code}: ${args.join(' ')}`);
        if (code === 'fr') seen.push(r.stdout);
      }
      assert.ok(numbers(english.stdout).flat().length > 4, args.join(' '));
    }
    const [decode, tiles, recurrent, chunked, cached, two] = seen;
    assert.match(
      decode,
      /^jeton 1 : 1 clé et valeur \(0 en cache et les siennes\), multiplications-additions \d+ avec le cache, \d+ sans ; écart avec l’attention causale 0\n/,
    );
    assert.match(decode, /\n {2}tête 2 {2}/);
    assert.match(decode, /\njeton 3 : 3 clés et valeurs \(2 en cache/);
    assert.match(tiles, /^tuile 1 sur 8 \(tête 1\) : bloc de requêtes 1 \(requêtes 1-2\), bloc de clés 1 \(clé 1\)\n/);
    assert.match(
      tiles,
      /\ntuile 3 sur 8 \(tête 1\) : bloc de requêtes 1 \(requêtes 1-2\), bloc de clés 3 \(clé 3\) : sautée, tous les scores masqués\n/,
    );
    assert.match(tiles, /\nblock_q 2, block_k 1 : 6 tuiles calculées, 2 sautées ; écart maximal avec run /);
    assert.match(tiles, /\noctets entre HBM et SRAM \(8 par nombre\) : standard \d+, flash \d+$/m);
    assert.match(recurrent, /^tête 1, jeton 1 : écart avec la forme parallèle /);
    assert.match(recurrent, /\njeton par jeton : écart maximal avec run /);
    assert.match(recurrent, /\nsoftmax : \d+ multiplications-additions, état de \d+ nombres\n/);
    assert.match(chunked, /^tête 1, bloc de jetons 1-2 : /);
    assert.ok(chunked.includes(`\n${fr['cli.recurrent.intra']}\n`) && chunked.includes('\nblocs de 2 : écart maximal avec run '));
    assert.match(cached, /\n {2}q1 \(position 1\) {2}/);
    assert.match(cached, /\n {2}k1 en cache {2}/);
    assert.match(cached, /\n {2}k2 nouvelle {2}/);
    assert.match(two, /^# problème 1 sur 2\n\n/);
  });

  test('--table with -inf and a fully masked row warning', () => {
    const problem = {
      ...seed000(),
      options: {
        mask: [
          [false, false, false, false],
          [true, true, true, true],
          [true, true, true, true],
          [true, true, true, true],
        ],
      },
    };
    const r = run(['run', '--table', file('masked.json', problem)]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /\nmask \(head 1\) 4x4: Mask, M_ij = 1 if your mask keeps it; else 0\n {2}q1 +0\.0000 +0\.0000 +0\.0000 +0\.0000\n/,
    );
    assert.match(r.stdout, /\nmasked \(head 1\) 4x4: Masked scores, S̄ = S̃ where M = 1, −∞ where M = 0\n {2}q1 +-inf +-inf +-inf +-inf\n/);
    assert.match(r.stdout, /\nwarning: .*row 1/);
  });
});

// One new token after two cached ones (RoPE at position 2), and a causal sliding window of 2
// with the first token kept as a sink (docs/cli.md shows both runs).
const ROPE_CACHE = {
  Q: [[1, 0, 0.5, -1]],
  K: [[0.5, 1, -1, 0]],
  V: [[2, 1]],
  past_K: [
    [1, 0, 0, 1],
    [0.2, -0.4, 1, 0.3],
  ],
  past_V: [
    [1, 0],
    [0, 1],
  ],
  options: { causal: true, rope: true },
};
const TOKENS = [
  [1, 0],
  [0, 1],
  [1, 1],
  [0.5, -1],
  [2, 0],
];
const WINDOW_SINK = {
  Q: TOKENS,
  K: TOKENS,
  V: [
    [1, 0],
    [0, 1],
    [1, 1],
    [0, 2],
    [3, 0],
  ],
  options: { causal: true, window: [1, 0], sink_tokens: 1 },
};

describe('positions, RoPE, a KV cache, windows and sinks', () => {
  test('RoPE with a KV cache: --table shows the rotated and cached steps with their formulas', () => {
    const r = run(['run', '--table', file('rope-cache.json', ROPE_CACHE)]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.deepEqual(r.stdout.match(/^\S+(?= \(head 1\)| \d+x\d+:)/gm), [
      'rope_angles',
      'Q',
      'K',
      'V',
      'Q_rot',
      'K_rot',
      'K_cache',
      'V_cache',
      'scores',
      'scaled',
      'mask',
      'masked',
      'weights',
      'output',
    ]);
    // RoPE's angles at the positions used (cached keys 0 and 1, the query and the new key at 2), per pair.
    assert.match(
      r.stdout,
      /^rope_angles 3x2: RoPE angles, Θ\[p, i\] = p·θ_i, θ_i = 10000\^\(−2i\/4\)\n  position 0  0\.0000  0\.0000\n  position 1  1\.0000  0\.0100\n  position 2  2\.0000  0\.0200\n/m,
    );
    assert.match(
      r.stdout,
      /^Q_rot \(head 1\) 1x4: Rotated queries, Q_rot = RoPE\(Q\), θ_i = 10000\^\(−2i\/4\), pairs \(i, i\+2\)\n  q1 \(position 2\)  -0\.8708  0\.0200  0\.7012  -0\.9998\n/m,
    );
    assert.match(
      r.stdout,
      /^K_cache \(head 1\) 3x4: Keys with the cache, K_cache = \[K_past ; K_rot\]\n  k1 cached  1\.0000   0\.0000  0\.0000  1\.0000\n  k2 cached  0\.2000  -0\.4000  1\.0000  0\.3000\n  k3 new     0\.7012   0\.9998  0\.8708  0\.0200\n/m,
    );
    assert.match(r.stdout, /^scores \(head 1\) 1x3: Scores, S = Q_rot·K_cacheᵀ\n  q1 \(position 2\)  -1\.8706  0\.2191  0\.0000\n/m);
    // The query sits at position 2, after the cache, so causal hides none of the 3 keys.
    assert.match(
      r.stdout,
      /^mask \(head 1\) 1x3: Mask, M_ij = 1 if j ≤ pos\(i\) \(causal\); else 0\n  q1 \(position 2\)  1\.0000  1\.0000  1\.0000\n/m,
    );
    assert.match(r.stdout, /^output 1x2: Output, O = A·V_cache\n  q1 \(position 2\)  0\.9538  0\.8435\n/m);
  });

  test('--table labels rows: the queries with their positions after a cache, the cached and the new keys', () => {
    const r = run(['run', '--table', file('rope-cache.json', ROPE_CACHE)]);
    const labels = (id) =>
      r.stdout
        .split(/\n\n/)
        .find((b) => b.startsWith(`${id} `))
        .split('\n')
        .slice(1)
        .map((l) => l.trim().split(/  /)[0]);
    assert.deepEqual(labels('K_cache'), ['k1 cached', 'k2 cached', 'k3 new']);
    assert.deepEqual(labels('V'), ['k3 new']);
    assert.deepEqual(labels('weights'), ['q1 (position 2)']);
    const digits = run(['run', '--digits', '-3', file('rope-cache.json', ROPE_CACHE)]);
    assert.match(digits.stderr, /^attention-explorer: --digits takes an integer from 0 to 17, got -3\n/);
  });

  test('a sliding window with a sink token: the mask step and the weights it leaves', () => {
    const r = run(['run', '--table', file('window-sink.json', WINDOW_SINK)]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^mask \(head 1\) 5x5: Mask, M_ij = 1 if j ≤ i \(causal\), i − 1 ≤ j ≤ i \(window\) or j < 1 \(sink\); else 0\n/m,
    );
    const table = (id) =>
      r.stdout
        .split(/\n\n/)
        .find((b) => b.startsWith(`${id} `))
        .split('\n')
        .slice(1)
        .map((l) => l.trim().split(/\s+/).slice(1)); // after the row label (q1, …)
    assert.deepEqual(
      table('mask').map((row) => row.join(' ')),
      [
        '1.0000 0.0000 0.0000 0.0000 0.0000',
        '1.0000 1.0000 0.0000 0.0000 0.0000',
        '1.0000 1.0000 1.0000 0.0000 0.0000',
        '1.0000 0.0000 1.0000 1.0000 0.0000', // key 1 is outside the window but a sink
        '1.0000 0.0000 0.0000 1.0000 1.0000',
      ],
    );
    assert.deepEqual(table('weights')[3], ['0.3132', '0.0000', '0.1544', '0.5323', '0.0000']);
    assert.deepEqual(table('output')[4], ['2.3794', '0.1759']);
  });

  test('bad options and caches: 1, and the message on stderr', () => {
    const base = { Q: [[1, 0, 0, 0, 0, 0]], K: [[1, 0, 0, 0, 0, 0]], V: [[1]] };
    for (const [name, problem, message] of [
      ['window.json', { ...base, options: { window: [3] } }, 'options.window needs two entries, got 1'],
      [
        'cache.json',
        { Q: [[1, 0, 0, 0]], K: [[1, 0, 0, 0]], V: [[1]], past_K: [[1, 2, 3]], past_V: [[1]] },
        'past_K has 3 columns but K has 4',
      ],
      ['dims.json', { ...base, options: { rope: { dims: 3 } } }, 'rope dims must be even and at most d_k = 6 (got 3)'],
    ]) {
      const r = run(['run', file(name, problem)]);
      assert.equal(r.code, 1, name);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, `attention-explorer: ${join(dir, name)}: problem 1: ${message}\n`);
    }
  });
});

describe('exit codes and messages', () => {
  test('bad input: 1, and stderr names the problem and the field', () => {
    let r = run(['run', file('typo.json', { ...seed000(), options: { casual: true } })]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /typo\.json: problem 1: unknown option 'casual' \(did you mean 'causal'\?\)\n$/);

    r = run(['run', file('many.json', [seed000(), { Q: [[1, 2]], K: [[1, 2, 3]], V: [[1]] }])]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /many\.json: problem 2 of 2: .*Q.*K|K.*Q/);

    r = run(['run', file('ragged.json', { Q: [[1, 2], [3]], K: [[1]], V: [[1]] })]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /problem 1: Q row 2 has 1 number but row 1 has 2/);

    r = run(['run', file('broken.json', '{"Q": [[1, 2]')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /broken\.json is not valid JSON/);

    r = run(['run', join(dir, 'missing.json')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot read .*missing\.json: no such file/);

    r = run(['run', file('empty.json', [])]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /empty array/);

    r = run(['preset', 'nope']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no preset 'nope'; the presets are 000, /);
  });

  test("--lang: the CLI's own messages in the language (exit codes as in English), the core's message inside too", async () => {
    const fr = JSON.parse(readFileSync(join(dist, 'locales', 'fr.json'), 'utf8'));
    const bad = { Q: [[1, 2]], K: [[1, 2, 3]], V: [[1]] };
    const many = file('many.json', [seed000(), bad]);
    // The core's message as the API gives it, in French (errorWords), is the one the CLI prints.
    const { loadAttention } = await import(join(dist, 'node.js'));
    const { errorWords, loadTranslator } = await import(join(dist, 'i18n.js'));
    const engine = await loadAttention();
    const thrown = (() => {
      try {
        engine.run(bad);
      } catch (error) {
        return error;
      }
      throw new Error('the problem should be refused');
    })();
    assert.equal(run(['run', many]).stderr, `attention-explorer: ${many}: problem 2 of 2: ${thrown.message}\n`);
    const core = errorWords(thrown, await loadTranslator('fr'));
    assert.ok(thrown.message_id && core !== thrown.message, core);
    const cases = [
      [['run', '--lang', 'fr', many], `attention-explorer: ${many} : problème 2 sur 2 : ${core}\n`],
      [['run', '--lang', 'fr', file('broken.json', '{"Q": [[1, 2]')], /^attention-explorer: .*broken\.json n’est pas du JSON valide : /],
      [
        ['decode', '--lang', 'fr', join(dir, 'missing.json')],
        /^attention-explorer: impossible de lire .*missing\.json : ce fichier n’existe pas\n$/,
      ],
      [
        ['tiles', '--block-q', '1', '--block-k', '1', '--lang', 'fr', file('empty.json', [])],
        /empty\.json contient un tableau vide : aucun problème pour tiles\n$/,
      ],
      [['preset', 'nope', '--lang', 'fr'], /^attention-explorer: pas de préréglage « nope » ; les préréglages sont 000, /],
    ];
    for (const [args, want] of cases) {
      const r = run(args);
      assert.equal(r.code, 1, args.join(' '));
      if (typeof want === 'string') assert.equal(r.stderr, `${want}`, args.join(' '));
      else assert.match(r.stderr, want, args.join(' '));
    }
    const stdin = run(['run', '--lang', 'fr', '-'], '{');
    assert.match(stdin.stderr, /^attention-explorer: l’entrée standard n’est pas du JSON valide : /);
    // The examples' list: their titles in the language, English's (presets.js's) without --lang.
    const list = run(['preset', '--lang', 'fr']).stdout.split('\n');
    assert.equal(list[0], `000          ${fr['example.000.title']}`);
    assert.notEqual(run(['preset']).stdout.split('\n')[0], list[0]);
  });

  test('bad usage: 2 and a usage line', () => {
    for (const args of [
      [],
      ['frobnicate'],
      ['run', '--tabel'],
      ['run', 'a.json', 'b.json'],
      ['run', '--digits', 'x'],
      ['run', '--digits'],
      ['run', '--digits', '-3'],
      ['run', '--table=yes'],
    ]) {
      const r = run(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /\nusage: attention-explorer run /, args.join(' '));
      assert.equal(r.stdout, '');
    }
  });

  test('--help and --version', () => {
    const help = run(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^usage: attention-explorer run \[--table\]/);
    assert.match(help.stdout, /Exit status: 0 success, 1 bad input/);
    const version = run(['--version']);
    assert.equal(version.code, 0);
    assert.equal(version.stdout, '0.1.0\n');
  });

  test('preset lists the presets', () => {
    const r = run(['preset']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^000 +Seed 000/);
  });
});
