#!/usr/bin/env node
// Writes corpus/fuzz_wire/ (committed): problems packed as web/lib/wire.js packs them (cpp/wire.h's
// header: per slot form, rows, cols, at; then each option's value, NaN when not given), read from
// the built module's own wire table so the seeds follow the format.
//
//   node tests/fuzz/make_wire_corpus.mjs        (after `bash scripts/build.sh`)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const { default: createModule } = await import(join(root, 'dist', 'attention.js'));
const module = await createModule({ wasmBinary: readFileSync(join(root, 'dist', 'attention.wasm')) });
const { slots, slot_fields: slotFields, options } = module._wireLayout().problem;
const forms = { absent: 0, numbers: 1, text: 2 }; // cpp/wire.h kForms, in order

/** The packed doubles of `inputs` ({ name: number[][] | string }) with `given` options ({ name: value }). */
function pack(inputs, given = {}) {
  const header = slots.length * slotFields.length + options.length;
  const data = [];
  const head = new Array(header).fill(0);
  slots.forEach((slot, s) => {
    const value = inputs[slot.name];
    if (value === undefined) return;
    const h = s * slotFields.length;
    head[h + slotFields.indexOf('at')] = header + data.length;
    if (typeof value === 'string') {
      const bytes = Buffer.from(value, 'utf8');
      const padded = Buffer.alloc(Math.ceil(bytes.length / 8) * 8);
      bytes.copy(padded);
      for (let i = 0; i < padded.length; i += 8) data.push(padded.readDoubleLE(i));
      head[h + slotFields.indexOf('form')] = forms.text;
      head[h + slotFields.indexOf('rows')] = bytes.length;
    } else {
      head[h + slotFields.indexOf('form')] = forms.numbers;
      head[h + slotFields.indexOf('rows')] = value.length;
      head[h + slotFields.indexOf('cols')] = value[0].length;
      data.push(...value.flat());
    }
  });
  options.forEach((o, i) => {
    head[slots.length * slotFields.length + i] = o.name in given ? given[o.name] : NaN;
  });
  return Buffer.from(new Float64Array([...head, ...data]).buffer);
}

const Q = [
  [1, 0, 1, 0],
  [0, 2, 0, 1],
  [1, 1, 1, 1],
];
const out = join(root, 'tests', 'fuzz', 'corpus', 'fuzz_wire');
mkdirSync(out, { recursive: true });
const seeds = {
  direct: pack({ Q, K: Q, V: Q }),
  'causal-heads': pack({ Q, K: Q, V: Q }, { causal: 1, heads: 2 }),
  text: pack({
    Q: '[[1, 2], [3, 4]]',
    K: '1 0; 0 1',
    V: [
      [1, 2],
      [3, 4],
    ],
  }),
  projections: pack({
    X: Q,
    W_Q: [
      [1, 0],
      [0, 1],
      [1, 1],
      [0, 0],
    ],
    W_K: [
      [1, 0],
      [0, 1],
      [1, 1],
      [0, 0],
    ],
    W_V: [
      [1, 0],
      [0, 1],
      [1, 1],
      [0, 0],
    ],
    b_Q: [[0.5, -0.5]],
  }),
};
for (const [name, bytes] of Object.entries(seeds)) writeFileSync(join(out, name), bytes);
console.log(`wrote ${Object.keys(seeds).length} seeds to ${out}`);
