// The schema checker's reasons (web/lib/schema.js, the formats of formats.js) as messages: every
// phrase an id in every catalogue, English as it was (samples of bad values, their English taken
// from the checker before its phrases were messages), and any language's own words for a damaged
// link's and a lesson file's reason, naming the field verbatim.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { dist, repo } from './helpers.mjs';

const schema = await import(`${dist}schema.js`);
const formats = await import(`${dist}formats.js`);
const { LANGUAGES, english, loadTranslator } = await import(`${dist}i18n.js`);

const catalogue = (code) => JSON.parse(readFileSync(join(repo, 'web/lib/locales', `${code}.json`), 'utf8'));

test('every schema phrase id is in English and in every catalogue', () => {
  const source = ['schema.js', 'formats.js', 'lesson.js', 'component.js']
    .map((f) => readFileSync(join(repo, 'web/lib', f), 'utf8'))
    .join('\n');
  const en = catalogue('en');
  const ids = new Set(Object.keys(en).filter((id) => id.startsWith('schema.')));
  // phrase('name') in schema.js, and the number ranges it names with a template
  for (const [, name] of source.matchAll(/phrase\('([\w.-]+)'/g)) ids.add(`schema.${name}`);
  // say('name') in formats.js
  for (const [, name] of readFileSync(join(repo, 'web/lib/formats.js'), 'utf8').matchAll(/\bsay\('([\w.-]+)'/g))
    ids.add(`schema.format.${name}`);
  for (const from of ['above', 'from']) for (const to of ['', '-to']) ids.add(`schema.expected.number-${from}${to}`);
  for (const id of ['lesson.invalid', 'lesson.not-json', 'component.attribute.invalid', 'schema.expected.number-at-most']) ids.add(id);
  assert.ok(ids.size > 30, `${ids.size} ids`);
  for (const code of Object.keys(LANGUAGES)) {
    const messages = catalogue(code);
    for (const id of ids) assert.equal(typeof messages[id], 'string', `${code} lacks ${id}`);
  }
});

// [schema (code, its English), value, the English before the phrases were messages]
const GENERIC = [
  ['string({ max: 1 })', 'ab', 'the value is a string of 2 characters; expected at most 1 character'],
  ['string({ max: 3 })', 'a'.repeat(12345), 'the value is a string of 12,345 characters; expected at most 3 characters'],
  ['list(whole(), { min: 1, max: 3 })', [], 'the value is an empty list; expected at least 1 item'],
  ['list(whole(), { max: 1 })', [1, 2, 3], 'the value is a list of 3 items; expected at most 1 item'],
  ['record(string(), whole(), { max: 1 })', { a: 1, b: 2 }, 'the value is an object of 2 entries; expected at most 1 entry'],
  ['whole({ min: 1, max: 20000 })', 0, 'the value is 0; expected a whole number from 1 to 20,000'],
  ['number({ above: 0 })', -1, 'the value is -1; expected a number above 0'],
  ['nullable(number({ max: 3 }))', 'x', 'the value is "x"; expected a number at most 3 or null'],
  [
    'tuple([string(), whole(), nullable(boolean())])',
    [1],
    'the value is a list of 1 item; expected a list of 3 (a string, a whole number from 0, true or false or null)',
  ],
  ['literal(["a", 2, true])', 'b', 'the value is "b"; expected one of "a", 2, true'],
  ['json({ maxDepth: 1 })', [[[1]]], '[0][0] nests deeper than 1 levels'],
  ['json({ max: 1 })', { a: 1, b: 2 }, 'the value is an object; expected at most 1 entry'],
  ['object({ a: whole(), "b c": string() }, { unknown: "refuse" })', { d: 1 }, 'unknown field "d"; expected "a", "b c"'],
  ['object({ in: object({ q: whole() }, { unknown: "refuse" }) })', { in: { r: 1 } }, 'in: unknown field "r"; expected "q"'],
  ['record(string({ pattern: /^a/ }), whole())', { b: 1 }, 'the value has the key "b"; expected keys that are a string'],
  ['string({ max: 10 })', 'x'.repeat(10_001), 'the value is a string of 10,001 characters; expected at most 10 characters'],
  ['string()', undefined, 'the value is missing; expected a string'],
  ['list(whole())', { a: 1 }, 'the value is an object; expected a list, each a whole number from 0'],
];

const schemaOf = (code) =>
  new Function('S', `const { string, number, whole, boolean, literal, list, tuple, object, record, json, nullable } = S; return ${code};`)(
    schema,
  );

test("the schema checker's English is as it was (generic schemas, singular and plural, large numbers)", () => {
  for (const [code, value, before] of GENERIC) {
    const s = schemaOf(code);
    const { error, message } = schema.check(s, value);
    assert.equal(error, before, code);
    assert.equal(english.message(message), before, code);
  }
  assert.equal(schema.show('x'.repeat(50)), 'a string of 50 characters ("xxxxxxxxxxxxxxxxxxxxxxxx"…)');
  assert.equal(schema.expected(schemaOf('nullable(whole({ min: 1, max: 20000 }))')), 'a whole number from 1 to 20,000 or null');
});

// Bad values made from the formats' schemas (tests/js/arbitraries.mjs damaged, seed 1) and their English then.
const SAMPLES = [
  [
    'paperSchema',
    { v: 2, salt: '', tolerance: 1.1845969658421052e-135, decimals: 11, seed: 861715, kdf: { N: 32, r: 8, p: 4 }, steps: [] },
    'salt is ""; expected a string',
  ],
  [
    'paperSchema',
    { v: 2, salt: null, tolerance: 999999.9999999994, decimals: 5, about: '', seed: 35551, kdf: { N: 65536, r: 3, p: 2 }, steps: [] },
    'salt is null; expected a string',
  ],
  [
    'paperSchema',
    { v: 2, tolerance: 3.6173267959731186e-88, decimals: 6, about: '', kdf: { N: 16384, r: 7, p: 2 }, steps: [] },
    'salt is missing; expected a string',
  ],
  [
    'paperSchema',
    { v: 1, salt: {}, tolerance: 4.436270802541231e-227, decimals: 9, about: '', seed: 780293, given: [], steps: [] },
    'salt is an object; expected a string',
  ],
  [
    'exerciseSchema',
    {
      steps: [],
      cells: {
        'hJtL1:-3485': [
          [625803, 796428],
          [696653, 57954],
        ],
        '__zU58kdeZ:3': [[62601, 28742]],
        'TC915__L5:-99754': [[766919, 712586]],
      },
      tolerance: -5e-323,
      seed: 3,
    },
    'steps is an empty list; expected at least 1 item',
  ],
  [
    'exerciseSchema',
    {
      steps: ['k_E22:-18615500', '_52w_13P:-833967', '_z___7RI:-993'],
      cells: { replace: '' },
      tolerance: -999999.9999999994,
      seed: 999985,
      teacher: false,
    },
    'cells has the key "replace"; expected keys that are a step key "id:head" like "weights:0" (head -1 for a step without heads)',
  ],
  [
    'exerciseSchema',
    { steps: ['W_9_9if:59467', 'nI53YG1U:-8738', [[{}]]], tolerance: 1.975025543528416e-179, seed: 4, teacher: false },
    'steps[2] is a list of 1 item; expected a step key "id:head" like "weights:0" (head -1 for a step without heads)',
  ],
  [
    'exerciseSchema',
    { cells: {}, seed: 999995, teacher: false },
    'steps is missing; expected a list, each a step key "id:head" like "weights:0" (head -1 for a step without heads)',
  ],
  [
    'pageOptionsSchema',
    {
      layout: 'rows',
      scale: 'none',
      causal: false,
      mask: 'keep',
      keepMask: [[true, true, true], [true]],
      softcap: 7e-323,
      heads: 0.5,
      kv_heads: 1019,
      precision: 'float64',
    },
    'heads is 0.5; expected a whole number from 1 to 4096',
  ],
  [
    'pageOptionsSchema',
    {
      scale: 'sqrt_dk',
      scaleCustom: null,
      mask: 'none',
      keepMask: [[false, true], []],
      additiveMask: '',
      softcap: 9.4454958585729e-147,
      heads: 247,
      kv_heads: 3847,
      precision: 'float64',
    },
    'scaleCustom is null; expected a string',
  ],
  [
    'pageOptionsSchema',
    { scale: 'custom', causal: true, mask: 'additive', additiveMask: '', softcap: {}, heads: 1487, kv_heads: 4073, precision: 'float64' },
    'softcap is an object; expected a number',
  ],
  [
    'pageOptionsSchema',
    {
      layout: 'rows',
      scaleCustom: [],
      causal: true,
      keepMask: [[0, false], [false], [1, 1, 1, true], [0]],
      softcap: 4.539859142612493e-265,
      heads: 11,
      kv_heads: 326,
      precision: 'float32',
    },
    'scaleCustom is an empty list; expected a string',
  ],
  [
    'embedFlagsSchema',
    { embed: 'true', lesson: [[{}]], hide: ['Q_C'], lock: [] },
    'lesson is a list of 1 item; expected an address (1 to 4,096 characters)',
  ],
  [
    'embedFlagsSchema',
    { embed: '0', present: -1, hide: ['O_latent', 'O_latent', 'Q_normed', 'step:K_cache'], lock: [] },
    'present is -1; expected a string',
  ],
  [
    'embedFlagsSchema',
    { embed: 'true', lesson: -2.5e-323, lock: ['W_QR'] },
    'lesson is -2.5e-323; expected an address (1 to 4,096 characters)',
  ],
  [
    'embedFlagsSchema',
    {
      embed: '0',
      present: '',
      lesson: { 73: false, 'gV~': '%MD2XcHGg', aY5: 'z', X: '!6w', Pr1LqD: '', 'K^)`4)]nWE': null },
      hide: ['step:Q_rot', 'concat'],
      lock: [],
    },
    'lesson is an object; expected an address (1 to 4,096 characters)',
  ],
  [
    'componentAttributesSchema',
    {
      lesson: '',
      steps: ['Q', 'normalizer'],
      editable: [],
      heads: [2857, 535, 2],
      'wasm-url': {
        'R#Db&=': '>',
        b: ['?|^xoN', false, false, 'Ya', true, 1.0926601759752777e-237, -1.3447355841489843e184],
        'z&AS': 'x:7+.]jbIw',
      },
    },
    '["wasm-url"] is an object; expected a string',
  ],
  [
    'componentAttributesSchema',
    { preset: '', steps: ['K_normed'], inputs: [], editable: [null, 'K', 'W_G', 'X_kv'], decimals: 1, heads: [3900, 15], 'wasm-url': '' },
    'editable[0] is null; expected an input name (Q, X, W_Q, …) or all',
  ],
  [
    'componentAttributesSchema',
    {
      state: '\u0013',
      steps: ['K_normed'],
      inputs: ['b_Q', {}],
      editable: ['past_k_R', 'b_G', 'b_Q', 'past_K'],
      heads: [1483, 2342, 3369, 805],
    },
    'inputs[1] is an object; expected an input name (Q, X, W_Q, …) or all',
  ],
  [
    'componentAttributesSchema',
    {
      state: '',
      steps: ['rope_angles', 'scaled', 'scores_R'],
      inputs: [false, 'b_O'],
      editable: ['W_UQ'],
      heads: [2544, 3304],
      'wasm-url': '',
    },
    'inputs[0] is false; expected an input name (Q, X, W_Q, …) or all',
  ],
  [
    'playgroundChangesSchema',
    {
      model: { layers: 1, heads: 1, d_model: 78, mlp: 105, positions: 'learned', norm: 'none' },
      optimizer: { lr: [0, ' VNgV4Qj', null, null, '{#!!', -3.6409587418458176e-213] },
      steps: 2,
    },
    'optimizer.lr is a list of 6 items; expected a number from 0.0001 to 0.1',
  ],
  [
    'playgroundChangesSchema',
    {
      model: { layers: 3, heads: 5, d_model: 79, mlp: 479, norm: 'layernorm', x1682347484: [false, [false], -1.5621596346614387e-145] },
      optimizer: { lr: 0.00010000000000000006 },
      seed: 999989,
      steps: 19986,
    },
    'model: unknown field "x1682347484"; expected "layers", "heads", "d_model", "mlp", "positions", "norm"',
  ],
  [
    'playgroundChangesSchema',
    {
      model: { layers: 1, heads: 4, d_model: 42, mlp: 152, positions: 'rope', norm: 'layernorm' },
      optimizer: { lr: 0.09999999999999995 },
      seed: 182733,
      steps: 10765,
      x502730598: 1e308,
    },
    'unknown field "x502730598"; expected "model", "optimizer", "seed", "steps"',
  ],
  [
    'playgroundChangesSchema',
    {
      model: { layers: 2, heads: 5, d_model: 6, mlp: 512, positions: 'none' },
      optimizer: { lr: 0.09999999999999983 },
      seed: 869535,
      steps: 121,
      x1103633529: 5.584406138238291e-139,
    },
    'unknown field "x1103633529"; expected "model", "optimizer", "seed", "steps"',
  ],
  [
    'playgroundWeightsSchema',
    {
      model: ['=?E:', false, '<n', 'c4}-hv%yW', false, true],
      config: [1.4231892366221705e-52, false, false, -3.419784131730663e-294, true, null, true, -4.323254404430746e-198, '&StoString', ''],
      step: 999981,
    },
    'weights is missing; expected an object',
  ],
  [
    'playgroundWeightsSchema',
    { model: '{', weights: [[{}]], config: { '\\T%': { 'r`': '.', ':\\nz~': null, 't-': true } }, step: 470138 },
    'weights is a list of 1 item; expected an object',
  ],
  [
    'playgroundWeightsSchema',
    {
      model: -7.237212772068307e122,
      weights: {},
      step: {
        9: '[DSbm',
        '3K&r#': true,
        '1.IF2A.;M': null,
        "m'Z*Xc8": 7.157982201232696e-216,
        ' `': 'lBOd*:q',
        'j8My6lr"t': null,
        '': -1.5070030324133447e81,
      },
    },
    'step is an object; expected a whole number from 0 to 1,000,000',
  ],
  [
    'playgroundWeightsSchema',
    {
      model: null,
      weights: {},
      config: { '>': 'MXFdZN*i', '~?': [' GkbL4$+%z', true] },
      step: [[], [null, 'W&PvuL', null, true, null, null, null, '', true, 1.3110294811852826e-142]],
    },
    'step is a list of 2 items; expected a whole number from 0 to 1,000,000',
  ],
  [
    'lessonFileSchema',
    {
      title: '',
      lang: 'es',
      problem: {},
      lesson: {
        replace: {
          7: true,
          ']*Y\\w': false,
          'Ql#ZqJ|IGM': '{Tx+G',
          'O(`R#Db&': null,
          '(': 'wbnps6?|^',
          oNayX: false,
          Ya: true,
          '.rl-8tz&A': '*!x',
        },
      },
    },
    'step "replace": not a step key; expected "id:head" like "weights:0" (head -1 for a step without heads)',
  ],
  [
    'lessonFileSchema',
    { format: 'attention-explorer lesson', version: 1, title: 1.224300783928862e-278, problem: {}, tokens: {} },
    '"title" must be a string',
  ],
  [
    'lessonFileSchema',
    { format: 'attention-explorer lesson', version: 1, lang: 'ko', problem: {}, lesson: '' },
    '"lesson" must be an object of notes keyed by step ("weights:0": { "say": ..., "ask": ... })',
  ],
  [
    'lessonFileSchema',
    { format: 'attention-explorer lesson', version: 1, lang: 'en', problem: {}, tokens: { q: 0.5 } },
    'tokens.q must be a list of names (strings)',
  ],
];

test("the formats' English is as it was (samples of damaged values)", () => {
  for (const [name, value, before] of SAMPLES) {
    const { error, message } = schema.check(formats[name], value);
    assert.equal(error, before, name);
    assert.equal(english.message(message), before, name);
  }
});

test("a damaged link's reason in French and Arabic, the field named verbatim", async () => {
  const link = formats.checkLinkState({ inputs: { Q: 'abc' } });
  assert.equal(link.error, english('link.damaged.field', { reason: link.reason }));
  assert.equal(link.reason, 'inputs.Q is "abc"; expected an object');
  for (const code of ['fr', 'ar']) {
    const t = await loadTranslator(code);
    const words = t.message(link.message);
    assert.ok(!words.includes('{'), words);
    assert.ok(!/\bexpected\b|\bthe value\b/.test(words), `${code} in English: ${words}`);
    assert.ok(words.includes('inputs.Q') && words.includes('"abc"'), `${code}: ${words}`);
  }
});

test("a lesson file's reason in French and Arabic: the file, the step and the field named verbatim", async () => {
  const { readLesson } = await import(`${dist}lesson.js`);
  const { errorWords } = await import(`${dist}i18n.js`);
  const reading = (obj) => {
    try {
      readLesson(JSON.stringify(obj), 'maths.json');
    } catch (error) {
      return error;
    }
    throw new Error('read');
  };
  const cases = [
    [
      { problem: { Q: [[1]] }, lesson: { 'weights:0': { say: 3 } } },
      'maths.json: step "weights:0": "say" must be a string',
      ['"weights:0"', '"say"'],
    ],
    [{ problem: { Q: [[1]] }, lang: 'xx' }, '"lang" is "xx"; expected a language code', ['"lang"', '"xx"', 'zh-CN']],
    [{ problem: 5 }, `maths.json: "problem" is 5; expected the problem's inputs`, ['"problem"', '5', '"Q"']],
    [
      { problem: {}, lesson: { 'weights:0': { answer: { kind: 'key', row: 1 } } } },
      'an "answer" needs the question it answers ("ask")',
      ['"answer"', '"ask"'],
    ],
  ];
  for (const [obj, english, names] of cases) {
    const error = reading(obj);
    assert.ok(error.message.includes(english), error.message);
    assert.equal(errorWords(error), error.message);
    for (const code of ['fr', 'ar']) {
      const words = errorWords(error, await loadTranslator(code));
      assert.ok(!/\{[a-z_]+\}/.test(words), `${code}: a placeholder left in ${words}`);
      assert.notEqual(words, error.message);
      assert.ok(!/\bexpected\b|\bmust be\b|\bneeds\b/.test(words), `${code} in English: ${words}`);
      for (const name of ['maths.json', ...names]) assert.ok(words.includes(name), `${code}: ${words} names ${name}`);
    }
  }
});

test("a playground link's and lesson's reasons in French and Arabic, the parts and fields named verbatim", async () => {
  const state = await import(`${dist}playground-state.js`);
  const catalogue = { presets: [{ name: 'induction' }, { name: 'previous' }] };
  const link = state.readLink('#p=nope&c={"model":{"layers":2,"evil":"<img>"}}&step=abc', catalogue);
  const lesson = state.readPlaygroundLesson('{"format": "attention-explorer lesson", "preset": "x"}', catalogue, 'a.json');
  assert.equal(english.message(link.message), link.error);
  assert.equal(english.message(lesson.message), lesson.error);
  for (const code of ['fr', 'ar']) {
    const t = await loadTranslator(code);
    const words = [t.message(link.message), t.message(lesson.message)];
    for (const w of words) assert.ok(!/\{[a-z_]+\}|\bexpected\b|\bunknown field\b/.test(w), `${code}: ${w}`);
    for (const name of ['"nope"', 'c=', 'step=', '"evil"', '"abc"', 'model'])
      assert.ok(words[0].includes(name), `${code}: ${words[0]} names ${name}`);
    for (const name of ['a.json', 'format', '"attention-explorer playground lesson"'])
      assert.ok(words[1].includes(name), `${code}: ${words[1]}`);
  }
});

test("a lesson's notes that do not fit the trace: English as before, French and Arabic naming the step", async () => {
  const { loadAttention, presetProblem, findPreset } = await import(`${dist}node.js`);
  const { lessonTraceError, lessonTraceMessage } = await import(`${dist}lesson.js`);
  const engine = await loadAttention();
  const trace = engine.run(presetProblem(findPreset('lookup'), engine).problem);
  const lessons = [{ 'nope:0': {} }, { 'output:-1': { ask: '?', answer: { kind: 'number', row: 99, col: 1, tolerance: 0 } } }];
  assert.match(lessonTraceError(lessons[0], trace, 'f.json'), /^f\.json: step "nope:0": this problem has no such step \(its steps: /);
  assert.match(lessonTraceError(lessons[1], trace, 'f.json'), /^f\.json: step "output:-1": answer\.row is 99, but Output has \d+ rows$/);
  for (const code of ['fr', 'ar']) {
    const t = await loadTranslator(code);
    for (const lesson of lessons) {
      const words = t.message(lessonTraceMessage(lesson, trace, 'f.json'));
      assert.notEqual(words, lessonTraceError(lesson, trace, 'f.json'));
      assert.ok(!/\{[a-z_]+\}|\bthis problem\b|\bbut\b/.test(words), `${code}: ${words}`);
      assert.ok(words.includes('f.json') && words.includes(`"${Object.keys(lesson)[0]}"`), `${code}: ${words}`);
    }
  }
});

test("share.js's state errors: English as before, a message id for any language, the field kept", async () => {
  const { loadAttention } = await import(`${dist}node.js`);
  const { stateToProblem } = await import(`${dist}share.js`);
  const { errorWords } = await import(`${dist}i18n.js`);
  const engine = await loadAttention();
  const eye = '1 0\n0 1';
  const state = (o) => ({
    mode: 'self',
    use: { bias: true },
    inputs: Object.fromEntries(
      Object.entries({ X: eye, W_Q: eye, W_K: eye, W_V: eye, b_Q: '1 2', b_K: '1 2', b_V: '1 2', ...o }).map(([k, v]) => [k, { text: v }]),
    ),
  });
  const cases = [
    [state({ b_K: '1 2\n3 4' }), 'b_K is 2x2: a bias is one row or one column of numbers', 'b_K'],
    [state({ W_V: '' }), 'W_V is missing from the state', 'W_V'],
  ];
  for (const [s, english, field] of cases) {
    const error = (() => {
      try {
        stateToProblem(s, engine);
      } catch (e) {
        return e;
      }
    })();
    assert.equal(error.message, english);
    assert.equal(error.field, field);
    for (const code of ['fr', 'ar']) {
      const words = errorWords(error, await loadTranslator(code));
      assert.notEqual(words, english);
      assert.ok(words.includes(field) && !/\{[a-z_]+\}/.test(words), `${code}: ${words}`);
    }
  }
});
