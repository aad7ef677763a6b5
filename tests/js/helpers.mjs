// Shared by the JS tests: the built package (dist/), the seed fixtures, and number checks.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const repo = fileURLToPath(new URL('../../', import.meta.url));
export const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
export const seedFixtures = fileURLToPath(new URL('../fixtures/seeds/', import.meta.url));

if (!existsSync(`${dist}node.js`) || !existsSync(`${dist}attention.wasm`)) {
  throw new Error(`the package is not built (${dist} is missing files): run npm run build first`);
}

const fixtures = new Map();

/**
 * One matrix seed document `seed` ("000") shows, from tests/fixtures/seeds/<seed>.json (written by
 * tests/fixtures/make_seed_fixtures.py): `{ text, values, where, ... }`, where `text` holds the
 * printed numbers (with the digits printed) and `values` the same numbers as rows. A missing
 * fixture or matrix throws, so the test asking for it fails.
 */
export function seedPrint(seed, name) {
  if (!fixtures.has(seed)) {
    const file = `${seedFixtures}${seed}.json`;
    if (!existsSync(file)) throw new Error(`missing fixture ${file} (written by tests/fixtures/make_seed_fixtures.py)`);
    fixtures.set(seed, JSON.parse(readFileSync(file, 'utf8')));
  }
  const fixture = fixtures.get(seed);
  const entry = fixture.matrices[name];
  if (!entry) throw new Error(`tests/fixtures/seeds/${seed}.json has no matrix "${name}"`);
  const where = `seed ${seed} (${fixture.document}) line ${entry.line}${entry.cell ? `, ${entry.cell}` : ''}: ${name}`;
  return { ...entry, text: entry.text ?? entry.parts.join('\n'), where };
}

/** The numbers of a printed block, each with its own tolerance: half a unit of the last digit. */
export function printedNumbers(block) {
  return [...block.matchAll(/-?\d+\.\d*(?:e[+-]?\d+)?/gi)].map(([text]) => {
    const [mantissa, exponent = '0'] = text.toLowerCase().split('e');
    const decimals = (mantissa.split('.')[1] ?? '').length;
    return { text, value: Number(text), tolerance: 0.5 * 10 ** (Number(exponent) - decimals) * (1 + 1e-9) };
  });
}

/**
 * Every value of `actual` (nested arrays) equals the printed numbers to the digits printed; `block`
 * is printed text or a seedPrint().
 * `extraRelative` widens that for prints at or below the precision computed in (a float32's 8th
 * digit, a float64 printed with 17 digits after another summation order).
 */
export function assertPrinted(actual, block, what = 'value', extraRelative = 0) {
  if (typeof block === 'object') return assertPrinted(actual, block.text, `${what} (${block.where})`, extraRelative);
  const expected = printedNumbers(block);
  const values = [actual].flat(Infinity);
  assert.equal(values.length, expected.length, `${what}: ${values.length} values, ${expected.length} printed`);
  values.forEach((v, i) => {
    const e = expected[i];
    assert.ok(Math.abs(v - e.value) <= e.tolerance + extraRelative * Math.abs(e.value), `${what}[${i}] = ${v}, printed ${e.text}`);
  });
}

export function step(trace, id, head = 0) {
  const found = trace.steps.find((s) => s.id === id && (s.head === head || s.head === null));
  assert.ok(found, `trace has no step ${id} (head ${head})`);
  return found;
}

/** A small deterministic generator (xorshift): numbers in [-1, 1), reproducible from the seed. */
export function generator(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 2147483648 - 1;
  };
}
