// The page's whole state as one plain, serialisable object, and its URL-hash encoding.
// Everything a link must reproduce lives here: inputs (as text), options, token names, the open
// cell, and which inputs/steps are hidden (for embedding). Views read it; only main.js writes it.

export const STATE_VERSION = 1;

/** Inputs each mode uses, in display order; optional ones are switched on in `use`. */
export const MODE_INPUTS = {
  qkv: ['Q', 'K', 'V'],
  self: ['X', 'W_Q', 'W_K', 'W_V'],
  cross: ['X', 'X_kv', 'W_Q', 'W_K', 'W_V'],
};
export const BIAS_INPUTS = ['b_Q', 'b_K', 'b_V'];
export const VECTOR_INPUTS = new Set(['b_Q', 'b_K', 'b_V', 'b_O']);

export function defaultState() {
  return {
    preset: null,
    edited: false,
    recipe: '',                 // numpy lines that made the example's random inputs
    mode: 'self',
    inputs: {},                 // name -> { text, numpy? }
    use: { bias: false, W_O: false, b_O: false },
    options: {
      layout: 'rows',
      scale: 'sqrt_dk',         // 'sqrt_dk' | 'none' | 'custom'
      scaleCustom: '',          // a number, "1/sqrt(n)" or "1/n"
      causal: false,
      mask: 'none',             // 'none' | 'keep' | 'additive'
      keepMask: null,           // 0/1 rows, the shape of the scores step
      additiveMask: '',         // text, e.g. "0 -inf\n0 0"
      softcap: 0,
      heads: 1,
      kv_heads: 1,
      precision: 'float64',
    },
    decimals: 4,
    tokens: { q: '', k: '' },
    open: null,                 // { step, head, row, col }
    collapsed: [],              // step keys ("scores:0") folded away
    hide: { inputs: [], steps: [], chrome: false },
    exercise: null,             // { steps: ["weights:0"], cells?, tolerance, seed? } (share.js)
  };
}

/** Names of the inputs the problem takes in this state, in display order. */
export function activeInputs(state) {
  const names = [...MODE_INPUTS[state.mode]];
  if (state.mode !== 'qkv' && state.use.bias) names.push(...BIAS_INPUTS);
  if (state.use.W_O) {
    names.push('W_O');
    if (state.use.b_O) names.push('b_O');
  }
  return names;
}

/** Split "a, b c" into token names. */
export function splitTokens(text) {
  return String(text ?? '').split(/[\s,]+/).filter(Boolean);
}

// ---- URL hash ---------------------------------------------------------------------------------

function toBase64Url(text) {
  const bytes = new TextEncoder().encode(text);
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

/** Drop what equals the defaults so links stay short. */
function compact(state) {
  const d = defaultState();
  const out = {};
  for (const [k, v] of Object.entries(state)) {
    if (k === 'options') {
      const o = {};
      for (const [ok, ov] of Object.entries(v)) {
        if (JSON.stringify(ov) !== JSON.stringify(d.options[ok])) o[ok] = ov;
      }
      if (Object.keys(o).length) out.options = o;
    } else if (JSON.stringify(v) !== JSON.stringify(d[k])) {
      out[k] = v;
    }
  }
  return out;
}

/** "v1=<base64url of compact JSON>" (no leading '#'). */
export function encodeState(state) {
  return `v${STATE_VERSION}=${toBase64Url(JSON.stringify(compact(state)))}`;
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Merge a decoded object over the defaults, keeping only known keys of the right type. */
function mergeKnown(base, extra) {
  for (const [k, v] of Object.entries(extra ?? {})) {
    if (!(k in base)) continue;
    const b = base[k];
    if (isPlainObject(b) && isPlainObject(v) && k !== 'inputs') mergeKnown(b, v);
    else if (k === 'inputs' && isPlainObject(v)) {
      for (const [name, inp] of Object.entries(v)) {
        if (isPlainObject(inp) && typeof inp.text === 'string') {
          base.inputs[name] = { text: inp.text, ...(typeof inp.numpy === 'string' ? { numpy: inp.numpy } : {}) };
        }
      }
    } else if (b === null || typeof b === typeof v || (b === null && v !== undefined)) base[k] = v;
  }
  return base;
}

/**
 * Read the state from a location hash ("#v1=..."). Returns { state } on success, { state: null }
 * when there is no state in the hash, or { state: null, error } for a corrupted or unknown link.
 */
export function decodeState(hash) {
  const h = String(hash ?? '').replace(/^#/, '');
  if (!h) return { state: null };
  const m = /^v(\d+)=(.*)$/s.exec(h);
  if (!m) return { state: null, error: 'This link does not hold an explorer state (it should start with #v1=).' };
  const version = Number(m[1]);
  if (version > STATE_VERSION) {
    return { state: null, error: `This link was made by a newer version of the explorer (state v${version}); showing the default example instead.` };
  }
  if (h.length > 2_000_000) return { state: null, error: 'This link is too long to be an explorer state.' };
  try {
    const obj = JSON.parse(fromBase64Url(m[2]));
    if (!isPlainObject(obj)) throw new Error('not an object');
    const state = mergeKnown(defaultState(), obj);
    if (!MODE_INPUTS[state.mode]) state.mode = 'self';
    return { state };
  } catch {
    return { state: null, error: 'This link is damaged (its state could not be read); showing the default example instead.' };
  }
}
