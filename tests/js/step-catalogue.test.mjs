// The core's step catalogue (cpp/steps.cpp, engine.steps through the wire table) is the one list
// of step ids: the package's copy for links (formats.js STEP_IDS) and the TypeScript ids
// (index.d.ts StepId, GradientStepId) equal it, every step a trace holds is in it, and no other
// file in web/ lists step ids. No file in web/ switches on step ids: per-step words are in the
// catalogues, reached through tables keyed by step id.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { dist } from './helpers.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

const { loadAttention } = await import(`${dist}node.js`);
const { STEP_IDS, INPUT_NAMES } = await import(`${dist}formats.js`);
const engine = await loadAttention();
const forward = engine.steps.filter((s) => !s.gradient).map((s) => s.id);
const backward = engine.steps.filter((s) => s.gradient).map((s) => s.id);

/** The string literals of a TypeScript union `export type NAME = ... ;` in a .d.ts. */
function unionIds(dts, name) {
  const start = dts.indexOf(`export type ${name} =`);
  assert.ok(start >= 0, `no type ${name}`);
  const rest = dts.slice(start).replace(/\/\*[\s\S]*?\*\//g, ''); // doc comments hold ';' too
  return [...rest.slice(0, rest.indexOf(';')).matchAll(/'([^']+)'/g)].map((m) => m[1]);
}

/** web/'s JS files: [path relative to the repository, source]. */
function webSources() {
  return ['web/lib', 'web/page'].flatMap((dir) =>
    readdirSync(join(root, dir))
      .filter((f) => f.endsWith('.js'))
      .map((f) => [`${dir}/${f}`, readFileSync(join(root, dir, f), 'utf8')]),
  );
}

describe('the step catalogue', () => {
  test('crosses the wire: ids unique, each with a title, the forward pass before the backward pass', () => {
    const ids = engine.steps.map((s) => s.id);
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(ids.includes('rope_angles') && ids.includes('gate') && ids.includes('dX'));
    assert.deepEqual(
      engine.steps.find((s) => s.id === 'rope_angles'),
      { id: 'rope_angles', title: 'RoPE angles', gradient: false },
    );
    const firstGradient = engine.steps.findIndex((s) => s.gradient);
    assert.equal(ids[firstGradient], 'dO', 'the backward pass starts with dO');
    assert.ok(
      engine.steps.slice(firstGradient).every((s) => s.gradient),
      'every step after dO is a gradient',
    );
    assert.ok(Object.isFrozen(engine.steps) && Object.isFrozen(engine.steps[0]));
  });

  test("each step's caption is a message of the catalogues: step.<id> in en.json, and no other step.* id", () => {
    const en = JSON.parse(readFileSync(join(root, 'web/lib/locales/en.json'), 'utf8'));
    const captions = Object.keys(en).filter((k) => /^step\.[^.]+$/.test(k));
    assert.deepEqual(captions.sort(), engine.steps.map((s) => `step.${s.id}`).sort());
    assert.equal(en['step.dS.sigmoid'], 'Gradient through the sigmoid');
    assert.equal(engine.steps.find((s) => s.id === 'scaled').title, 'Scaled scores');
    const sigmoid = engine.gradients({ Q: [[1, 0]], K: [[0, 1]], V: [[1, 2]], options: { score_fn: 'sigmoid' } });
    const dS = sigmoid.steps.find((s) => s.id === 'dS');
    assert.deepEqual([dS.title_id, dS.title], ['step.dS.sigmoid', 'Gradient through the sigmoid']);
  });

  test('formats.js STEP_IDS (links, ?hide=step:…) is the forward catalogue, in order', () => {
    assert.deepEqual(STEP_IDS, forward);
  });

  test('index.d.ts StepId and GradientStepId are the catalogue', () => {
    const dts = readFileSync(join(root, 'web/lib/index.d.ts'), 'utf8');
    const stepIds = unionIds(dts, 'StepId');
    assert.deepEqual([...stepIds].sort(), [...forward].sort());
    assert.deepEqual([...unionIds(dts, 'GradientStepId')].sort(), [...backward].sort());
  });

  test('every step of a trace and of its gradients is in the catalogue', () => {
    const problem = {
      Q: [
        [1, 0, 1, 0],
        [0, 1, 0, 1],
        [1, 1, 0, 0],
      ],
      K: [
        [1, 0, 0, 1],
        [0, 1, 1, 0],
        [1, 1, 1, 1],
      ],
      V: [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
      options: { causal: true, rope: true, softcap: 5, alibi: true },
    };
    const known = new Set(engine.steps.map((s) => s.id));
    const trace = engine.run(problem);
    const gradients = engine.gradients(problem);
    const seen = [...trace.steps, ...gradients.steps].map((s) => s.id);
    assert.ok(seen.includes('rope_angles') && seen.includes('softcapped') && seen.includes('dQ'));
    assert.deepEqual(
      seen.filter((id) => !known.has(id)),
      [],
    );
    for (const s of trace.steps) assert.equal(s.title, engine.steps.find((c) => c.id === s.id).title);
  });

  test('no other file in web/ lists step ids (an array of three or more)', () => {
    const ids = new Set(engine.steps.map((s) => s.id).filter((id) => !INPUT_NAMES.includes(id) && id !== 'mask'));
    // What is left to move into the catalogue (issue 29): groupings narration words by hand.
    const known = new Set(["web/lib/narrate.js: 'dQ', 'dK', 'dV'", "web/lib/narrate.js: 'dK', 'dV', 'dK_cache', 'dV_cache'"]);
    const found = [];
    for (const [file, src] of webSources()) {
      if (file === 'web/lib/formats.js') continue;
      for (const m of src.matchAll(/\[\s*('[A-Za-z_0-9]+'(?:\s*,\s*'[A-Za-z_0-9]+')+)\s*,?\s*\]/g)) {
        const words = [...m[1].matchAll(/'([^']+)'/g)].map((x) => x[1]);
        if (words.filter((w) => ids.has(w)).length >= 3) found.push(`${file}: ${m[1].replace(/\s+/g, ' ')}`);
      }
    }
    assert.deepEqual(
      found.filter((f) => !known.has(f)),
      [],
      'a list of step ids outside the catalogue: read engine.steps (or formats.js STEP_IDS) instead',
    );
    assert.deepEqual(found.filter((f) => known.has(f)).length, known.size, 'a known list is gone: take it out of `known`');
  });

  test('per-step switches stay where they are and do not grow', () => {
    const ids = new Set(engine.steps.map((s) => s.id).filter((id) => !INPUT_NAMES.includes(id) && id !== 'mask'));
    // case labels of step ids per file today: none. How a step reads its inputs, for lineage, is the
    // core's (Step.reads); narration's STEP_TELLERS and the step cards' STEP_FACTS (page/steps.js)
    // are tables keyed by step id, their words in the catalogues.
    /** @type {Record<string, number>} */
    const budget = {};
    const counts = {};
    for (const [file, src] of webSources()) {
      const n = [...src.matchAll(/case '([A-Za-z_0-9]+)'/g)].filter((m) => ids.has(m[1])).length;
      if (n) counts[file] = n;
    }
    for (const [file, n] of Object.entries(counts)) {
      assert.ok(file in budget, `${file} switches on step ids (${n} cases): put the step's words in the catalogue instead`);
      assert.ok(n <= budget[file], `${file} has ${n} step-id cases, more than its ${budget[file]}`);
    }
  });
});
