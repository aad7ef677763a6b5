// What the trace API (problem.js) and the output-only path (fast.js) share about input: the form
// of an input error and the grammar of the scale. Kept tiny: fast.js's entry loads it too.

/**
 * An Error for input the package rejects; `field` names the input (e.g. "options.scale"). With
 * `id` (a catalogue's "error.*") and its `values`, the error carries `message_id` and `values` as
 * the core's errors do (i18n.js errorWords says it in any language); `message` is its English.
 * @param {string} message
 * @param {string} [field]
 * @param {string} [id]
 * @param {Record<string, string | import('./index.js').ErrorMessage>} [values]
 */
export function inputError(message, field, id, values) {
  /** @type {PlacedError} */
  const error = new Error(message);
  if (field !== undefined) error.field = field;
  if (id !== undefined) {
    error.message_id = id;
    error.values = values ?? {};
  }
  return error;
}

/** @typedef {Error & import('./index.js').InputErrorPlace} PlacedError An Error that says what it concerns. */

/**
 * ArrayBuffer.isView, as the type guard the checks mean: a typed array of numbers (a DataView,
 * which has no length, passes as it always did and is refused later as empty or not numbers).
 * @param {unknown} value
 * @returns {value is ArrayLike<number> & ArrayBufferView}
 */
export function isNumberView(value) {
  return ArrayBuffer.isView(value);
}

/**
 * A JSON object (not an array, typed array or null), its values not yet checked.
 * @param {unknown} value
 * @returns {value is Record<string, any>}
 */
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
