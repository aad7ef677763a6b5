// The explorer's link format, shared by the page (its URL hash) and <attention-explorer state="...">.
// No DOM and no wasm: text <-> a plain state object, and a state object <-> a problem.
//
// Versions (the hash starts with "v<N>="; every older version keeps decoding):
//   v1  base64url(JSON of the page state, defaults left out)
//   v2  base64url(deflate-raw(the same JSON))   (CompressionStream; about half the length of v1)
// The state object is the page's (web/page/state.js): { preset, mode, inputs: { name: { text } },
// use: { bias, W_O, b_O, P, cache, W_G, b_G, W_DKV, W_KR, W_DQ }, options: { layout, scale, scaleCustom, causal, mask,
// keepMask, additiveMask, softcap, heads, kv_heads, precision, and any other option of the
// problem JSON as it is written there }, decimals, tokens, open, hide, exercise, ... }.

import { BIAS_KEYS } from './context.js';
import { matrixToText } from './format.js';
import { checkLinkState } from './formats.js';
import { english } from './i18n.js';

// A lesson file is this link's `lesson` state plus its problem (lesson.js).
export {
  LESSON_FORMAT,
  LESSON_VERSION,
  LESSON_TIMEOUT_MS,
  ANSWER_KINDS,
  checkNotes,
  fetchLesson,
  readLesson,
  writeLesson,
  lessonTraceError,
  lessonTraceMessage,
  checkAnswer,
  usableAnswer,
  stepOfKey,
} from './lesson.js';
// Every format handed around (this link's state, a student's paper, a lesson file, embed flags, the
// component's attributes) is a schema in formats.js; decodeStateString checks the state against it.
export {
  check,
  checkLinkState,
  checkPaper,
  isStudentObject,
  linkStateSchema,
  paperSchema,
  exerciseSchema,
  notesSchema,
  lessonFileSchema,
  embedFlagsSchema,
  componentAttributesSchema,
  componentScriptSchema,
  problemSchema,
  pageOptionsSchema,
  INPUT_NAMES,
  STEP_IDS,
  HIDE_PANELS,
  LOCK_WORDS,
  LIMITS,
  KDF_LIMITS,
  STEP_KEY,
} from './formats.js';

/** @type {typeof import('./share.js').SHARE_VERSION} */
export const SHARE_VERSION = 2;
/**
 * Longest hash accepted (characters); browsers take ~2 MB URLs, chat apps far less.
 * @type {typeof import('./share.js').MAX_LINK_LENGTH}
 */
export const MAX_LINK_LENGTH = 1_000_000;
const MAX_JSON_BYTES = 8_000_000;

// The options the page state writes its own way (a scale menu and its text, a mask editor...).
// Every other option (rope, window, alibi, sink_tokens, ...) is kept in the state as the
// problem's JSON writes it, so a new option travels in links without code here.
const PAGE_OPTIONS = [
  'layout',
  'scale',
  'scaleCustom',
  'causal',
  'mask',
  'keepMask',
  'additiveMask',
  'softcap',
  'heads',
  'kv_heads',
  'precision',
];

const MODE_INPUTS = {
  qkv: ['Q', 'K', 'V'],
  self: ['X', 'W_Q', 'W_K', 'W_V'],
  cross: ['X', 'X_kv', 'W_Q', 'W_K', 'W_V'],
};

// ---- base64url and deflate -----------------------------------------------------------------

