// The playground's store and actions in Node (no browser): one redraw per frame, views that redraw
// only when their part changes, milestones and the preset's question revealed by the run, the
// link's round trip and its damaged parts, the probe's parsing. The catalogue is the model
// module's own (engine.modelCatalogue()).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { dist } from './helpers.mjs';

const { loadAttention } = await import(`${dist}node.js`);
const { createStore } = await import(`${dist}store.js`);
const state = await import(`${dist}playground-state.js`);
// A reveal's or an error's English words (its message, for the views' languages: tests/js/i18n.test.mjs).
const english = (r) => r && Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'message'));

describe('createStore', () => {
  test('actions batch into one redraw; a view redraws only when its part changes', () => {
    const frames = [];
    const store = createStore({ a: 1, b: [1] }, { schedule: (redraw) => frames.push(redraw) });
    const drawn = { a: [], b: [] };
    store.subscribe(
      (s) => s.a,
      (a) => drawn.a.push(a),
    );
    store.subscribe(
      (s) => [s.b, s.a > 10],
      ([b]) => drawn.b.push(b.length),
    );
    assert.deepEqual(drawn, { a: [1], b: [1] });
    store.dispatch((s) => ({ ...s, a: 2 }));
    store.dispatch((s) => ({ ...s, a: 3 }));
    store.dispatch((s) => s); // no change: no frame
    assert.equal(frames.length, 1, 'two changes, one frame');
    frames.shift()();
    assert.deepEqual(drawn, { a: [1, 3], b: [1] }, 'a drawn once with its last value; b untouched');
    store.dispatch((s) => ({ ...s, b: [...s.b, 2] }));
    frames.shift()();
    assert.deepEqual(drawn.b, [1, 2]);
  });
});

