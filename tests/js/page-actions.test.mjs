// The explorer page's actions (web/page/actions.js) and its store in Node, no browser: each action
// returns a new page value that replaces exactly what it changes (so a view subscribed to a part
// redraws when, and only when, that part changed), the state stays frozen, and a frame's actions
// give one redraw.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';

import { dist } from './helpers.mjs';

const actions = await import('../../web/page/actions.js');
const { defaultState } = await import('../../web/page/state.js');
const { createStore } = await import(`${dist}store.js`);

/** A page with Q, K, V typed in, as a loaded example has them. */
function example() {
  const state = defaultState();
  state.preset = 'lookup';
  state.recipe = 'np.random.seed(0)';
  state.mode = 'qkv';
  state.inputs = { Q: { text: '1 0' }, K: { text: '1 0\n0 1' }, V: { text: '1 2\n3 4' } };
  return actions.load(actions.initialPage(), state);
}

describe("the page's actions", () => {
  test('load: a whole new state, counted, with no result to reuse', () => {
    const page = { ...example(), result: { trace: {}, problem: {} }, errors: { Q: 'bad' } };
    const next = actions.load(page, defaultState());
    assert.equal(next.loaded, page.loaded + 1);
    assert.equal(next.result, null);
    assert.deepEqual(next.errors, {});
    assert.equal(next.state.mode, 'self');
  });

  test('editInput: that input replaced, the example marked edited, its recipe dropped; the rest shared', () => {
    const page = example();
    const next = actions.editInput(page, 'Q', { text: '0 1' });
    assert.deepEqual(next.state.inputs.Q, { text: '0 1' });
    assert.equal(next.state.edited, true);
    assert.equal(next.state.recipe, '');
    assert.equal(next.state.inputs.K, page.state.inputs.K, 'K is the same object');
    assert.equal(next.state.options, page.state.options, 'the options are the same object');
    assert.deepEqual(page.state.inputs.Q, { text: '1 0' }, 'the old state is unchanged');
    assert.deepEqual(actions.editInput(page, 'V', { text: '1', numpy: 'np.ones((1, 1))' }).state.inputs.V, {
      text: '1',
      numpy: 'np.ones((1, 1))',
    });
  });

  test('the state is frozen: a change written in place throws instead of going unseen', () => {
    const page = actions.editInput(example(), 'Q', { text: '2 2' });
    assert.throws(() => {
      page.state.inputs.Q.text = '3';
    }, TypeError);
    assert.throws(() => {
      page.state.options.heads = 2;
    }, TypeError);
    assert.throws(() => {
      page.state.collapsed.push('scores:0');
    }, TypeError);
  });

  test('setInputs keeps the recipe only for a transposition; fillInputs fills only what is missing, unedited', () => {
    const page = example();
    assert.equal(actions.setInputs(page, { Q: '1\n0' }).state.recipe, '');
    assert.equal(actions.setInputs(page, { Q: '1\n0' }, { keepRecipe: true }).state.recipe, 'np.random.seed(0)');
    assert.equal(actions.setInputs(page, {}), page, 'nothing to set: the same page');
    const filled = actions.fillInputs(page, { Q: 'ignored', W_O: '1 0\n0 1' });
    assert.deepEqual(filled.state.inputs.Q, { text: '1 0' });
    assert.deepEqual(filled.state.inputs.W_O, { text: '1 0\n0 1' });
    assert.equal(filled.state.edited, false);
    assert.equal(actions.fillInputs(page, { Q: 'x' }), page);
  });

  test('setOptions: undefined removes a key (links stay short), use flags likewise; a filled-in value is no edit', () => {
    let page = actions.setOptions(example(), { rope: { style: 'half' }, heads: 2 }, { cache: true });
    assert.deepEqual(page.state.options.rope, { style: 'half' });
    assert.equal(page.state.options.heads, 2);
    assert.equal(page.state.use.cache, true);
    assert.equal(page.state.edited, true);
    page = actions.setOptions(page, { rope: undefined }, { cache: undefined });
    assert.equal('rope' in page.state.options, false);
    assert.equal('cache' in page.state.use, false);
    assert.equal(actions.setOptions(example(), { additiveMask: '0 0' }, {}, { edit: false }).state.edited, false);
  });

  test("setMode: cross-attention starts with the queries' token names for the keys", () => {
    const page = actions.setTokens(example(), 'q', 'the cat');
    const cross = actions.setMode(page, 'cross');
    assert.equal(cross.state.mode, 'cross');
    assert.equal(cross.state.tokens.k, 'the cat');
    assert.equal(cross.state.recipe, '');
    assert.equal(actions.setMode(actions.setTokens(page, 'k', 'a b c'), 'cross').state.tokens.k, 'a b c');
  });

  test('openCell asks for the focus; toggleFolded folds and unfolds; clearPreset only when one is named', () => {
    const page = example();
    const open = actions.openCell(page, { step: 'weights', head: 0, row: 1, col: 0 }, true);
    assert.deepEqual(open.state.open, { step: 'weights', head: 0, row: 1, col: 0 });
    assert.equal(open.ui.focusOpen, true);
    assert.equal(open.state.inputs, page.state.inputs);
    assert.equal(actions.openCell(open, null).ui.focusOpen, false);
    const folded = actions.toggleFolded(page, 'scores:0');
    assert.deepEqual(folded.state.collapsed, ['scores:0']);
    assert.deepEqual(actions.toggleFolded(folded, 'scores:0').state.collapsed, []);
    const own = actions.clearPreset(page);
    assert.equal(own.state.preset, null);
    assert.equal(actions.clearPreset(own), own);
  });

  test('toggleKeep flips one cell of the keep-mask, a copy; out of range changes nothing', () => {
    const page = actions.setOptions(example(), {
      mask: 'keep',
      keepMask: [
        [1, 1],
        [1, 1],
      ],
    });
    const next = actions.toggleKeep(page, 0, 1);
    assert.deepEqual(next.state.options.keepMask, [
      [1, 0],
      [1, 1],
    ]);
    assert.deepEqual(page.state.options.keepMask, [
      [1, 1],
      [1, 1],
    ]);
    assert.equal(next.state.options.keepMask[1], page.state.options.keepMask[1], 'the untouched row is shared');
    assert.deepEqual(actions.toggleKeep(next, 0, 1).state.options.keepMask, [
      [1, 1],
      [1, 1],
    ]);
    assert.equal(actions.toggleKeep(page, 5, 0), page);
  });

  test("setLesson: no notes is null; the exercise's ui flags", () => {
    assert.equal(actions.setLesson(example(), {}).state.lesson, null);
    assert.deepEqual(actions.setLesson(example(), { 'weights:0': { say: 'Look' } }).state.lesson, { 'weights:0': { say: 'Look' } });
    const ui = actions.setChoosing(actions.setRevealed(example(), true), true).ui;
    assert.deepEqual({ ...ui, stepper: null, walk: null }, { revealed: true, choosing: true, focusOpen: false, stepper: null, walk: null });
  });

  test('the stepper: on, a step, questions revealed with their checked answers, a new lesson from its start', () => {
    const page = actions.stepTo(actions.stepThrough(example(), true), 3, 'weights:0');
    assert.deepEqual(page.ui.stepper, { on: true, index: 3, key: 'weights:0', revealed: [], verdicts: {} });
    const right = { right: true, reason: 'Yes: “sat” gives “cat” 0.62 of its weight.' };
    const answered = actions.revealStep(actions.revealStep(page, 'scores:0'), 'weights:0', right);
    assert.deepEqual(answered.ui.stepper.revealed, ['scores:0', 'weights:0']);
    assert.deepEqual(answered.ui.stepper.verdicts, { 'weights:0': right });
    assert.deepEqual(actions.revealStep(answered, 'weights:0').ui.stepper.revealed, ['scores:0', 'weights:0'], 'revealed once');
    assert.deepEqual(page.ui.stepper.revealed, [], 'the old page is unchanged');
    assert.deepEqual(actions.restartLesson(answered).ui.stepper, { on: true, index: 0, key: null, revealed: [], verdicts: {} });
    assert.equal(actions.stepThrough(answered, false).ui.stepper.verdicts, answered.ui.stepper.verdicts, 'off keeps the answers');
  });

  test('stepperIndex: the step while it is drawn, else the nearest place', () => {
    const keys = ['Q:0', 'scores:0', 'weights:0', 'output:-1'];
    assert.equal(actions.stepperIndex({ index: 0, key: 'weights:0' }, keys), 2, 'found by its key (a hidden step moved it)');
    assert.equal(actions.stepperIndex({ index: 7, key: 'gone:0' }, keys), 3, 'gone: the last place at most');
    assert.equal(actions.stepperIndex({ index: 1, key: null }, keys), 1);
  });

  test('computed: a trace becomes the result; an error keeps the last one; the keep-mask only when it changed', () => {
    const page = example();
    const trace = { meta: {} };
    const good = actions.computed(page, { trace, problem: { Q: [[1]] }, errors: {} });
    assert.equal(good.result.trace, trace);
    assert.equal(good.state, page.state, 'no keep-mask: the state is the same object');
    const bad = actions.computed(good, { trace: null, problem: null, errors: { Q: 'Q is empty' } });
    assert.equal(bad.result, good.result);
    assert.deepEqual(bad.errors, { Q: 'Q is empty' });
    const masked = actions.setOptions(page, { mask: 'keep', keepMask: [[1]] });
    assert.equal(actions.computed(masked, { trace, errors: {}, keepMask: [[1]] }).state, masked.state);
    assert.deepEqual(actions.computed(masked, { trace, errors: {}, keepMask: [[1, 1]] }).state.options.keepMask, [[1, 1]]);
  });
});