/** @type {typeof import('./share.js').toBase64Url} */
export function toBase64Url(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    bin += String.fromCharCode.apply(null, /** @type {number[]} */ (/** @type {unknown} */ (bytes.subarray(i, i + 0x8000)))); // apply takes any array-like
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** @type {typeof import('./share.js').fromBase64Url} */
export function fromBase64Url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error('not base64url');
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

async function pipe(bytes, stream, limit = Infinity) {
  const reader = new Blob([bytes]).stream().pipeThrough(stream).getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel();
      throw new Error('too large');
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

const canDeflate = () => typeof CompressionStream === 'function' && typeof DecompressionStream === 'function';

/**
 * "v2=<...>" (no '#') for a state object; "v1=" where CompressionStream is missing.
 * @type {typeof import('./share.js').encodeStateString}
 */
export async function encodeStateString(state) {
  const json = new TextEncoder().encode(JSON.stringify(state));
  if (!canDeflate()) return `v1=${toBase64Url(json)}`;
  return `v2=${toBase64Url(await pipe(json, new CompressionStream('deflate-raw')))}`;
}

/**
 * Reads "v1=..." or "v2=..." (with or without '#'). Resolves to { state, version } (the object,
 * checked against formats.js's linkStateSchema, unknown keys dropped), { state: null } when there
 * is nothing, or { state: null, error, message } with a message for people (`error` in English,
 * `message` its { id, values } for t.message in the reader's language); for a state that does not fit
 * the schema also `reason` (the field and what it should be) and `student` (true for a students'
 * exercise link). Never rejects, whatever the text.
 * @type {typeof import('./share.js').decodeStateString}
 */
export async function decodeStateString(hash) {
  const h = String(hash ?? '').replace(/^#/, '');
  if (!h) return { state: null };
  const m = /^v(\d+)=(.*)$/s.exec(h);
  if (!m) return unread('link.no-state');
  const version = Number(m[1]);
  if (version > SHARE_VERSION || version < 1) return unread('link.newer', { version: String(version) });
  if (h.length > MAX_LINK_LENGTH) return unread('link.too-long', { length: h.length, max: MAX_LINK_LENGTH });
  let raw;
  try {
    let bytes = fromBase64Url(m[2]);
    if (version === 2) {
      if (!canDeflate()) return unread('link.no-decompression');
      bytes = await pipe(bytes, new DecompressionStream('deflate-raw'), MAX_JSON_BYTES);
    }
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    return /too large/.test(error.message) ? unread('link.damaged.too-large', { megabytes: MAX_JSON_BYTES / 1e6 }) : unread('link.damaged');
  }
  const checked = checkLinkState(raw);
  return checked.state ? { state: checked.state, version } : checked;
}

/** An Error about the state's `field`: English `message`, and its message id and values for any language (i18n.js errorWords). */
const stateError = (id, values, field) => Object.assign(new Error(english(id, values)), { message_id: id, values, field });

/** A link that could not be read: its message (`message`, for a page in any language) and its English (`error`). */
const unread = (id, values = {}) => ({ state: null, error: english(id, values), message: { id, values } });

// ---- state <-> problem ---------------------------------------------------------------------

function asVector(m, name) {
  if (m.length === 1) return m[0];
  if (m.every((row) => row.length === 1)) return m.map((row) => row[0]);
  throw stateError('state.bias-shape', { name, rows: String(m.length), cols: String(m[0].length) }, name);
}

/**
 * Multi-head latent attention's inputs (issue 31), in the order of DeepSeek-V2's equations: the keys'
 * and values' latent (W_DKV, W_UK, W_UV), the rotary part (use.W_KR: W_KR, W_QR), then the queries
 * from X·W_Q or, with use.W_DQ, from a latent of their own (W_DQ, W_UQ).
 */
const latentInputs = (use) => [
  'X',
  'W_DKV',
  'W_UK',
  'W_UV',
  ...(use.W_KR ? ['W_KR', 'W_QR'] : []),
  ...(use.W_DQ ? ['W_DQ', 'W_UQ'] : ['W_Q']),
];

/** Whether a state computes multi-head latent attention: use.W_DKV, in self-attention (it reads X alone). */
const isLatentState = (state) => (MODE_INPUTS[state.mode] ? state.mode : 'self') === 'self' && Boolean(state.use?.W_DKV);

/**
 * Names of the inputs a state uses, in display order.
 * @type {typeof import('./share.js').stateInputs}
 */
export function stateInputs(state) {
  const mode = MODE_INPUTS[state.mode] ? state.mode : 'self';
  const use = state.use ?? {};
  const latent = isLatentState(state);
  const names = latent ? latentInputs(use) : [...MODE_INPUTS[mode]];
  // Latent attention has no b_Q, b_K, b_V (no W_K, W_V to add them to).
  if (mode !== 'qkv' && !latent && use.bias) names.push('b_Q', 'b_K', 'b_V');
  if (use.W_O) {
    names.push('W_O');
    if (use.b_O) names.push('b_O');
  }
  if (mode !== 'qkv' && use.P) names.push('P');
  // A latent cache keeps c_KV and the rotated k_R (with a rotary part), not K and V.
  if (use.cache) names.push(...(latent ? ['past_c_KV', ...(use.W_KR ? ['past_k_R'] : [])] : ['past_K', 'past_V']));
  // The output gate reads X, so it needs X.
  if (mode !== 'qkv' && use.W_G) {
    names.push('W_G');
    if (use.b_G) names.push('b_G');
  }
  return names;
}

/**
 * The problem a page state stands for, as the page builds it: inputs parsed with
 * engine.parseMatrix, options mapped. Throws an Error naming the input on bad text.
 * @type {typeof import('./share.js').stateToProblem}
 */
export function stateToProblem(state, engine) {
  /** @type {import('./index.js').Problem} */
  const problem = {};
  for (const name of stateInputs(state)) {
    const text = state.inputs?.[name]?.text;
    if (typeof text !== 'string' || !text.trim()) throw stateError('state.missing', { name }, name);
    const m = engine.parseMatrix(text, name);
    problem[name] = BIAS_KEYS.includes(name) ? asVector(m, name) : m;
  }
  // The page's option values as the state holds them: engine.run checks the problem they make.
  /** @type {Record<string, any>} */
  const o = state.options ?? {};
  /** @type {Record<string, any>} */
  const options = { layout: o.layout ?? 'rows', precision: o.precision ?? 'float64', causal: Boolean(o.causal) };
  if (o.scale === 'custom') {
    const t = String(o.scaleCustom ?? '').trim();
    options.scale = t !== '' && Number.isFinite(Number(t)) ? Number(t) : t;
  } else options.scale = o.scale ?? 'sqrt_dk';
  if (o.softcap) options.softcap = Number(o.softcap);
  options.heads = Number(o.heads) || 1;
  const kvHeads = Number(o.kv_heads) || options.heads;
  // Latent attention refuses kv_heads (its heads share one latent): sent only when set apart from
  // heads, for the core to say so.
  if (!isLatentState(state) || kvHeads !== options.heads) options.kv_heads = kvHeads;
  if (o.mask === 'keep' && Array.isArray(o.keepMask)) options.mask = o.keepMask.map((row) => row.map((v) => v === 1 || v === true));
  else if (o.mask === 'additive' && o.additiveMask) options.mask = engine.parseMatrix(o.additiveMask, 'mask');
  for (const [key, value] of Object.entries(o)) {
    if (!PAGE_OPTIONS.includes(key) && value !== undefined && value !== null) options[key] = value;
  }
  problem.options = options;
  return problem;
}

/**
 * A page state (only what differs from the page's defaults) for a problem with number inputs.
 * @type {typeof import('./share.js').problemToState}
 */
export function problemToState(problem, { tokens, decimals, preset } = {}) {
  const mode = problem.Q !== undefined ? 'qkv' : problem.X_kv !== undefined ? 'cross' : 'self';
  /** @type {import('./share.js').ExplorerState} */
  const state = { mode, inputs: {}, use: { bias: false, W_O: false, b_O: false } };
  if (preset) state.preset = preset;
  for (const [name, value] of Object.entries(problem)) {
    if (name === 'options' || value == null) continue;
    if (typeof value === 'string') state.inputs[name] = { text: value };
    else if (!Array.isArray(value) && value.shape) {
      const [r, c] = value.shape;
      const flat = Array.from(value.data);
      state.inputs[name] = { text: matrixToText(Array.from({ length: r }, (_, i) => flat.slice(i * c, (i + 1) * c))) };
    } else state.inputs[name] = { text: matrixToText(value) };
  }
  state.use.bias = ['b_Q', 'b_K', 'b_V'].some((n) => n in state.inputs);
  state.use.W_O = 'W_O' in state.inputs;
  state.use.b_O = 'b_O' in state.inputs;
  if ('P' in state.inputs) state.use.P = true;
  if (['past_K', 'past_V', 'past_c_KV', 'past_k_R'].some((n) => n in state.inputs)) state.use.cache = true;
  for (const flag of ['W_G', 'b_G', 'W_DKV', 'W_KR', 'W_DQ']) if (flag in state.inputs) state.use[flag] = true;
  const o = problem.options ?? {};
  const options = {};
  for (const [key, value] of Object.entries(o)) if (!PAGE_OPTIONS.includes(key)) options[key] = value;
  for (const k of ['layout', 'causal', 'softcap', 'heads', 'kv_heads', 'precision']) if (o[k] !== undefined) options[k] = o[k];
  // Without kv_heads every head has its own keys and values (the package's default), not one group.
  if (o.heads !== undefined && o.kv_heads === undefined) options.kv_heads = o.heads;
  if (o.scale !== undefined && o.scale !== 'sqrt_dk') {
    if (o.scale === 'none') options.scale = 'none';
    else {
      options.scale = 'custom';
      options.scaleCustom = String(o.scale);
    }
  }
  if (o.mask != null) {
    // Rows of numbers or booleans (text: one "row", only its type is read).
    const rows = /** @type {(number | boolean)[][]} */ (Array.isArray(o.mask[0]) ? o.mask : [o.mask]);
    if (rows.flat().every((v) => typeof v === 'boolean')) {
      options.mask = 'keep';
      options.keepMask = rows.map((r) => r.map((v) => (v ? 1 : 0)));
    } else {
      options.mask = 'additive';
      options.additiveMask = typeof o.mask === 'string' ? o.mask : matrixToText(/** @type {number[][]} */ (rows)); // numbers: not all booleans
    }
  }
  state.options = options;
  if (tokens) state.tokens = { q: (tokens.q ?? []).join(' '), k: (tokens.k ?? []).join(' ') };
  if (decimals !== undefined) state.decimals = decimals;
  return state;
}
