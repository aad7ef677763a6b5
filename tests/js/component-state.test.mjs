// <attention-explorer>'s state and actions (web/lib/component-state.js), without a browser:
//   node --test tests/js/component-state.test.mjs        (needs dist/)
// A load clears the reader's answers and redraws the inputs; an edit changes one number and keeps
// the inputs; a bad edit keeps the last good problem and its trace; a load error drops the trace;
// the store redraws a view only when its part changed.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

const { answered, attributeSet, edited, failed, initialComponent, loaded, problemSet, status, withCell } = await import(
  `${dist}component-state.js`
);
const { createStore } = await import(`${dist}store.js`);

const problem = {
  Q: [
    [1, 0],
    [0, 1],
  ],
  K: [
    [1, 0],
    [0, 1],
  ],
  V: [
    [1, 2],
    [3, 4],
  ],
  options: { bias: [0.5, -0.5] },
};
const trace = { steps: [], meta: {} };

test('a load: the problem, its names and notes, a new count, no answers or error', () => {
  const s0 = answered(failed(initialComponent(), 'boom'), 'weights:0', { right: true, reason: 'yes' });
  const s = loaded(s0, { problem, tokens: { q: ['a', 'b'] }, title: 'T', lesson: { 'weights:0': { ask: '?' } } }, trace);
  assert.deepEqual(
    { ...s, problem: null },
    {
      ...initialComponent(),
      problem: null,
      tokens: { q: ['a', 'b'] },
      title: 'T',
      lesson: { 'weights:0': { ask: '?' } },
      loaded: 1,
      trace,
    },
  );
  assert.deepEqual(s0.verdicts, { 'weights:0': { right: true, reason: 'yes' } });
  assert.equal(loaded(s, s, trace).loaded, 2, 'a load of the problem it has (no source) counts too');
});

test('the problem property: token names and a lesson belong to the old problem', () => {
  const s = problemSet(loaded(initialComponent(), { problem, tokens: { q: ['a'] }, title: 'T', lesson: {} }, trace), { ...problem }, null);
  assert.equal(s.tokens, null);
  assert.equal(s.lesson, null);
  assert.equal(s.title, 'T');
  assert.equal(s.loaded, 2);
  assert.equal(s.trace, null);
});

test("an edit: one number changed in a copy, the inputs' count kept; a bad one keeps the trace", () => {
  const s = loaded(initialComponent(), { problem }, trace);
  const next = withCell(problem, 'Q', 1, 0, -2.5);
  assert.deepEqual(next.Q, [
    [1, 0],
    [-2.5, 1],
  ]);
  assert.deepEqual(
    problem.Q,
    [
      [1, 0],
      [0, 1],
    ],
    'the old problem is unchanged',
  );
  assert.equal(next.K, problem.K, 'the other inputs are shared, not copied');
  assert.deepEqual(withCell(problem, 'V', 0, 1, 7).V, [
    [1, 7],
    [3, 4],
  ]);
  const t2 = { steps: [1], meta: {} };
  const e = edited(failed(s, 'x', true), next, t2);
  assert.equal(e.loaded, 1);
  assert.equal(e.trace, t2);
  assert.equal(e.error, null);
  const bad = failed(e, 'Q row 1, column 1: "x" is not a number', true);
  assert.equal(bad.trace, t2, 'a bad edit keeps the trace');
  assert.deepEqual(bad.error, { message: 'Q row 1, column 1: "x" is not a number', keep: true });
  assert.equal(failed(e, 'no').trace, null, 'a failed load has no trace');
});

test('vector inputs are one row', () => {
  const p = { Q: [[1]], K: [[1]], V: [[1]], b: [1, 2, 3] };
  assert.deepEqual(withCell(p, 'b', 0, 2, 9).b, [1, 2, 9]);
});

test('the store redraws a view when its part changed: an attribute, an answer, not the same text again', () => {
  const store = createStore(loaded(initialComponent(), { problem }, trace), { schedule: () => {} });
  const drawn = [];
  store.subscribe(
    (s) => [s.loaded, s.attributes.inputs],
    ([n, inputs]) => drawn.push(`frame ${n} ${inputs}`),
  );
  store.subscribe(
    (s) => [s.trace, s.verdicts, s.attributes.steps],
    () => drawn.push('steps'),
  );
  store.subscribe(
    (s) => s.status,
    (t) => drawn.push(t),
  );
  store.dispatch(attributeSet, 'steps', 'weights');
  store.dispatch(answered, 'weights:0', { right: false, reason: 'no' });
  store.flush();
  assert.equal(store.dispatch(attributeSet, 'steps', 'weights'), store.get(), 'the same text: the same state');
  store.dispatch(attributeSet, 'inputs', 'Q');
  store.dispatch(status, 'Loading the lesson from x…');
  store.flush();
  assert.deepEqual(drawn, [
    'frame 1 undefined',
    'steps',
    'Loading the attention engine…',
    'steps',
    'frame 1 Q',
    'Loading the lesson from x…',
  ]);
});
