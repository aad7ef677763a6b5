// Shared by the JS tests: the built package (dist/), the seed fixtures, and number checks.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2147483648 - 1;
  };
}

// ---- the CLI and the Python scripts the package writes -------------------------------------------

/** The package's CLI on `args`, `input` on its standard input: `{ code, stdout, stderr }`. */
export function runCli(args, input) {
  const r = spawnSync(process.execPath, [`${dist}cli.js`, ...args], { input, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Debian's python3 with python3-numpy (not a pyenv python on PATH). */
export const PYTHON = '/usr/bin/python3';
/** PYTHONPATH for tests/fixtures/torch_double, the float64 stand-in for torch that the PyTorch scripts run on. */
export const TORCH_DOUBLE_ENV = { ...process.env, PYTHONPATH: fileURLToPath(new URL('../fixtures/torch_double/', import.meta.url)) };
const pythonRuns = (code, env) => existsSync(PYTHON) && spawnSync(PYTHON, ['-c', code], { env }).status === 0;
/** A test's skip reason when there is no numpy for PYTHON, else false. */
export const noNumpy = !pythonRuns('import numpy') && 'no /usr/bin/python3 with numpy';
/** A test's skip reason when there is no real PyTorch for PYTHON, else false. */
export const noTorch = !pythonRuns('import torch', { ...process.env, PYTHONPATH: '' }) && 'no PyTorch for /usr/bin/python3';

let scriptDir;
/**
 * Runs a NumPy or PyTorch script the package wrote with --json (named after `file`, under `env`)
 * and checks its steps against the trace's: the same ids and heads in the same order, each number
 * within `tolerance` relative to the step's largest (1e-5 for a float32 trace, else 1e-12), and
 * the same infinities and NaNs.
 */
export function reproducesTrace(
  script,
  trace,
  file,
  { env = process.env, tolerance = trace.meta.precision === 'float32' ? 1e-5 : 1e-12 } = {},
) {
  scriptDir ??= mkdtempSync(join(tmpdir(), 'attention-scripts-'));
  const path = join(scriptDir, `${file.replace(/\W+/g, '_')}.py`);
  writeFileSync(path, script);
  const r = spawnSync(PYTHON, [path, '--json'], { encoding: 'utf8', env });
  assert.equal(r.status, 0, r.stderr);
  const words = { inf: Infinity, '-inf': -Infinity, nan: NaN };
  const steps = JSON.parse(r.stdout, (key, v) => (typeof v === 'string' && v in words ? words[v] : v));
  assert.deepEqual(
    steps.map((s) => `${s.id}:${s.head}`),
    trace.steps.map((s) => `${s.id}:${s.head}`),
  );
  steps.forEach((s, k) => {
    const want = trace.steps[k].data.flat();
    const scale = Math.max(1, ...want.filter(Number.isFinite).map(Math.abs));
    s.data.flat().forEach((x, i) => {
      const same = Number.isFinite(want[i]) ? Math.abs(x - want[i]) < tolerance * scale : Object.is(x, want[i]);
      assert.ok(same, `${file}: ${s.id}:${s.head} entry ${i}: ${x} vs ${want[i]}`);
    });
  });
}
