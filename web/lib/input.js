// What the trace API (problem.js) and the output-only path (fast.js) share about input: the form
// of an input error and the grammar of the scale. Kept tiny: fast.js's entry loads it too.

/** An Error for input the package rejects; `field` names the input (e.g. "options.scale"). */
export function inputError(message, field) {
  const error = new Error(message);
  if (field !== undefined) error.field = field;
  return error;
}

/** A JSON object (not an array, typed array or null). */
export function isPlainObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);
}

/**
 * The scale: "sqrt_dk", "none", a finite number (multiplies QKᵀ), "1/sqrt(<n>)" (divides by √n,
 * the root taken by the core in the working precision) or "1/<n>", with n > 0. Returns
 * `{ kind, value }` with the wire's kind names (cpp/wire.h kScaleKinds), or null.
 */
export function parseScale(scale) {
  if (scale === 'sqrt_dk' || scale === 'none') return { kind: scale, value: undefined };
  if (typeof scale === 'number') return Number.isFinite(scale) ? { kind: 'multiply', value: scale } : null;
  if (typeof scale !== 'string') return null;
  const text = scale.replace(/\s+/g, '');
  const root = /^1\/sqrt\(([0-9.eE+-]+)\)$/.exec(text);
  const plain = /^1\/([0-9.eE+-]+)$/.exec(text);
  const n = Number((root ?? plain ?? [])[1]);
  if ((root || plain) && Number.isFinite(n) && n > 0) return { kind: root ? 'divide_sqrt' : 'divide', value: n };
  return null;
}
