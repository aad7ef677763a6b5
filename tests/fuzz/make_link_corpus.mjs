#!/usr/bin/env node
// Writes corpus/fuzz_link/ (committed), the seeds tests/fuzz/fuzz_link.mjs damages: what a class
// hands around, made by the package itself so the seeds follow the formats. `link-*.txt`: a link's
// hash text (every preset's state in v1 and v2, a teacher's exercise with notes, students' papers);
// `lesson-*.json`: lesson files as writeLesson writes them.
//
//   node tests/fuzz/make_link_corpus.mjs        (after `bash scripts/build.sh`)
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import fc from 'fast-check';

import { dist } from '../js/helpers.mjs';
import { lessonFileArb, studentStateArb } from '../js/arbitraries.mjs';

const share = await import(`${dist}share.js`);
const { loadAttention, presets, presetProblem } = await import(`${dist}node.js`);
const engine = await loadAttention();

const out = join(import.meta.dirname, 'corpus', 'fuzz_link');
mkdirSync(out, { recursive: true });
for (const f of readdirSync(out)) rmSync(join(out, f));
const json = (v) => JSON.parse(JSON.stringify(v));
const v1 = (state) => `v1=${Buffer.from(JSON.stringify(state)).toString('base64url')}`;

let files = 0;
const write = (name, text) => {
  writeFileSync(join(out, name), text);
  files += 1;
};

for (const preset of presets) {
  const { problem } = presetProblem(preset, engine);
  const state = json(share.problemToState(problem, { decimals: 3, preset: preset.id }));
  write(`link-${preset.id}-v2.txt`, await share.encodeStateString(state));
  write(`link-${preset.id}-v1.txt`, v1(state));
}

// A teacher's exercise with notes and answers of every kind, the page's options written its own way.
const teacher = {
  preset: '004',
  exercise: { steps: ['weights:0', 'output:-1'], tolerance: 0.001, cells: { 'weights:0': [[0, 1]] }, seed: 3, teacher: true },
  lesson: {
    'weights:0': { say: 'Look at the first row.', ask: 'Which key wins?', answer: { kind: 'key', row: 1 } },
    'output:-1': { ask: 'What is it?', answer: { kind: 'number', row: 1, col: 1, tolerance: 0.1 } },
    'scores:0': { ask: 'Why?', answer: { kind: 'text', text: 'the dot product' } },
  },
  open: { step: 'weights', head: 0, row: 1, col: 0 },
  collapsed: ['scores:0'],
  hide: { inputs: ['W_Q'], steps: ['scaled'], chrome: true },
  options: {
    keepMask: [
      [1, 0],
      [1, 1],
    ],
    mask: 'keep',
    rope: { base: 100, style: 'half' },
    window: [2, null],
  },
};
write('link-teacher-v2.txt', await share.encodeStateString(teacher));

// Students' papers as the schema allows them (fixed seed: the corpus does not change between runs).
fc.sample(studentStateArb, { seed: 34, numRuns: 4 }).forEach((student, i) => {
  write(`link-student-${i}.txt`, v1(json(student)));
});

const lookup = presets.find((p) => p.id === 'lookup');
write(
  'lesson-lookup.json',
  share.writeLesson({
    title: 'Lookup',
    problem: presetProblem(lookup, engine).problem,
    tokens: { q: ['a', 'b', 'c'], k: ['x', 'y', 'z'] },
    lesson: teacher.lesson,
  }),
);
fc.sample(lessonFileArb, { seed: 34, numRuns: 3 }).forEach((file, i) =>
  write(`lesson-schema-${i}.json`, `${JSON.stringify(json(file), null, 2)}\n`),
);
console.log(`wrote ${files} seeds to ${out}`);