describe('the walkthroughs (ui.walk)', () => {
  test('chooseWalk opens from the start and closes keeping the place; walkTo moves; setWalk changes settings', () => {
    let page = actions.walkTo(actions.chooseWalk(example(), 'tiles'), 3);
    assert.deepEqual([page.ui.walk.id, page.ui.walk.index], ['tiles', 3]);
    assert.equal(actions.walkTo(page, 3), page, 'the same place: the same page');
    const closed = actions.chooseWalk(page, null);
    assert.deepEqual([closed.ui.walk.id, closed.ui.walk.index], [null, 3]);
    assert.equal(actions.chooseWalk(closed, 'softmax').ui.walk.index, 0);
    page = actions.setWalk(page, { blocks: { block_q: 1, block_k: 4 }, index: 0 });
    assert.deepEqual(page.ui.walk.blocks, { block_q: 1, block_k: 4 });
    assert.equal(page.ui.walk.index, 0);
    assert.equal(page.ui.walk.subtractMax, true, 'the rest kept');
    assert.throws(() => {
      page.ui.walk.blocks.block_q = 9;
    }, TypeError);
  });
});

describe('the page store', () => {
  test("hiddenStepIds: the link's hidden steps and a running exercise's, until its answers are shown", async () => {
    const { hiddenStepIds } = await import('../../web/page/store.js');
    const state = defaultState();
    state.hide = { ...state.hide, steps: ['scores'] };
    state.exercise = { steps: ['weights:0', 'weights:1', 'output:-1'] };
    const page = actions.load(actions.initialPage(), state);
    assert.deepEqual(hiddenStepIds(page), ['scores', 'weights', 'output']);
    assert.deepEqual(hiddenStepIds(actions.setRevealed(page, true)), ['scores']);
    assert.deepEqual(hiddenStepIds(example()), []);
  });

  test("an event's actions give one redraw; a view subscribed to the inputs is not redrawn for the open cell", () => {
    const frames = [];
    const store = createStore(example(), { schedule: (redraw) => frames.push(redraw) });
    const drawn = { inputs: 0, open: 0 };
    store.subscribe(
      (page) => page.state.inputs,
      () => drawn.inputs++,
    );
    store.subscribe(
      (page) => page.state.open,
      () => drawn.open++,
    );
    store.dispatch(actions.editInput, 'Q', { text: '3 3' });
    store.dispatch(actions.editInput, 'Q', { text: '4 4' });
    assert.equal(frames.length, 1);
    frames.shift()();
    assert.deepEqual(drawn, { inputs: 2, open: 1 });
    store.dispatch(actions.openCell, { step: 'Q', head: 0, row: 0, col: 0 });
    store.flush();
    assert.deepEqual(drawn, { inputs: 2, open: 2 }, 'flush drew the open cell now');
    frames.shift()(); // the frame asked for by that dispatch: nothing left to draw
    assert.deepEqual(drawn, { inputs: 2, open: 2 });
  });
});

describe('the dependency rule (docs/ARCHITECTURE.md, the explorer page)', () => {
  test('the loop (update.js) imports none of the views the architecture names', async () => {
    const root = new URL('../../', import.meta.url);
    const doc = await readFile(new URL('docs/ARCHITECTURE.md', root), 'utf8');
    // The list in bold after "The views are the modules that draw a part of the page".
    const list = /The views are the modules that draw a part of the page[^*]*\*\*([^*]+)\*\*/.exec(doc);
    assert.ok(list, 'docs/ARCHITECTURE.md lists the views');
    const views = list[1].split(',').map((name) => name.trim());
    assert.ok(views.length >= 20 && views.includes('inputs.js') && views.includes('exercise.js'), `views: ${views}`);
    for (const view of views) await readFile(new URL(`web/page/${view}`, root)); // each one exists
    const update = await readFile(new URL('web/page/update.js', root), 'utf8');
    const imported = [...update.matchAll(/^import[^;]*?from '\.\/([^']+)';/gms)].map((m) => m[1]);
    assert.ok(imported.includes('store.js') && imported.includes('editors.js'), `update.js imports ${imported}`);
    assert.deepEqual(
      imported.filter((name) => views.includes(name)),
      [],
      'update.js imports a view',
    );
  });
});
