#!/usr/bin/env node
// The link decoder's fuzz target (beside the libFuzzer ones; run by scripts/fuzz.sh). What a class
// hands around (links, students' links, lesson files: corpus/fuzz_link/, made by
// make_link_corpus.mjs) is damaged at every layer it has, damage on damage, for a bounded time:
//   - the state object (a field replaced, removed or added), then encoded as a v1 or v2 link;
//   - the JSON text before it is encoded (so a v2 link inflates fine to broken JSON);
//   - the link's text itself (cut, changed, padded, doubled, its version changed), also after
//     compression, and two seeds spliced together;
//   - a lesson file as an object and as text.
// Each must decode as tests/js/decoding.mjs says: a valid object or a message, never a throw.
// There is no coverage guidance (libFuzzer does not reach JavaScript, and Jazzer.js's prebuilt
// addon needs a newer glibc than Debian 12's); fast-check draws the damage and shrinks a finding.
//
//   node tests/fuzz/fuzz_link.mjs SECONDS [--seed N]    fuzz; a finding is written to
//                                                        build-fuzz/artifacts/fuzz_link-<kind>-<hash>
//   node tests/fuzz/fuzz_link.mjs --replay FILE...       decode saved inputs again (kind from the name)
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';

import fc from 'fast-check';

import { damage, damagedText } from '../js/arbitraries.mjs';
import { decodesSafely, readsLessonSafely } from '../js/decoding.mjs';

const root = join(import.meta.dirname, '..', '..');
const corpusDir = join(import.meta.dirname, 'corpus', 'fuzz_link');
const artifacts = join(root, 'build-fuzz', 'artifacts');

const { values: args, positionals } = parseArgs({
  options: { seed: { type: 'string' }, replay: { type: 'boolean' } },
  allowPositionals: true,
});

/** Decodes one input of its kind ('link' or 'lesson') as the page would: true when it gave a state or lesson. */
async function decode({ kind, text }) {
  if (kind === 'lesson') return readsLessonSafely(text) !== null;
  return (await decodesSafely(text)).state !== null;
}

if (args.replay) {
  for (const file of positionals) {
    await decode({ kind: basename(file).includes('lesson') ? 'lesson' : 'link', text: readFileSync(file, 'utf8') });
    console.log(`ok ${file}`);
  }
  process.exit(0);
}

const seconds = Number(positionals[0]);
if (!(seconds > 0)) {
  console.error('usage: node tests/fuzz/fuzz_link.mjs SECONDS [--seed N] | --replay FILE...');
  process.exit(2);
}

// ---- the seeds, each at every layer it has ---------------------------------------------------

const seeds = { link: [], lesson: [] };
for (const name of readdirSync(corpusDir).sort()) {
  const text = readFileSync(join(corpusDir, name), 'utf8');
  if (name.startsWith('lesson-')) seeds.lesson.push({ text, object: JSON.parse(text) });
  else {
    const { state, error } = await decodesSafely(text);
    if (!state) throw new Error(`corpus/fuzz_link/${name} does not decode (${error}): run make_link_corpus.mjs`);
    seeds.link.push({ text, object: state });
  }
}

const v1 = (jsonText) => `v1=${Buffer.from(jsonText).toString('base64url')}`;
async function v2(jsonText) {
  const stream = new Blob([jsonText]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  return `v2=${Buffer.from(await new Response(stream).arrayBuffer()).toString('base64url')}`;
}

const junk = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom('', -1, 1e308, 0.5, 'inf', 'NaN', '<img src=x onerror="window.__pwned=1">', null, [], {}, [[{}]], '__proto__'),
);
/** 1–4 structural damages of an object, one after another. */
const damagedObject = (object) =>
  fc
    .array(fc.tuple(fc.array(fc.nat(), { minLength: 1, maxLength: 8 }), fc.constantFrom('replace', 'remove', 'add'), junk), {
      minLength: 1,
      maxLength: 4,
    })
    .map((hits) => hits.reduce((value, [steps, how, j]) => damage(value, steps, how, j), object));
/** 1–4 damages of a text, one after another. */
const damagedTextN = (text) =>
  fc.integer({ min: 1, max: 4 }).chain((n) => {
    let arb = fc.constant(text);
    for (let i = 0; i < n; i += 1) arb = damagedText(arb);
    return arb;
  });

const link = fc.constantFrom(...seeds.link);
const lesson = fc.constantFrom(...seeds.lesson);
const input = fc.oneof(
  fc
    .tuple(
      link.chain((s) => damagedObject(s.object)),
      fc.boolean(),
    )
    .map(([o, compress]) => ({ kind: 'link', json: JSON.stringify(o), compress })),
  fc
    .tuple(
      link.chain((s) => damagedTextN(JSON.stringify(s.object))),
      fc.boolean(),
    )
    .map(([json, compress]) => ({ kind: 'link', json, compress })),
  link.chain((s) => damagedTextN(s.text)).map((text) => ({ kind: 'link', text })),
  fc
    .tuple(link, link, fc.nat(), fc.nat())
    .map(([a, b, i, j]) => ({ kind: 'link', text: a.text.slice(0, i % (a.text.length + 1)) + b.text.slice(j % (b.text.length + 1)) })),
  lesson.chain((s) => damagedObject(s.object)).map((o) => ({ kind: 'lesson', text: JSON.stringify(o) })),
  lesson.chain((s) => damagedTextN(s.text)).map((text) => ({ kind: 'lesson', text })),
);

/** The text of an input: a damaged JSON text is encoded the way the page encodes links. */
const textOf = async (x) => x.text ?? (x.compress ? v2(x.json) : v1(x.json));

let runs = 0;
let read = 0;
const seed = args.seed === undefined ? Date.now() % 2 ** 31 : Number(args.seed);
const result = await fc.check(
  fc.asyncProperty(input, async (x) => {
    runs += 1;
    if (await decode({ kind: x.kind, text: await textOf(x) })) read += 1;
  }),
  { numRuns: Number.MAX_SAFE_INTEGER, interruptAfterTimeLimit: seconds * 1000, seed },
);

if (result.failed) {
  const x = result.counterexample[0];
  const text = await textOf(x);
  mkdirSync(artifacts, { recursive: true });
  const file = join(artifacts, `fuzz_link-${x.kind}-${createHash('sha1').update(text).digest('hex').slice(0, 16)}`);
  writeFileSync(file, text);
  console.error(`!! fuzz_link: FINDING after ${runs} runs (seed ${seed}): ${result.errorInstance?.message ?? result.error}`);
  console.error(`   input written to ${file}; replay: node tests/fuzz/fuzz_link.mjs --replay ${file}`);
  process.exit(1);
}
console.log(
  `ok fuzz_link: ${result.numRuns} inputs in ${seconds} s (seed ${seed}; ${read} read as a state or lesson, ` +
    `the others as a message; ${seeds.link.length} links and ${seeds.lesson.length} lesson files as seeds), no findings`,
);