describe("the playground's actions", () => {
  let catalogue;
  before(async () => {
    const engine = await loadAttention({ walkthroughs: false });
    catalogue = engine.modelCatalogue();
  });

  test('a preset starts idle at step 0 with its configuration and example as the probe', () => {
    const s = state.initialState(catalogue, 'induction');
    const preset = catalogue.presets.find((p) => p.name === 'induction');
    assert.deepEqual(s.config, preset.config);
    assert.deepEqual(s.probe, preset.example.tokens);
    assert.equal(s.status, 'idle');
    assert.equal(state.play(s).status, 'playing');
    assert.equal(state.pause(state.play(s)).status, 'paused');
  });

  test("training to the end is done; a link's target pauses there", () => {
    let s = state.play(state.initialState(catalogue, 'previous'));
    s = state.trained(s, [1, 2], 2);
    assert.equal(s.step, 2);
    assert.deepEqual(s.losses, [1, 2]);
    s = state.trained(s, new Array(398).fill(0.5), 400);
    assert.equal(s.status, 'done');
    let r = state.replayTo(state.initialState(catalogue, 'previous'), 30);
    assert.equal(r.status, 'replaying');
    r = state.trained(r, new Array(30).fill(1), 30);
    assert.equal(r.status, 'paused');
    assert.equal(r.target, null);
  });

  test('a head passing a threshold is announced once, and reveals the question', () => {
    let s = state.answered(state.initialState(catalogue, 'induction'), 0, 'layer 2');
    const scores = (induction) => [
      { layer: 1, head: 1, previous_token: 0.9, induction: 0.01, duplicate_token: 0, first_token: 0.1, ablated_loss: 3 },
      { layer: 2, head: 2, previous_token: 0.1, induction, duplicate_token: 0, first_token: 0.1, ablated_loss: 3 },
    ];
    s = state.measured({ ...s, step: 100 }, { step: 100, evaluation: { loss: 3, accuracy: 0.1 }, scores: scores(0.2), prediction: null });
    assert.deepEqual(
      s.milestones.map((m) => m.text),
      ['layer 1 head 1 became a previous-token head at step 100'],
    );
    assert.deepEqual(s.revealed, [null], 'no induction head yet');
    s = state.measured({ ...s, step: 430 }, { step: 430, evaluation: { loss: 2, accuracy: 0.9 }, scores: scores(0.6), prediction: null });
    s = state.measured({ ...s, step: 500 }, { step: 500, evaluation: { loss: 2, accuracy: 0.9 }, scores: scores(0.7), prediction: null });
    assert.deepEqual(
      s.milestones.map((m) => m.text),
      ['layer 1 head 1 became a previous-token head at step 100', 'layer 2 head 2 became an induction head at step 430'],
    );
    assert.deepEqual(s.revealed.map(english), [
      { answer: 'layer 2', text: 'It was layer 2: layer 2 head 2 became an induction head at step 430.' },
    ]);
    assert.deepEqual(s.answers, ['layer 2']);
    assert.equal(s.evals.length, 3);
  });

  test('a yes/no question is answered no only when the run ends below the threshold', () => {
    let s = state.initialState(catalogue, 'induction-1-layer');
    s = state.measured({ ...s, step: 100 }, { step: 100, evaluation: { loss: 3, accuracy: 0.3 }, scores: [], prediction: null });
    assert.deepEqual(s.revealed, [null]);
    s = state.measured(
      { ...s, step: s.config.steps },
      { step: s.config.steps, evaluation: { loss: 3, accuracy: 0.42 }, scores: [], prediction: null },
    );
    assert.deepEqual(s.revealed.map(english), [{ answer: 'no', text: 'No: after 1500 steps the accuracy is at most 42%.' }]);
  });

  test('switching heads off and on', () => {
    let s = state.initialState(catalogue, 'induction');
    s = state.toggleAblation(s, 2, 1);
    s = state.toggleAblation(s, 1, 2);
    assert.deepEqual(s.ablated, [
      [2, 1],
      [1, 2],
    ]);
    s = state.toggleAblation(s, 2, 1);
    assert.deepEqual(s.ablated, [[1, 2]]);
  });

  test('a changed field restarts the run with the new model', () => {
    let s = state.trained(state.play(state.initialState(catalogue, 'induction')), [3, 2], 2);
    s = state.setModelField(s, 'layers', 1);
    assert.equal(s.config.model.layers, 1);
    assert.equal(s.step, 0);
    assert.equal(s.status, 'idle');
    s = state.setModelField(s, 'heads', 4);
    assert.equal(s.config.model.kv_heads, 4);
    assert.equal(s.config.model.d_head, undefined, 'd_head follows d_model/heads again');
  });

  test('a link holds what differs from the preset and the step, and reads back', () => {
    let s = state.initialState(catalogue, 'induction');
    s = state.setModelField(s, 'layers', 1);
    s = state.setTrainingField(s, 'seed', 7);
    s = state.trained(s, [1, 1, 1], 3);
    const hash = state.linkOf(s);
    assert.equal(hash, `#p=induction&c=${encodeURIComponent(JSON.stringify({ model: { layers: 1 }, seed: 7 }))}&step=3`);
    const back = state.readLink(hash, catalogue);
    assert.deepEqual(back, { preset: 'induction', overrides: { model: { layers: 1 }, seed: 7 }, step: 3, error: null });
    const again = state.initialState(catalogue, back.preset, back.overrides);
    assert.equal(again.config.model.layers, 1);
    assert.equal(again.config.seed, 7);
    assert.equal(state.linkOf(state.trained(again, [1, 1, 1], 3)), hash);
  });

  test('a damaged link keeps its good parts and names the bad ones (formats.js schemas)', () => {
    const r = state.readLink('#p=nope&c={"model":{"layers":2,"evil":"<img>"}}&step=abc', catalogue);
    assert.equal(r.preset, catalogue.presets[0].name);
    assert.deepEqual(r.overrides, {});
    assert.equal(r.step, 0);
    assert.equal(
      r.error,
      'This link was partly damaged and those parts were left out: no preset "nope" (the presets are ' +
        `${catalogue.presets.map((p) => p.name).join(', ')}); the changes (c=): model: unknown field "evil"; expected "layers", "heads", "d_model", "mlp", ` +
        '"positions", "norm"; step=: "abc" is not a whole number.',
    );
    const good = state.readLink('#p=previous&c={"model":{"layers":9}}&step=40', catalogue);
    assert.deepEqual([good.preset, good.step, good.overrides], ['previous', 40, {}]);
    assert.match(good.error, /the changes \(c=\): model\.layers is 9; expected a whole number from 1 to 4/);
    assert.match(state.readLink('#c=%7Bbroken', catalogue).error, /the changes \(c=\): not JSON/);
    assert.match(
      state.readLink('#step=2000000', catalogue).error,
      /step=: the value is 2000000; expected a whole number from 0 to 1,000,000/,
    );
    assert.equal(state.readLink('', catalogue).error, null);
  });

  test('a lesson file holds a preset, its changes and questions; a bad one is named', () => {
    let s = state.setTrainingField(state.initialState(catalogue, 'induction'), 'seed', 3);
    const lesson = {
      ...state.lessonOf(s, { title: 'Two layers', intro: 'Watch layer 2.' }),
      questions: [
        { choose: 'head', text: 'Which head looks one token back?', score: 'previous_token', threshold: 0.3 },
        { choose: 'yes_no', text: 'Above 50%?', accuracy: 0.5 },
      ],
    };
    assert.deepEqual(lesson.changes, { seed: 3 });
    const read = state.readPlaygroundLesson(JSON.stringify(lesson), catalogue, 'two.json');
    assert.deepEqual(read.lesson, lesson);
    s = state.openLesson(s, read.lesson);
    assert.equal(s.config.seed, 3);
    assert.equal(s.questions.length, 2);
    assert.deepEqual(s.lesson, { title: 'Two layers', intro: 'Watch layer 2.', changes: { seed: 3 } });
    // The lesson's own threshold (0.3) is looked for in every measurement.
    const scores = [{ layer: 1, head: 2, previous_token: 0.35, induction: 0, duplicate_token: 0, first_token: 0, ablated_loss: 1 }];
    s = state.measured({ ...s, step: 60 }, { step: 60, evaluation: { loss: 1, accuracy: 0.6 }, scores, prediction: null });
    assert.equal(s.revealed[0].answer, 'layer 1 head 2');
    assert.match(s.revealed[0].text, /previous-token score passed 0\.3 at step 60/);
    assert.deepEqual(english(s.revealed[1]), { answer: 'yes', text: 'Yes: the accuracy passed 50% at step 60.' });
    assert.equal(
      state.readPlaygroundLesson('{"format": "attention-explorer lesson", "preset": "x"}', catalogue, 'a.json').error,
      'a.json: format is "attention-explorer lesson"; expected "attention-explorer playground lesson"',
    );
    assert.match(
      state.readPlaygroundLesson(JSON.stringify({ ...lesson, preset: 'nope' }), catalogue, 'b.json').error,
      /b\.json: preset is "nope"; expected one of induction/,
    );
    assert.match(
      state.readPlaygroundLesson(
        JSON.stringify({ ...lesson, questions: [{ choose: 'layer', text: 'q', score: 'magic', threshold: 2 }] }),
        catalogue,
        'c.json',
      ).error,
      /c\.json: questions\[0\]\.score is "magic"/,
    );
    assert.match(state.readPlaygroundLesson('{', catalogue, 'd.json').error, /^d\.json is not JSON/);
  });

  test("a probe is read as tokens, or as characters of a text's alphabet", () => {
    assert.deepEqual(state.parseProbe('3, 1 4', { vocab: 8, context: 8 }), { tokens: [3, 1, 4] });
    assert.deepEqual(english(state.parseProbe('3 9', { vocab: 8, context: 8 })), {
      error: 'token 2, "9", is not a token: they are whole numbers from 0 to 7',
    });
    assert.deepEqual(english(state.parseProbe('1 2 3', { vocab: 8, context: 2 })), { error: '3 tokens, but the context holds 2' });
    assert.deepEqual(state.parseProbe('ab a', { alphabet: [' ', 'a', 'b'], context: 8 }), { tokens: [1, 2, 0, 1] });
    assert.match(state.parseProbe('abz', { alphabet: [' ', 'a', 'b'], context: 8 }).error, /"z" is not in the text's alphabet/);
  });
});
