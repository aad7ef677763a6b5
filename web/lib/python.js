// Python scripts that rebuild every step of a trace from the problem's inputs, so a reader can
// check the explorer with the tools they trust. One generator, two dialects: NumPy, which writes
// each formula out, and PyTorch, written as PyTorch code is (rotate_half, masked_fill, gpt-oss's
// sink column) and checked against F.scaled_dot_product_attention. Both take every option, in
// both layouts.
//
// The scripts redo the maths on purpose, in their own step order and with their own mask rules:
// they are an independent check of the core, not a copy of its output. What is not maths (the
// key/value head each query head reads, the scale factor, the steps' names) comes from the trace.

import { exportError, headOf, matrixOf, problemContext } from './context.js';
import { numberWord } from './format.js';
import { english, stepFormula, stepTitle } from './i18n.js';

const NUMPY = {
  name: 'NumPy',
  file: 'attention_numpy.py',
  imports: ['import numpy as np'],
  dtype: 'np',
  array: (text) => `np.array(${text}, dtype=dt)`,
  bools: (text) => `np.array(${text})`,
  scalar: (x) => `dt(${x})`,
  sqrt: 'np.sqrt',
  tanh: 'np.tanh',
  axis: 'axis',
  zeros: (shape) => `np.zeros(${shape}, dtype=dt)`,
  upper: 'np.triu(np.ones((L, S), dtype=bool), k=1)',
  lower: 'np.tril(np.ones((S, L), dtype=bool), k=-1)',
  concat: { rows: 'np.hstack(head_outputs)', columns: 'np.vstack(head_outputs)' },
  softmax: [
    'def softmax(x, axis):',
    '    """exp(x - logsumexp(x)) along axis, as scipy.special.softmax; all -inf gives 0."""',
    '    m = np.max(x, axis=axis, keepdims=True)',
    '    m = np.where(np.isneginf(m), 0, m)',
    '    with np.errstate(divide="ignore", invalid="ignore"):',
    '        lse = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m',
    '        w = np.exp(x - lse)',
    '    return np.where(np.isneginf(lse), dt(0), w).astype(dt)',
  ],
  rows: 'np.atleast_2d(m).tolist()',
  printOptions: 'np.set_printoptions(precision=4, suppress=True, linewidth=120)',
  check: null,
  checkResult: [],
};

const TORCH = {
  name: 'PyTorch',
  file: 'attention_torch.py',
  imports: ['import torch', 'import torch.nn.functional as F'],
  dtype: 'torch',
  array: (text) => `torch.tensor(${text}, dtype=dt)`,
  bools: (text) => `torch.tensor(${text})`,
  scalar: (x) => `torch.tensor(${x}, dtype=dt)`,
  sqrt: 'torch.sqrt',
  tanh: 'torch.tanh',
  axis: 'dim',
  zeros: (shape) => `torch.zeros(${shape}, dtype=dt)`,
  upper: 'torch.ones(L, S, dtype=torch.bool).triu(1)',
  lower: 'torch.ones(S, L, dtype=torch.bool).tril(-1)',
  concat: { rows: 'torch.cat(head_outputs, dim=1)', columns: 'torch.cat(head_outputs, dim=0)' },
  softmax: [
    'def softmax(x, dim):',
    '    """exp(x - logsumexp(x)) along dim; a query whose keys are all masked gets weights 0."""',
    '    w = torch.softmax(x, dim=dim)',
    '    return torch.nan_to_num(w, nan=0.0)',
  ],
  rows: 'torch.atleast_2d(m).tolist()',
  printOptions: 'torch.set_printoptions(precision=4, sci_mode=False, linewidth=120)',
  check: sdpaCheck,
  checkResult: [
    '    print("matches torch.nn.functional.scaled_dot_product_attention" if sdpa_checked else "(no scaled_dot_product_attention check for these options)")',
  ],
};

function pyNumber(x) {
  if (Number.isNaN(x)) return 'math.nan';
  if (x === Infinity) return 'math.inf';
  if (x === -Infinity) return '-math.inf';
  const s = String(x);
  return /^-?\d+$/.test(s) ? `${s}.0` : s;
}

function pyList(m, cell = pyNumber, indent = '    ') {
  if (!Array.isArray(m[0])) return `[${m.map(cell).join(', ')}]`;
  return `[\n${m.map((row) => `${indent}[${row.map(cell).join(', ')}],`).join('\n')}\n]`;
}

const pyBool = (v) => (v ? 'True' : 'False');
const multiplies = (ctx) => ctx.scale.kind === 'none' || ctx.scale.kind === 'multiply';

/**
 * The script's opening comment: what it is, the problem's sizes, the recipe of its inputs, the steps.
 * `head`: { recipe, t } (the comment's language: the steps' titles and formulas).
 */
function header(ctx, trace, d, { recipe, t = english }) {
  const m = trace.meta;
  const lines = [
    `# ${t('export.script.title', { library: d.name })}`,
    `# ${t('export.script.generated')}`,
    `# ${t('export.script.layout', { layout: ctx.layout, precision: m.precision })}`,
    `# ${t('export.script.sizes', { queries: m.queries, keys: m.keys, d_k: m.d_k, d_v: m.d_v, heads: m.heads, kv_heads: m.kv_heads })}`,
  ];
  if (recipe) {
    lines.push(`# ${t('export.script.recipe')}`);
    for (const l of String(recipe).split('\n')) lines.push(`#   ${l}`);
  }
  // The explorer's name and formula of each step; the first head's stand for every head.
  const shown = trace.steps.filter((s) => (headOf(s) ?? 0) === 0);
  const width = Math.max(...shown.map((s) => s.id.length));
  lines.push(
    `# ${t('export.script.steps', { multi: m.heads > 1 ? 'yes' : 'no' })}`,
    ...shown.map((s) => `#   ${s.id.padEnd(width)}  ${stepTitle(s, t)}: ${stepFormula(s, t).text}`),
  );
  lines.push(`# ${t('export.script.run', { file: d.file })}`);
  return lines;
}

/** A comment's words (export.script.comment.*) in the language of `t`: the opening's and the sections'. */
const said = (t, id, values) => t(`export.script.comment.${id}`, values);

function projections(ctx, cols, t = english) {
  if (ctx.mode === 'qkv') return [`# ${said(t, 'given')}`];
  const Xkv = ctx.mode === 'cross' ? 'X_kv' : 'X';
  return [
    ['Q', 'X'],
    ['K', Xkv],
    ['V', Xkv],
  ].map(([n, x]) => {
    const b = ctx.bias[n] ? (cols ? ` + b_${n}[:, None]` : ` + b_${n}`) : '';
    return cols ? `${n} = W_${n} @ ${x}${b}` : `${n} = ${x} @ W_${n}${b}`;
  });
}

/** `factor` (QKᵀ is multiplied) or `divisor` (QKᵀ is divided), in the working precision. */
function scaleLine(ctx, factor, d, t = english) {
  switch (ctx.scale.kind) {
    case 'sqrt_dk':
      return `divisor = ${d.sqrt}(${d.scalar('d_k')})  # ${said(t, 'sqrt-dk')}`;
    case 'none':
      return `factor = 1.0  # ${said(t, 'not-scaled')}`;
    case 'divide':
      return `divisor = ${d.scalar(pyNumber(1 / factor))}  # ${said(t, 'scale', { scale: ctx.scale.text })}`;
    default:
      return `factor = ${d.scalar(pyNumber(factor))}  # ${said(t, 'scale', { scale: ctx.scale.text })}`;
  }
}

function maskLines(ctx, d, cols, t = english) {
  if (!ctx.causal && ctx.maskKind === 'none') return [];
  const lines = [`# ${said(t, 'mask', { cols: cols ? 'yes' : 'no' })}`, `M = ${d.zeros(cols ? '(S, L)' : '(L, S)')}`];
  if (ctx.maskKind === 'keep') {
    lines.push(`keep = ${d.bools(pyList(ctx.mask, pyBool))}  # ${said(t, 'keep')}`, 'M[~keep] = -math.inf');
  } else if (ctx.maskKind === 'additive') {
    lines.push(`M = M + ${d.array(pyList(ctx.mask))}`);
  }
  if (ctx.causal) lines.push(`M[${cols ? d.lower : d.upper}] = -math.inf  # ${said(t, 'causal', { cols: cols ? 'yes' : 'no' })}`);
  return lines;
}

// ---- positions, RoPE, a KV cache, position encodings, ALiBi, windows, sinks
//
// Both dialects and both layouts. In the columns layout a head's Q, K, V have a column per token,
// the scores are keys x queries and the softmax runs down each column, so every helper below
// takes the token axis from the layout.

const word = (v) => (typeof v === 'number' ? v : (numberWord(v) ?? Number(v)));
const listOf = (v) => (v == null ? [] : Array.isArray(v) ? v.flat() : typeof v === 'string' ? v.trim().split(/[\s,]+/) : [v]).map(word);
const tableOf = (v) => (typeof v === 'string' ? v.trim().split('\n').map(listOf) : v.map((row) => row.map(word)));

/** The position-dependent options as the script needs them; `any`: one of them is on (the script then computes positions). */
function positionOptions(problem) {
  const o = problem.options ?? {};
  const rope = o.rope === true ? {} : o.rope && typeof o.rope === 'object' ? o.rope : null;
  const window = Array.isArray(o.window) ? o.window.map((v) => (v == null ? Infinity : word(v))) : [Infinity, Infinity];
  const sinks = listOf(o.sink_logit).filter((v) => v !== -Infinity);
  const x = {
    past: problem.past_K != null,
    positions:
      o.positions && typeof o.positions === 'object' ? { queries: listOf(o.positions.queries), keys: listOf(o.positions.keys) } : null,
    rope,
    positional: o.positional === 'sinusoidal' ? 'sinusoidal' : problem.P != null ? 'learned' : null,
    alibi: o.alibi === true ? true : Array.isArray(o.alibi) || typeof o.alibi === 'string' ? listOf(o.alibi) : null,
    window: window.some((v) => v !== Infinity) ? window : null,
    sinkTokens: Number(o.sink_tokens ?? 0),
    sinkLogit: sinks.length > 0 ? listOf(o.sink_logit) : null,
    maskFill: o.mask_fill == null ? -Infinity : word(o.mask_fill),
    nan: o.fully_masked === 'nan',
  };
  const on = {
    past_K: x.past,
    positions: x.positions,
    rope: x.rope,
    positional: x.positional,
    alibi: x.alibi,
    window: x.window,
    sink_logit: x.sinkLogit,
    mask_fill: x.maskFill !== -Infinity,
    fully_masked: x.nan,
  };
  x.any = Object.values(on).some(Boolean);
  return x;
}

/** Slices of a head's matrix along its features: `[:, i]` in the rows layout, `[i, :]` in the columns one. */
const feature = (cols) => (i) => (cols ? `[${i}, :]` : `[:, ${i}]`);

/** Head `index`'s features of `name`, `width` of them (GQA: K and V of key/value head g). */
const headSlice = (name, width, index, cols) => `${name}${feature(cols)(`${index} * ${width}:(${index} + 1) * ${width}`)}`;

function pySinusoidal(d, cols) {
  const doc =
    '    """The original Transformer\'s encoding: sin(p / 10000^(2i/d)) in feature 2i, cos in 2i + 1' +
    `${cols ? '; a column per token' : ''}."""`;
  if (d === TORCH) {
    return [
      'def sinusoidal(positions, d_model):',
      doc,
      '    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)',
      '    angle = positions[:, None] / 10000.0 ** (two_i / d_model)',
      '    pe = torch.zeros(len(positions), d_model, dtype=torch.float64)',
      '    pe[:, 0::2] = torch.sin(angle)',
      '    pe[:, 1::2] = torch.cos(angle[:, :d_model // 2])',
      `    return pe${cols ? '.T' : ''}.to(dt)`,
    ];
  }
  return [
    'def sinusoidal(positions, d_model):',
    doc,
    '    pe = np.zeros((len(positions), d_model))',
    '    for f in range(d_model):',
    '        angle = positions / 10000.0 ** (2 * (f // 2) / d_model)',
    '        pe[:, f] = np.sin(angle) if f % 2 == 0 else np.cos(angle)',
    `    return pe${cols ? '.T' : ''}.astype(dt)`,
  ];
}

/** NumPy: the rotation pair by pair, as the formula reads. */
function pyRopeNumpy(rope, cols, t = english) {
  const interleaved = rope.style === 'interleaved';
  const tables = rope.cos != null;
  const f = feature(cols);
  const lines = [
    'def rope(x, positions, back=False):',
    `    """RoPE: feature pairs (${interleaved ? '2i, 2i + 1' : 'i, i + dims/2'}) turned by ${tables ? "the cos/sin tables' row p" : 'p * base^(-2i/dims)'}; features past dims unchanged; back: turned back (the rotation's transpose)."""`,
    '    out = x.copy()',
    '    for i in range(rope_dims // 2):',
    `        a, b = ${interleaved ? '2 * i, 2 * i + 1' : 'i, i + rope_dims // 2'}`,
  ];
  if (tables) {
    lines.push('        rows = positions.astype(int)', '        c, s = rope_cos[rows, i].astype(dt), rope_sin[rows, i].astype(dt)');
  } else {
    lines.push(
      `        angle = positions * rope_base ** (-2.0 * i / rope_dims)  # ${said(t, 'angle-float64')}`,
      '        c, s = np.cos(angle).astype(dt), np.sin(angle).astype(dt)',
    );
  }
  lines.push(
    '        s = -s if back else s',
    `        out${f('a')} = x${f('a')} * c - x${f('b')} * s`,
    `        out${f('b')} = x${f('a')} * s + x${f('b')} * c`,
    '    return out',
  );
  return lines;
}

/**
 * PyTorch: as Hugging Face applies it, x·cos + rotate_half(x)·sin ("half", Llama, GPT-NeoX), or as
 * GPT-J does with rotate_every_two and each cos/sin repeated for its pair ("interleaved").
 */
function pyRopeTorch(rope, cols, t = english) {
  const interleaved = rope.style === 'interleaved';
  const tables = rope.cos != null;
  const dim = cols ? 0 : 1;
  const f = feature(cols);
  const lines = [];
  if (interleaved) {
    lines.push(
      'def rotate_every_two(x):',
      '    """GPT-J\'s rotate_every_two: each pair (x_2i, x_2i+1) becomes (-x_2i+1, x_2i)."""',
      `    x1, x2 = x${f('0::2')}, x${f('1::2')}`,
      cols ? '    return torch.stack((-x2, x1), dim=1).flatten(0, 1)' : '    return torch.stack((-x2, x1), dim=2).flatten(1)',
    );
  } else {
    lines.push(
      'def rotate_half(x):',
      '    """Hugging Face\'s rotate_half: the halves (x1, x2) of the features become (-x2, x1)."""',
      `    half = x.shape[${dim}] // 2`,
      `    x1, x2 = x${f(':half')}, x${f('half:')}`,
      `    return torch.cat((-x2, x1), dim=${dim})`,
    );
  }
  const turn = interleaved ? 'rotate_every_two' : 'rotate_half';
  lines.push(
    '',
    '',
    'def rope(x, positions):',
    `    """RoPE: x cos + ${turn}(x) sin on the first rope_dims features (pairs ${interleaved ? '2i, 2i + 1' : 'i, i + dims/2'}), angles ${tables ? "from the cos/sin tables' row p" : 'p * base^(-2i/dims)'}; the rest unchanged."""`,
  );
  if (tables) {
    lines.push(
      '    rows = positions.long()',
      `    cos, sin = rope_cos[rows]${cols ? '.T' : ''}, rope_sin[rows]${cols ? '.T' : ''}  # ${said(t, 'rope-tables', { cols: cols ? 'yes' : 'no' })}`,
    );
  } else {
    lines.push(
      '    inv_freq = rope_base ** (-torch.arange(0, rope_dims, 2, dtype=torch.float64) / rope_dims)  # theta_i = base^(-2i/dims)',
      `    angle = ${cols ? 'inv_freq[:, None] * positions[None, :]' : 'positions[:, None] * inv_freq[None, :]'}  # ${said(t, 'angle-float64')}`,
      '    cos, sin = torch.cos(angle), torch.sin(angle)',
    );
  }
  lines.push(
    interleaved
      ? `    cos, sin = cos.repeat_interleave(2, dim=${dim}).to(dt), sin.repeat_interleave(2, dim=${dim}).to(dt)  # c_0, c_0, c_1, c_1, ...`
      : `    cos, sin = torch.cat((cos, cos), dim=${dim}).to(dt), torch.cat((sin, sin), dim=${dim}).to(dt)  # ${said(t, 'same-angle-halves')}`,
    `    turned, rest = x${f(':rope_dims')}, x${f('rope_dims:')}`,
    `    return torch.cat((turned * cos + ${turn}(turned) * sin, rest), dim=${dim})`,
  );
  return lines;
}

const PY_ALIBI_SLOPES = [
  'def alibi_slopes(n):',
  '    """ALiBi\'s slopes (Press et al., get_slopes): 2^(-8/n) powers; other counts borrow from 2n."""',
  '    def power_of_two(n):',
  '        start = 2.0 ** (-8.0 / n)',
  '        return [start * start ** i for i in range(n)]',
  '    closest = 2 ** int(math.floor(math.log2(n)))',
  '    if closest == n:',
  '        return power_of_two(n)',
  '    return power_of_two(closest) + alibi_slopes(2 * closest)[0::2][:n - closest]',
];

function pySoftmaxSink(d, cols) {
  const axis = cols ? 0 : 1;
  if (d === TORCH) {
    return [
      'def softmax_with_sink(x, sink):',
      `    """gpt-oss's sink: the sink logit joins the scores as one more ${cols ? 'row' : 'column'}, the softmax runs, the sink's weight is dropped (${cols ? 'columns' : 'rows'} sum to 1 - its share)."""`,
      `    sink_${cols ? 'row' : 'column'} = torch.full(${cols ? '(1, x.shape[1])' : '(x.shape[0], 1)'}, sink, dtype=dt)`,
      `    return torch.softmax(torch.cat([x, sink_${cols ? 'row' : 'column'}], dim=${axis}), dim=${axis})${cols ? '[:-1, :]' : '[:, :-1]'}`,
    ];
  }
  return [
    'def softmax_with_sink(x, sink):',
    `    """softmax over [x, sink] without the sink's ${cols ? 'row' : 'column'}: ${cols ? 'columns' : 'rows'} sum to 1 - the sink's share."""`,
    `    m = np.maximum(np.max(x, axis=${axis}, keepdims=True), sink)`,
    '    e = np.exp(x - m)',
    `    return (e / (np.exp(sink - m) + np.sum(e, axis=${axis}, keepdims=True))).astype(dt)`,
  ];
}

/** NumPy's softmax loses a finite fill's digits (logsumexp of numbers near -1e9): e^(x - max) / sum keeps them. */
const fillNeedsShiftedSoftmax = (x, d) => d === NUMPY && !x.sinkLogit && x.maskFill !== -Infinity;

/** The functions the options need, after softmax. */
function positionFunctions(x, d, cols) {
  const lines = [];
  const add = (f) => lines.push('', '', ...f);
  if (x.positional === 'sinusoidal') add(pySinusoidal(d, cols));
  if (x.rope) add(d === TORCH ? pyRopeTorch(x.rope, cols, x.t) : pyRopeNumpy(x.rope, cols, x.t));
  if (x.alibi === true) add(PY_ALIBI_SLOPES);
  if (x.sinkLogit || fillNeedsShiftedSoftmax(x, d)) add(pySoftmaxSink(d, cols));
  return lines;
}

/** X plus its position encoding, before the projections. */
function positionalLines(x, cols) {
  if (!x.positional) return [];
  const pe =
    x.positional === 'sinusoidal'
      ? `sinusoidal(q_pos, X.shape[${cols ? 0 : 1}])  # ${said(x.t ?? english, 'at-query-positions')}`
      : `P  # ${said(x.t ?? english, 'learned-positions')}`;
  return [`PE = ${pe}`, 'X = X + PE', 'steps += [("positional", None, PE), ("X_pos", None, X)]'];
}

/** Positions: queries at past ... past + L - 1, keys at 0 ... past + S - 1, unless given. */
function positionLines(x, d, m, cols) {
  const given = (list) => (list?.length ? pyList(list) : null);
  const q = given(x.positions?.queries);
  const k = given(x.positions?.keys);
  const lines = [`past = ${x.past ? `past_K.shape[${cols ? 1 : 0}]` : '0'}  # ${said(x.t ?? english, 'cached-tokens')}`];
  if (d === TORCH) {
    lines.push(
      `q_pos = ${q ? `torch.tensor(${q}, dtype=torch.float64)` : `torch.arange(past, past + ${m.queries}, dtype=torch.float64)`}  # ${said(x.t ?? english, 'query-positions')}`,
      `k_pos = ${k ? `torch.tensor(${k}, dtype=torch.float64)` : `torch.arange(${m.keys}, dtype=torch.float64)`}  # ${said(x.t ?? english, 'key-positions')}`,
    );
  } else {
    lines.push(
      `q_pos = np.array(${q ?? `[past + i for i in range(${m.queries})]`}, dtype=np.float64)  # ${said(x.t ?? english, 'query-positions')}`,
      `k_pos = np.array(${k ?? `list(range(${m.keys}))`}, dtype=np.float64)  # ${said(x.t ?? english, 'key-positions')}`,
    );
  }
  return lines;
}

/** The step rope_angles: a row per position a query or key sits at (that the tables hold), a column per pair. */
function ropeAngleLines(r, d, cols, t = english) {
  const torch = d === TORCH;
  const tables = r.cos != null;
  const lines = [
    `positions = sorted({int(p) for p in q_pos.tolist() + k_pos.tolist()${tables ? ' if p < rope_cos.shape[0]' : ''}})  # ${said(t, 'angle-table-rows')}`,
  ];
  if (tables) {
    lines.push(`angles = ${torch ? 'torch.atan2' : 'np.arctan2'}(rope_sin[positions], rope_cos[positions])  # ${said(t, 'pair-angle')}`);
  } else {
    lines.push(
      torch
        ? 'angles = torch.tensor(positions, dtype=torch.float64)[:, None] * rope_base ** (-torch.arange(0, rope_dims, 2, dtype=torch.float64) / rope_dims)'
        : 'angles = np.array(positions, dtype=np.float64)[:, None] * rope_base ** (-2.0 * np.arange(rope_dims // 2) / rope_dims)',
    );
  }
  lines.push(`steps.append(("rope_angles", None, angles${cols ? '.T' : ''}${torch ? '.to(dt)' : '.astype(dt)'}))`);
  return lines;
}

/** RoPE's settings and ALiBi's slopes, once d_k and the heads are known. */
function settingLines(x, d, cols) {
  const lines = [];
  const r = x.rope;
  if (r) {
    const all = x.variant?.diff ? 'd_k // 2' : 'd_k'; // differential attention rotates each half as a head
    lines.push(`rope_dims = ${r.dims != null ? word(r.dims) : all}  # ${said(x.t ?? english, 'rotated-features')}`);
    const table = (t) => (d === TORCH ? `torch.tensor(${pyList(tableOf(t))}, dtype=torch.float64)` : `np.array(${pyList(tableOf(t))})`);
    if (r.cos != null)
      lines.push(`rope_cos = ${table(r.cos)}  # ${said(x.t ?? english, 'row-per-position')}`, `rope_sin = ${table(r.sin)}`);
    else lines.push(`rope_base = ${pyNumber(word(r.base ?? 10000))}`);
    lines.push(...ropeAngleLines(r, d, cols, x.t));
  }
  if (x.alibi)
    lines.push(`slopes = ${x.alibi === true ? 'alibi_slopes(heads)' : pyList(x.alibi)}  # ${said(x.t ?? english, 'alibi-slopes')}`);
  if (x.sinkLogit) {
    const one = x.sinkLogit.length === 1;
    lines.push(
      `sink_logit = ${one ? `[${pyNumber(x.sinkLogit[0])}] * heads` : pyList(x.sinkLogit)}  # ${said(x.t ?? english, 'one-per-head')}`,
    );
  }
  return lines;
}

const hasMask = (x, ctx) => ctx.causal || ctx.maskKind !== 'none' || x.window != null;

/**
 * The mask, queries x keys (keys x queries in the columns layout): causal, the window (sinks stay
 * visible) and the user's mask, on positions. `hidden` is True where a score is hidden; M is the
 * additive mask (0 or the user's numbers where kept, -inf where hidden).
 */
function positionMaskLines(x, ctx, d, cols) {
  if (!hasMask(x, ctx)) return [];
  const torch = d === TORCH;
  const size = cols ? 'S, L' : 'L, S';
  const lines = [
    `# ${said(x.t ?? english, 'position-mask', { cols: cols ? 'yes' : 'no' })}`,
    torch ? `hidden = torch.zeros(${size}, dtype=torch.bool)` : `hidden = np.zeros((${size}), dtype=bool)`,
    cols
      ? `q, p = k_pos[:, None], q_pos[None, :]  # ${said(x.t ?? english, 'positions-cols')}`
      : `p, q = q_pos[:, None], k_pos[None, :]  # ${said(x.t ?? english, 'positions-rows')}`,
  ];
  if (ctx.maskKind === 'keep') {
    lines.push(`keep = ${d.bools(pyList(ctx.mask, pyBool))}  # ${said(x.t ?? english, 'keep')}`, 'hidden |= ~keep');
  } else if (ctx.maskKind === 'additive') {
    if (torch) lines.push(`user_mask = ${d.array(pyList(ctx.mask))}`, 'hidden |= torch.isneginf(user_mask)');
    else lines.push(`user_mask = np.array(${pyList(ctx.mask)})`, 'hidden |= np.isneginf(user_mask)');
  }
  if (ctx.causal) lines.push(`hidden |= q > p  # ${said(x.t ?? english, 'causal-positions')}`);
  if (x.window) {
    lines.push(
      `left, right, sink_tokens = ${pyNumber(x.window[0])}, ${pyNumber(x.window[1])}, ${x.sinkTokens}`,
      `hidden |= ((q < p - left) | (q > p + right)) & ~(q < sink_tokens)  # ${said(x.t ?? english, 'window')}`,
    );
  }
  if (torch) {
    const base = ctx.maskKind === 'additive' ? 'user_mask' : `torch.zeros(${size}, dtype=dt)`;
    lines.push(
      `M = ${base}.masked_fill(hidden, -math.inf)  # ${said(x.t ?? english, 'additive-hidden', { user: ctx.maskKind === 'additive' ? 'yes' : 'no' })}`,
    );
  } else {
    lines.push(`M = ${d.zeros(`(${size})`)}  # ${said(x.t ?? english, 'additive-zero')}`);
    if (ctx.maskKind === 'additive') lines.push('M = M + user_mask.astype(dt)');
    lines.push('M[hidden] = -math.inf');
  }
  return lines;
}

/** The steps of one head that the options add or change, in the trace's order. */
function positionHeadLines(x, ctx, d, cols) {
  const torch = d === TORCH;
  const axis = cols ? 0 : 1;
  const before = ['    steps += [("Q", h, Qh), ("K", h, Kh), ("V", h, Vh)]'];
  const v = x.variant;
  if (v?.qk) {
    before.push(
      ...(x.gradients ? [`    Q_raw, K_raw = Qh, Kh  # ${said(x.t ?? english, 'raw-qk')}`] : []),
      `    Qh, Kh = qk_norm(Qh, g_q), qk_norm(Kh, g_k)  # ${said(x.t ?? english, 'qk-norm')}`,
      '    steps += [("Q_normed", h, Qh), ("K_normed", h, Kh)]',
    );
  }
  if (x.rope && v?.diff) {
    const halves = (m, pos) =>
      torch
        ? `torch.cat([rope(${m}[:, :w], ${pos}), rope(${m}[:, w:], ${pos})], dim=1)`
        : `np.hstack([rope(${m}[:, :w], ${pos}), rope(${m}[:, w:], ${pos})])`;
    before.push(
      `    Qh = ${halves('Qh', 'q_pos')}  # ${said(x.t ?? english, 'rope-halves')}`,
      `    Kh = ${halves('Kh', 'k_pos[past:]')}  # ${said(x.t ?? english, 'rope-new-keys')}`,
      '    steps += [("Q_rot", h, Qh), ("K_rot", h, Kh)]',
    );
  } else if (x.rope) {
    before.push(
      '    Qh = rope(Qh, q_pos)',
      `    Kh = rope(Kh, k_pos[past:])  # ${said(x.t ?? english, 'rope-new-keys')}`,
      '    steps += [("Q_rot", h, Qh), ("K_rot", h, Kh)]',
    );
  }
  if (x.past) {
    const join = (a, b) => (torch ? `torch.cat([${a}, ${b}], dim=${cols ? 1 : 0})` : `${cols ? 'np.hstack' : 'np.vstack'}([${a}, ${b}])`);
    before.push(
      `    Kh = ${join(headSlice('past_K', 'd_k', 'g', cols), 'Kh')}  # ${said(x.t ?? english, 'cache-then-new', { cols: cols ? 'yes' : 'no' })}`,
      `    Vh = ${join(headSlice('past_V', 'd_v', 'g', cols), 'Vh')}`,
      '    steps += [("K_cache", h, Kh), ("V_cache", h, Vh)]',
    );
  }
  const after = [];
  if (x.alibi) {
    const distance = cols ? 'k_pos[:, None] - q_pos[None, :]' : 'q_pos[:, None] - k_pos[None, :]';
    after.push(
      torch
        ? `    bias = (-slopes[h] * (${distance}).abs()).to(dt)  # ALiBi: -m |p - q|`
        : `    bias = (-slopes[h] * np.abs(${distance})).astype(dt)  # ALiBi: -m |p - q|`,
      '    logits = logits + bias',
      '    steps += [("alibi", h, bias), ("biased", h, logits)]',
    );
  }
  if (hasMask(x, ctx)) {
    // The trace's mask step: 1 keeps and 0 hides, or the additive mask itself.
    const maskStep = ctx.maskKind === 'additive' ? 'M' : torch ? '(~hidden).to(torch.float64)' : '(M == 0) * 1.0';
    after.push(`    steps.append(("mask", h, ${maskStep}))`);
    if (torch) {
      if (ctx.maskKind === 'additive') after.push('    logits = logits + user_mask');
      after.push(
        x.maskFill === -Infinity
          ? '    logits = logits.masked_fill(hidden, -math.inf)'
          : `    logits = logits.masked_fill(hidden, ${pyNumber(x.maskFill)})  # ${said(x.t ?? english, 'mask-fill')}`,
      );
    } else {
      after.push('    logits = logits + M');
      if (x.maskFill !== -Infinity)
        after.push(`    logits[hidden] = dt(${pyNumber(x.maskFill)})  # ${said(x.t ?? english, 'mask-fill-replaces')}`);
    }
    after.push('    steps.append(("masked", h, logits))');
  }
  const where = said(x.t ?? english, 'softmax-axis', { cols: cols ? 'yes' : 'no' });
  let weights;
  if (v?.sigmoid) {
    weights = [`    weights = ${torch ? 'torch.sigmoid' : 'sigmoid'}(logits + sigmoid_bias)  # ${said(x.t ?? english, 'sigmoid-weights')}`];
    if (hasMask(x, ctx))
      weights.push(
        `    weights = ${torch ? 'weights.masked_fill(hidden, 0.0)' : 'np.where(hidden, dt(0), weights)'}  # ${said(x.t ?? english, 'hidden-weight')}`,
      );
  } else if (x.sinkLogit) {
    weights = [
      `    weights = softmax_with_sink(logits, ${torch ? 'sink_logit[h]' : 'dt(sink_logit[h])'})  # ${said(x.t ?? english, 'sink')}`,
    ];
  } else if (fillNeedsShiftedSoftmax(x, d)) {
    // Scores of fill values are around -1e9: e / sum keeps their digits, logsumexp would not.
    weights = [`    weights = softmax_with_sink(logits, dt(-math.inf))  # ${said(x.t ?? english, 'no-sink')}`];
  } else if (x.nan && torch) {
    weights = [
      `    weights = torch.softmax(logits, dim=${axis})  # ${said(x.t ?? english, 'softmax-axis-nan', { cols: cols ? 'yes' : 'no' })}`,
    ];
  } else {
    weights = [`    weights = softmax(logits, ${d.axis}=${axis})  # ${where}`];
    if (x.nan) {
      const all = `np.all(np.isneginf(logits), axis=${axis})`;
      weights.push(`    weights[${cols ? `:, ${all}` : all}] = math.nan  # ${said(x.t ?? english, 'fully-masked-nan')}`);
    }
  }
  return { before, after, weights };
}

/** Linear attention's settings (options.attention "linear"), or null. */
function linearOptions(problem) {
  const o = problem.options ?? {};
  if (o.attention !== 'linear') return null;
  return {
    map: o.feature_map ?? 'elu+1',
    normalize: o.normalize !== false,
    decay: o.causal ? word(o.decay ?? 1) : 1,
  };
}

/**
 * The variants of issue 31 the scripts recompute (rows layout: the columns layout refuses them), or
 * null: QK-norm, the output gate (W_G), sigmoid attention, differential attention.
 */
function variantOptions(problem, trace) {
  const o = problem.options ?? {};
  const on = (v) => v != null && v !== false;
  const q = on(o.qk_norm) ? o.qk_norm : null;
  const qk = q && {
    layer: q.type === 'layer',
    eps: word(q.eps ?? 1e-6),
    g_q: q.g_q != null ? listOf(q.g_q) : null,
    g_k: q.g_k != null ? listOf(q.g_k) : null,
  };
  const dOpt = on(o.differential) ? o.differential : null;
  let diff = null;
  if (dOpt) {
    const lambdas = listOf(dOpt.lambda);
    diff = {
      lambdas: lambdas.length === 1 ? Array(trace.meta.heads).fill(lambdas[0]) : lambdas,
      init: word(dOpt.lambda_init ?? 0.8),
      norm: dOpt.norm !== false,
    };
  }
  const sigmoid = o.score_fn === 'sigmoid' ? { bias: o.sigmoid_bias == null ? null : word(o.sigmoid_bias) } : null;
  const gate = problem.W_G != null ? { bias: problem.b_G != null } : null;
  return qk || diff || sigmoid || gate ? { qk, diff, sigmoid, gate } : null;
}

/** The functions the variants need: the logistic sigmoid (NumPy), QK-norm of each row, differential attention's head norm. */
function variantFunctions(v, d) {
  const torch = d === TORCH;
  const lines = [];
  const add = (f) => lines.push('', '', ...f);
  const sum = (e) => (torch ? `(${e}).sum(dim=1, keepdim=True)` : `np.sum(${e}, axis=1, keepdims=True)`);
  if (!torch && (v.sigmoid || v.gate)) {
    add([
      'def sigmoid(x):',
      '    """The logistic sigmoid 1 / (1 + e^-x), 0 at -inf."""',
      '    with np.errstate(over="ignore"):',
      '        return (1 / (1 + np.exp(-x))).astype(dt)',
    ]);
  }
  if (v.qk) {
    add([
      'def qk_norm(x, g):',
      `    """QK-norm of each row of one head's d_k features: ${v.qk.layer ? '(x - mean) / sqrt(var + eps) * g (layer norm, population variance, no bias)' : 'x / sqrt(mean(x^2) + eps) * g (RMS norm)'}."""`,
      ...(v.qk.layer ? [`    x = x - ${sum('x')} / x.shape[1]`] : []),
      `    return x / ${d.sqrt}(${sum('x * x')} / x.shape[1] + qk_eps) * g`,
    ]);
  }
  if (v.diff?.norm) {
    add([
      'def head_norm(x):',
      '    """Differential attention\'s norm of each output row: x / sqrt(mean(x^2) + 1e-5) * (1 - lambda_init)."""',
      `    return x / ${d.sqrt}(${sum('x * x')} / x.shape[1] + 1e-5) * (1 - lambda_init)`,
    ]);
  }
  return lines;
}

/** The variants' settings once d_k, d_v and the heads are known: the gains, the bias, λ, the gate. */
function variantSettingLines(v, d, ctx, t = english) {
  const torch = d === TORCH;
  const lines = [];
  const gains = (g) => (g ? d.array(pyList(g)) : torch ? 'torch.ones(d_k, dtype=dt)' : 'np.ones(d_k, dtype=dt)');
  if (v.qk) lines.push(`qk_eps = ${pyNumber(v.qk.eps)}`, `g_q, g_k = ${gains(v.qk.g_q)}, ${gains(v.qk.g_k)}  # ${said(t, 'qk-gains')}`);
  if (v.sigmoid) {
    const b = v.sigmoid.bias == null ? '-math.log(S)' : pyNumber(v.sigmoid.bias);
    lines.push(`sigmoid_bias = ${d.scalar(b)}  # ${v.sigmoid.bias == null ? said(t, 'sigmoid-bias') : 'b'}`);
  }
  if (v.diff) {
    lines.push(
      `lam = ${pyList(v.diff.lambdas)}  # ${said(t, 'lambda')}`,
      `lambda_init = ${pyNumber(v.diff.init)}`,
      `w = d_k // 2  # ${said(t, 'half')}`,
    );
    if (ctx.scale.kind === 'sqrt_dk') lines.push(`divisor = ${d.sqrt}(${d.scalar('w')})  # ${said(t, 'sqrt-half')}`);
  }
  if (v.gate) {
    lines.push(
      `G = ${torch ? 'torch.sigmoid' : 'sigmoid'}(X @ W_G${v.gate.bias ? ' + b_G' : ''})  # ${said(t, 'gates')}`,
      `gate_headwise = W_G.shape[1] != heads * d_v  # ${said(t, 'gate-headwise')}`,
    );
  }
  return lines;
}

/** Linear attention's head loop: φ(Q), φ(K), Λ = φ(Q)φ(K)ᵀ ∘ C, D = Λ's row sums, Λ·V / D. */
function linearHeadLoop(ctx, trace, d, x) {
  const lin = x.linear;
  const torch = d === TORCH;
  const phi = {
    'elu+1': torch ? 'F.elu(x) + 1' : 'np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))',
    relu: torch ? 'torch.relu(x)' : 'np.maximum(x, 0)',
    identity: 'x',
  }[lin.map];
  const positions = (list, n) => (list ? d.array(pyList(list)) : torch ? `torch.arange(${n}, dtype=dt)` : `np.arange(${n}, dtype=dt)`);
  const lines = [`def phi(x):`, `    return ${phi}  # ${said(x.t ?? english, 'feature-map', { map: lin.map })}`, ''];
  if (ctx.causal) {
    lines.push(
      `qpos, kpos = ${positions(x.positions?.queries, 'L')}, ${positions(x.positions?.keys, 'S')}  # ${said(x.t ?? english, 'linear-positions')}`,
      `decay = ${d.scalar(pyNumber(lin.decay))}`,
      torch
        ? 'C = torch.where(kpos[None, :] <= qpos[:, None], decay ** (qpos[:, None] - kpos[None, :]), torch.zeros((), dtype=dt))'
        : 'C = np.where(kpos[None, :] <= qpos[:, None], decay ** (qpos[:, None] - kpos[None, :]), 0).astype(dt)',
      `# ${said(x.t ?? english, 'decay')}`,
    );
  }
  const kvGroup = trace.steps.filter((s) => s.id === 'Q').map((s) => s.kv_group);
  lines.push(
    `kv_group = [${kvGroup.join(', ')}]  # ${said(x.t ?? english, 'kv-group')}`,
    'for h in range(heads):',
    '    g = kv_group[h]',
    `    Qh = ${headSlice('Q', 'd_k', 'h', false)}`,
    `    Kh = ${headSlice('K', 'd_k', 'g', false)}`,
    `    Vh = ${headSlice('V', 'd_v', 'g', false)}`,
    '    phi_Q, phi_K = phi(Qh), phi(Kh)',
    '    steps += [("Q", h, Qh), ("K", h, Kh), ("V", h, Vh), ("phi_Q", h, phi_Q), ("phi_K", h, phi_K)]',
    `    linear_scores = phi_Q @ phi_K.T${ctx.causal ? ' * C' : ''}  # ${said(x.t ?? english, 'linear-scores')}`,
    '    steps.append(("linear_scores", h, linear_scores))',
  );
  if (lin.normalize) {
    lines.push(
      `    normalizer = linear_scores.sum(${d.axis}=1, ${torch ? 'keepdim' : 'keepdims'}=True)  # ${said(x.t ?? english, 'normalizer')}`,
      '    steps.append(("normalizer", h, normalizer))',
      '    head_outputs.append((linear_scores @ Vh) / normalizer)',
    );
  } else {
    lines.push(`    head_outputs.append(linear_scores @ Vh)  # ${said(x.t ?? english, 'not-normalized')}`);
  }
  if (trace.meta.heads > 1 || ctx.hasWO) lines.push('    steps.append(("head_output", h, head_outputs[-1]))');
  if (x.gradients) {
    lines.push(
      `    saved.append((Qh, Kh, Vh, phi_Q, phi_K, linear_scores, ${lin.normalize ? 'normalizer' : 'None'}, head_outputs[-1]))  # ${said(x.t ?? english, 'backward-reads')}`,
    );
  }
  return lines;
}

/** NumPy: the backward pass of one linear attention head after another (rows layout), as gradients.cpp takes it. */
function linearGradientHeadLines(ctx, trace, x) {
  const lin = x.linear;
  const slope = {
    'elu+1': 'np.where(x > 0, 1, np.exp(np.minimum(x, 0))).astype(dt)',
    relu: '(x > 0).astype(dt)',
    identity: 'np.ones_like(x)',
  }[lin.map];
  const headOutput = trace.meta.heads > 1 || ctx.hasWO;
  const lines = [
    'def phi_slope(x):',
    `    return ${slope}  # ${said(x.t ?? english, 'phi-slope', { map: lin.map })}`,
    '',
    'for h in range(heads):',
    '    g = kv_group[h]',
    '    Qh, Kh, Vh, phi_Q, phi_K, Lam, D, Oh = saved[h]',
    '    dH = d_concat[:, h * d_v:(h + 1) * d_v]',
    ...(headOutput ? ['    steps.append(("dhead_output", h, dH))'] : []),
  ];
  if (lin.normalize) {
    lines.push('    dLam = (dH @ Vh.T - np.sum(dH * Oh, axis=1, keepdims=True)) / D  # dO_i . (V_j - O_i) / D_i', '    dU = dH / D');
  } else {
    lines.push('    dLam = dH @ Vh.T', '    dU = dH');
  }
  lines.push(
    '    steps.append(("dlinear_scores", h, dLam))',
    '    dVh = Lam.T @ dU',
    '    steps.append(("dV", h, dVh))',
    `    dC = dLam${ctx.causal ? ` * C  # ${said(x.t ?? english, 'through-decay')}` : ''}`,
    '    dphi_Q, dphi_K = dC @ phi_K, dC.T @ phi_Q',
    '    steps += [("dphi_Q", h, dphi_Q), ("dphi_K", h, dphi_K)]',
    `    dQh, dKh = dphi_Q * phi_slope(Qh), dphi_K * phi_slope(Kh)  # ${said(x.t ?? english, 'through-map')}`,
    '    steps += [("dQ", h, dQh), ("dK", h, dKh)]',
  );
  return lines;
}

/** One query head: slice its Q, K, V (grouped-query attention: K, V of its key/value head g). */
function headLoop(ctx, trace, d, cols, x) {
  if (x.linear) return linearHeadLoop(ctx, trace, d, x);
  const kvGroup = trace.steps.filter((s) => s.id === 'Q').map((s) => s.kv_group);
  const withPositions = x.any;
  const lines = [
    `kv_group = [${kvGroup.join(', ')}]  # ${said(x.t ?? english, 'kv-group')}`,
    'for h in range(heads):',
    '    g = kv_group[h]',
    `    Qh = ${headSlice('Q', 'd_k', 'h', cols)}`,
    `    Kh = ${headSlice('K', 'd_k', 'g', cols)}`,
    `    Vh = ${headSlice('V', 'd_v', 'g', cols)}`,
  ];
  const options = withPositions ? positionHeadLines(x, ctx, d, cols) : null;
  if (options) lines.push(...options.before);
  if (x.variant) return [...lines, ...variantHeadLines(ctx, trace, d, x, options)];
  lines.push(
    cols
      ? `    scores = Kh.T @ Qh  # ${said(x.t ?? english, 'keys-x-queries')}`
      : `    scores = Qh @ Kh.T  # ${said(x.t ?? english, 'queries-x-keys')}`,
    multiplies(ctx) ? '    scaled = scores * factor' : '    scaled = scores / divisor',
    options
      ? '    steps += [("scores", h, scores), ("scaled", h, scaled)]'
      : '    steps += [("Q", h, Qh), ("K", h, Kh), ("V", h, Vh), ("scores", h, scores), ("scaled", h, scaled)]',
    '    logits = scaled',
  );
  if (ctx.softcap > 0) lines.push(`    logits = softcap * ${d.tanh}(logits / softcap)`, '    steps.append(("softcapped", h, logits))');
  if (options) {
    lines.push(...options.after, ...options.weights);
  } else {
    if (ctx.causal || ctx.maskKind !== 'none') {
      // The trace's mask step: 1 keeps and 0 hides, or the additive mask itself.
      const maskStep = ctx.maskKind === 'additive' ? 'M' : '(M == 0) * 1.0';
      lines.push(`    steps.append(("mask", h, ${maskStep}))`, '    logits = logits + M', '    steps.append(("masked", h, logits))');
    }
    lines.push(
      `    weights = softmax(logits, ${d.axis}=${cols ? 0 : 1})  # ${said(x.t ?? english, 'softmax-axis', { cols: cols ? 'yes' : 'no' })}`,
    );
  }
  lines.push(
    '    steps.append(("weights", h, weights))',
    cols ? '    head_outputs.append(Vh @ weights)' : '    head_outputs.append(weights @ Vh)',
  );
  if (trace.meta.heads > 1 || ctx.hasWO) lines.push('    steps.append(("head_output", h, head_outputs[-1]))');
  if (x.gradients) lines.push(`    saved.append((Qh, Kh, Vh, weights, scaled))  # ${said(x.t ?? english, 'backward-reads')}`);
  if (withPositions && d.check && sdpaSkip(ctx, x) == null) {
    const bias = [x.alibi && 'bias', hasMask(x, ctx) && 'M'].filter(Boolean).join(' + ');
    const T = (e) => (cols ? `${e.includes(' ') ? `(${e})` : e}.T` : e);
    lines.push(
      `    per_head.append((${[T('Qh'), T('Kh'), T('Vh'), ...(bias ? [T(bias)] : [])].join(', ')}))  # ${said(x.t ?? english, 'per-head-check')}`,
    );
  }
  return lines;
}

/**
 * A head of the variants (rows layout, after its Q, K, V, QK-norm and RoPE): the scores and
 * weights (differential attention: each half's softmax, A₁ − λA₂; sigmoid attention: σ(x + b)),
 * the head's output, differential attention's norm, the gate.
 */
function variantHeadLines(ctx, trace, d, x, options) {
  const v = x.variant;
  const torch = d === TORCH;
  const lines = [];
  const scale = multiplies(ctx) && !(v.diff && ctx.scale.kind === 'sqrt_dk') ? ' * factor' : ' / divisor';
  if (v.diff) {
    const mask = hasMask(x, ctx);
    if (x.alibi) {
      lines.push(
        torch
          ? '    bias = (-slopes[h] * (q_pos[:, None] - k_pos[None, :]).abs()).to(dt)  # ALiBi: -m |p - q|'
          : '    bias = (-slopes[h] * np.abs(q_pos[:, None] - k_pos[None, :])).astype(dt)  # ALiBi: -m |p - q|',
        '    steps.append(("alibi", h, bias))',
      );
    }
    if (mask)
      lines.push(
        `    steps.append(("mask", h, ${ctx.maskKind === 'additive' ? 'M' : torch ? '(~hidden).to(torch.float64)' : '(M == 0) * 1.0'}))`,
      );
    lines.push(
      '    halves = []',
      `    for k in range(2):  # ${said(x.t ?? english, 'diff-halves')}`,
      `        logits = (Qh[:, k * w:(k + 1) * w] @ Kh[:, k * w:(k + 1) * w].T)${scale}`,
    );
    if (ctx.softcap > 0) lines.push(`        logits = softcap * ${d.tanh}(logits / softcap)`);
    if (x.alibi) lines.push('        logits = logits + bias');
    if (mask) {
      if (torch) {
        if (ctx.maskKind === 'additive') lines.push('        logits = logits + user_mask');
        lines.push(`        logits = logits.masked_fill(hidden, ${x.maskFill === -Infinity ? '-math.inf' : pyNumber(x.maskFill)})`);
      } else {
        lines.push('        logits = logits + M');
        if (x.maskFill !== -Infinity) lines.push(`        logits[hidden] = dt(${pyNumber(x.maskFill)})`);
      }
    }
    lines.push(
      ...options.weights.map((l) => `    ${l}`),
      '        halves.append(weights)',
      '    A1, A2 = halves',
      `    weights = A1 - lam[h] * A2  # ${said(x.t ?? english, 'common-mode')}`,
      '    steps += [("weights_1", h, A1), ("weights_2", h, A2)]',
    );
    if (x.gradients) lines.push('    A_halves = (A1, A2)');
  } else {
    lines.push(
      `    scores = Qh @ Kh.T  # ${said(x.t ?? english, 'queries-x-keys')}`,
      `    scaled = scores${scale}`,
      '    steps += [("scores", h, scores), ("scaled", h, scaled)]',
      '    logits = scaled',
    );
    if (ctx.softcap > 0) lines.push(`    logits = softcap * ${d.tanh}(logits / softcap)`, '    steps.append(("softcapped", h, logits))');
    lines.push(...options.after, ...options.weights);
  }
  const more = (v.diff && v.diff.norm) || v.gate;
  lines.push('    steps.append(("weights", h, weights))', '    head = weights @ Vh');
  if (trace.meta.heads > 1 || ctx.hasWO || more) lines.push('    steps.append(("head_output", h, head))');
  if (x.gradients) {
    lines.push(
      `    saved.append((Qh, Kh, Vh, weights, ${v.diff ? 'None' : 'scaled'}))  # ${said(x.t ?? english, 'backward-reads')}`,
      `    extra.append(dict(head=head${v.qk ? ', Q_raw=Q_raw, K_raw=K_raw' : ''}${v.diff ? ', A_halves=A_halves' : ''}))`,
    );
  }
  if (v.diff?.norm) lines.push('    head = head_norm(head)', '    steps.append(("head_normed", h, head))');
  if (v.gate) {
    lines.push('    Gh = G[:, h:h + 1] if gate_headwise else G[:, h * d_v:(h + 1) * d_v]');
    if (x.gradients) lines.push(`    extra[-1].update(pre_gate=head, gate=Gh)  # ${said(x.t ?? english, 'gate-saved')}`);
    lines.push('    head = head * Gh', '    steps += [("gate", h, Gh), ("gated_output", h, head)]');
  }
  lines.push('    head_outputs.append(head)');
  return lines;
}

/** Why scaled_dot_product_attention cannot check these options, or null when it can. */
function sdpaSkip(ctx, x) {
  const t = x.t ?? english;
  if (x.variant) {
    const v = x.variant;
    const names = [v.qk && 'qk', v.gate && 'gate', v.sigmoid && 'sigmoid', v.diff && 'diff']
      .filter(Boolean)
      .map((n) => said(t, `variant-${n}`));
    return said(t, 'skip-variants', { names: names.reduce((a, b) => said(t, 'or', { a, b })) });
  }
  if (x.linear) return said(t, 'skip-linear');
  if (ctx.softcap > 0) return said(t, 'skip-softcap');
  if (x.sinkLogit) return said(t, 'skip-sink');
  if (x.maskFill !== -Infinity) return said(t, 'skip-fill');
  return null;
}

const sdpaTolerance = (precision) => `tol = dict(rtol=${precision === 'float32' ? '1e-5, atol=1e-6' : '1e-10, atol=1e-12'})`;

/** PyTorch only: the head outputs against F.scaled_dot_product_attention, or why not (sdpaSkip). */
function sdpaCheck(ctx, precision, cols, x) {
  const lines = [`# ---- ${said(x.t ?? english, 'check')}`];
  const skip = sdpaSkip(ctx, x);
  if (skip) return [...lines, `# ${said(x.t ?? english, 'skipped', { reason: skip })}`, 'sdpa_checked = False'];
  if (x.any) return [...lines, ...positionSdpaCheck(ctx, precision, cols, x)];
  const toRows = (n) => (cols ? `${n}.T` : n);
  let maskArg = '';
  if (ctx.causal && ctx.maskKind === 'none') maskArg = ', is_causal=True';
  else if (ctx.causal || ctx.maskKind !== 'none') maskArg = `, attn_mask=${cols ? 'M.T' : 'M'}`;
  return [
    ...lines,
    `# ${said(x.t ?? english, 'sdpa-takes')}`,
    `q = ${toRows('Q')}.reshape(L, heads, d_k).transpose(0, 1)`,
    `k = ${toRows('K')}.reshape(S, kv_heads, d_k).transpose(0, 1).repeat_interleave(heads // kv_heads, dim=0)`,
    `v = ${toRows('V')}.reshape(S, kv_heads, d_v).transpose(0, 1).repeat_interleave(heads // kv_heads, dim=0)`,
    `sdpa = F.scaled_dot_product_attention(q, k, v${maskArg}, scale=${multiplies(ctx) ? 'float(factor)' : '1.0 / float(divisor)'})`,
    `sdpa = torch.nan_to_num(sdpa, nan=0.0)  # ${said(x.t ?? english, 'sdpa-nan')}`,
    `ours = ${cols ? 'concat.T' : 'concat'}.reshape(L, heads, d_v).transpose(0, 1)`,
    sdpaTolerance(precision),
    'torch.testing.assert_close(ours, sdpa, **tol)',
    'sdpa_checked = True',
  ];
}

/**
 * With positions: each head's rotated queries and keys, the cache, and ALiBi's bias plus the mask
 * as attn_mask (an explicit mask: is_causal aligns a cache's queries top-left, not at their positions).
 */
function positionSdpaCheck(ctx, precision, cols, x) {
  const bias = [x.alibi && "ALiBi's bias", hasMask(x, ctx) && 'the mask'].filter(Boolean);
  const names = bias.length > 0 ? 'q, k, v, attn_mask' : 'q, k, v';
  return [
    `# ${said(x.t ?? english, 'sdpa-positions', { bias: x.alibi ? (hasMask(x, ctx) ? 'both' : 'alibi') : hasMask(x, ctx) ? 'mask' : 'none' })}`,
    `${names} = (torch.stack(list(t)) for t in zip(*per_head))  # (heads, tokens, d)`,
    `sdpa = F.scaled_dot_product_attention(q, k, v${bias.length > 0 ? ', attn_mask=attn_mask' : ''}, scale=${multiplies(ctx) ? 'float(factor)' : '1.0 / float(divisor)'})`,
    `sdpa = torch.nan_to_num(sdpa, nan=0.0)  # ${said(x.t ?? english, 'sdpa-nan-version')}`,
    `ours = ${cols ? 'concat.T' : 'concat'}.reshape(L, heads, d_v).transpose(0, 1)`,
    ...(x.nan ? [`ours = torch.nan_to_num(ours, nan=0.0)  # ${said(x.t ?? english, 'ours-nan')}`] : []),
    sdpaTolerance(precision),
    'torch.testing.assert_close(ours, sdpa, **tol)',
    'sdpa_checked = True',
  ];
}

/**
 * NumPy: the backward pass of L = Σ O∘dO after the forward steps, chain rule step by step in the
 * rows layout (R() turns the columns layout's matrices into it and back), each gradient appended
 * as the trace's gradient steps are.
 */
function gradientLines(ctx, trace, cols, x) {
  const m = trace.meta;
  const dO = trace.steps.find((s) => s.id === 'dO');
  const given = dO.given.includes('dO');
  const hasMask = trace.steps.some((s) => s.id === 'dS_kept');
  const headOutput = m.heads > 1 || ctx.hasWO;
  const past = x.past;
  const rope = x.rope != null;
  const lines = [
    `# ---- ${said(x.t ?? english, 'backward')}`,
    cols ? `R = np.transpose  # ${said(x.t ?? english, 'R-transpose')}` : `def R(m):\n    return m  # ${said(x.t ?? english, 'R-rows')}`,
    given ? `dO = ${NUMPY.array(pyList(dO.data))}` : `dO = np.ones_like(output)  # ${said(x.t ?? english, 'no-dO')}`,
    'steps.append(("dO", None, dO))',
    `d_concat = ${ctx.hasWO ? `R(dO) @ R(W_O).T  # ${said(x.t ?? english, 'through-wo')}` : 'R(dO)'}`,
    `grad_scale = dt(${pyNumber(m.scale)})  # ${said(x.t ?? english, 'grad-scale')}`,
    `n_past = ${past ? 'past' : '0'}  # ${said(x.t ?? english, 'cached-keys')}`,
    `dQ_all = np.zeros((L, heads * d_k), dtype=dt)`,
    `dK_all = np.zeros((S - n_past, kv_heads * d_k), dtype=dt)`,
    `dV_all = np.zeros((S - n_past, kv_heads * d_v), dtype=dt)`,
    ...(past ? ['dpast_K = np.zeros((n_past, kv_heads * d_k), dtype=dt)', 'dpast_V = np.zeros((n_past, kv_heads * d_v), dtype=dt)'] : []),
    ...(x.variant?.qk ? ['dg_q, dg_k = np.zeros(d_k, dtype=dt), np.zeros(d_k, dtype=dt)'] : []),
    ...(x.variant?.gate ? [`dG_all = np.zeros_like(G)  # ${said(x.t ?? english, 'dG-all')}`] : []),
  ];
  if (x.linear) {
    lines.push(...linearGradientHeadLines(ctx, trace, x));
  } else if (x.variant) {
    lines.push(...variantGradientHeadLines(ctx, trace, x, { headOutput, past, rope }));
  } else {
    lines.push(...softmaxGradientHeadLines(ctx, trace, x, { headOutput, hasMask, past, rope }));
  }
  lines.push(
    '    dQ_all[:, h * d_k:(h + 1) * d_k] = dQh',
    `    dK_all[:, g * d_k:(g + 1) * d_k] += dKh  # ${said(x.t ?? english, 'gqa-sum')}`,
    '    dV_all[:, g * d_v:(g + 1) * d_v] += dVh',
    'steps += [("dQ", None, R(dQ_all)), ("dK", None, R(dK_all)), ("dV", None, R(dV_all))]',
  );
  return [...lines, ...gradientTail(ctx, x, past)];
}

/**
 * The variants' head by head backward steps (gradientLines, rows layout), as gradients.cpp takes
 * them: the gate (dgated_output, dgate, then the head's gradient times its gate), differential
 * attention's norm turned back, dA and dV, then sigmoid attention's dS = dA ∘ A(1 − A), the
 * softmax's, or each half's softmax of differential attention (dweights_1 = dA, dweights_2 = −λ dA);
 * the cache split off, RoPE and QK-norm turned back (dg_q, dg_k summed).
 */
function variantGradientHeadLines(ctx, trace, x, { headOutput, past, rope }) {
  const v = x.variant;
  const norm = v.diff?.norm;
  const masked = trace.steps.some((s) => s.id === 'mask');
  const lines = [];
  if (v.qk) {
    lines.push(
      'def qk_norm_back(x, dy, g):',
      `    """QK-norm turned back, each row: (u${v.qk.layer ? ' - mean(u)' : ''} - x_hat mean(u x_hat)) / sigma with u = dy g; and the gains' share, dy x_hat summed over the rows."""`,
      '    n = x.shape[1]',
      `    xc = x${v.qk.layer ? ' - np.sum(x, axis=1, keepdims=True) / n' : ''}`,
      '    sigma = np.sqrt(np.sum(xc * xc, axis=1, keepdims=True) / n + qk_eps)',
      '    xhat = xc / sigma',
      '    u = dy * g',
      `    dx = (u${v.qk.layer ? ' - np.sum(u, axis=1, keepdims=True) / n' : ''} - xhat * np.sum(u * xhat, axis=1, keepdims=True) / n) / sigma`,
      '    return dx, np.sum(dy * xhat, axis=0)',
      '',
    );
  }
  lines.push(
    'for h in range(heads):',
    '    g = kv_group[h]',
    `    Qh, Kh, Vh, A, scaled_h = saved[h]  # ${said(x.t ?? english, 'saved-read')}`,
    '    e = extra[h]',
    '    dH = d_concat[:, h * d_v:(h + 1) * d_v]',
  );
  if (v.gate) {
    lines.push(
      '    steps.append(("dgated_output", h, dH))',
      '    dG = dH * e["pre_gate"]  # head~ = head * G',
      '    if gate_headwise:',
      `        dG = np.sum(dG, axis=1, keepdims=True)  # ${said(x.t ?? english, 'gate-sum')}`,
      '        dG_all[:, h:h + 1] = dG',
      '    else:',
      '        dG_all[:, h * d_v:(h + 1) * d_v] = dG',
      '    steps.append(("dgate", h, dG))',
      '    dH = dH * e["gate"]',
      `    steps.append(("${norm ? 'dhead_normed' : 'dhead_output'}", h, dH))`,
    );
  }
  if (norm) {
    if (!v.gate) lines.push('    steps.append(("dhead_normed", h, dH))');
    lines.push(
      `    r = np.sqrt(np.sum(e["head"] ** 2, axis=1, keepdims=True) / d_v + 1e-5)  # ${said(x.t ?? english, 'norm-back')}`,
      '    xhat = e["head"] / r',
      '    dH = (1 - lambda_init) / r * (dH - xhat * np.sum(dH * xhat, axis=1, keepdims=True) / d_v)',
      '    steps.append(("dhead_output", h, dH))',
    );
  }
  if (!v.gate && !norm && headOutput) lines.push('    steps.append(("dhead_output", h, dH))');
  lines.push(
    '    dA = dH @ Vh.T',
    '    steps.append(("dA", h, dA))',
    '    dVh = A.T @ dH',
    `    steps.append(("${past ? 'dV_cache' : 'dV'}", h, dVh))`,
  );
  const dQid = rope ? 'dQ_rot' : v.qk ? 'dQ_normed' : 'dQ';
  const dKid = past ? 'dK_cache' : rope ? 'dK_rot' : v.qk ? 'dK_normed' : 'dK';
  if (v.diff) {
    lines.push(
      '    steps += [("dweights_1", h, dA), ("dweights_2", h, -lam[h] * dA)]  # A = A_1 - lambda A_2',
      '    dQh, dKh = np.zeros_like(Qh), np.zeros_like(Kh)',
      '    for k, (Ak, dAk) in enumerate(zip(e["A_halves"], (dA, -lam[h] * dA))):',
      '        cols = slice(k * w, (k + 1) * w)',
      `        dS = Ak * (dAk - np.sum(dAk * Ak, axis=1, keepdims=True))  # ${said(x.t ?? english, 'half-softmax')}`,
      ...(masked ? ['        dS = np.where(hidden, dt(0), dS)'] : []),
      ...(ctx.softcap > 0 ? ['        dS = dS * (1 - np.tanh(Qh[:, cols] @ Kh[:, cols].T * grad_scale / softcap) ** 2)'] : []),
      '        dS = dS * grad_scale',
      '        dQh[:, cols], dKh[:, cols] = dS @ Kh[:, cols], dS.T @ Qh[:, cols]',
      `    steps += [("${dQid}", h, dQh), ("${dKid}", h, dKh)]`,
    );
  } else {
    lines.push(
      v.sigmoid
        ? `    dS = dA * A * (1 - A)  # ${said(x.t ?? english, 'sigmoid-slope')}`
        : `    dS = A * (dA - np.sum(dA * A, axis=1, keepdims=True))  # ${said(x.t ?? english, 'softmax-jacobian')}`,
      '    steps.append(("dS", h, dS))',
    );
    if (masked)
      lines.push(
        `    dS = np.where(hidden, dt(0), dS)  # ${said(x.t ?? english, 'hidden-no-gradient')}`,
        '    steps.append(("dS_kept", h, dS))',
      );
    if (ctx.softcap > 0)
      lines.push(
        `    dS = dS * (1 - np.tanh(scaled_h / softcap) ** 2)  # ${said(x.t ?? english, 'softcap-slope')}`,
        '    steps.append(("dS_uncapped", h, dS))',
      );
    lines.push(
      '    dscores = dS * grad_scale',
      '    steps.append(("dscores", h, dscores))',
      '    dQh, dKh = dscores @ Kh, dscores.T @ Qh',
      `    steps += [("${dQid}", h, dQh), ("${dKid}", h, dKh)]`,
    );
  }
  if (past) {
    lines.push(
      `    dpast_K[:, g * d_k:(g + 1) * d_k] += dKh[:n_past]  # ${said(x.t ?? english, 'cache-share')}`,
      '    dpast_V[:, g * d_v:(g + 1) * d_v] += dVh[:n_past]',
      '    dKh, dVh = dKh[n_past:], dVh[n_past:]',
      `    steps += [("${rope ? 'dK_rot' : v.qk ? 'dK_normed' : 'dK'}", h, dKh), ("dV", h, dVh)]`,
    );
  }
  if (rope) {
    const back = (m, pos) =>
      v.diff ? `np.hstack([rope(${m}[:, :w], ${pos}, back=True), rope(${m}[:, w:], ${pos}, back=True)])` : `rope(${m}, ${pos}, back=True)`;
    lines.push(
      `    dQh = ${back('dQh', 'q_pos')}  # ${said(x.t ?? english, 'rope-back')}`,
      `    dKh = ${back('dKh', 'k_pos[n_past:]')}`,
      `    steps += [("${v.qk ? 'dQ_normed' : 'dQ'}", h, dQh), ("${v.qk ? 'dK_normed' : 'dK'}", h, dKh)]`,
    );
  }
  if (v.qk) {
    lines.push(
      `    dQh, dg = qk_norm_back(e["Q_raw"], dQh, g_q)  # ${said(x.t ?? english, 'qk-norm-back')}`,
      '    dg_q += dg',
      '    dKh, dg = qk_norm_back(e["K_raw"], dKh, g_k)',
      '    dg_k += dg',
      '    steps += [("dQ", h, dQh), ("dK", h, dKh)]',
    );
  }
  return lines;
}

/** The softmax head's backward steps (gradientLines). */
function softmaxGradientHeadLines(ctx, trace, x, { headOutput, hasMask, past, rope }) {
  const lines = [
    'for h in range(heads):',
    '    g = kv_group[h]',
    `    Qh, Kh, Vh, A, scaled_h = (R(s) for s in saved[h])  # ${said(x.t ?? english, 'saved-read')}`,
    '    dH = d_concat[:, h * d_v:(h + 1) * d_v]',
    ...(headOutput ? ['    steps.append(("dhead_output", h, R(dH)))'] : []),
    '    dA = dH @ Vh.T',
    '    steps.append(("dA", h, R(dA)))',
    '    dVh = A.T @ dH',
    `    steps.append(("${past ? 'dV_cache' : 'dV'}", h, R(dVh)))`,
    `    dS = A * (dA - np.sum(dA * A, axis=1, keepdims=True))  # ${said(x.t ?? english, 'softmax-jacobian')}`,
    '    steps.append(("dS", h, R(dS)))',
  ];
  if (hasMask)
    lines.push(
      `    dS = np.where(np.isneginf(R(M)), dt(0), dS)  # ${said(x.t ?? english, 'hidden-no-gradient')}`,
      '    steps.append(("dS_kept", h, R(dS)))',
    );
  if (ctx.softcap > 0)
    lines.push(
      `    dS = dS * (1 - np.tanh(scaled_h / softcap) ** 2)  # ${said(x.t ?? english, 'softcap-slope')}`,
      '    steps.append(("dS_uncapped", h, R(dS)))',
    );
  lines.push(
    '    dscores = dS * grad_scale',
    '    steps.append(("dscores", h, R(dscores)))',
    '    dQh, dKh = dscores @ Kh, dscores.T @ Qh',
    `    steps += [("${rope ? 'dQ_rot' : 'dQ'}", h, R(dQh)), ("${past ? 'dK_cache' : rope ? 'dK_rot' : 'dK'}", h, R(dKh))]`,
  );
  if (past) {
    lines.push(
      `    dpast_K[:, g * d_k:(g + 1) * d_k] += dKh[:n_past]  # ${said(x.t ?? english, 'cache-share')}`,
      '    dpast_V[:, g * d_v:(g + 1) * d_v] += dVh[:n_past]',
      '    dKh, dVh = dKh[n_past:], dVh[n_past:]',
      `    steps += [("${rope ? 'dK_rot' : 'dK'}", h, R(dKh)), ("dV", h, R(dVh))]`,
    );
  }
  if (rope) {
    lines.push(
      `    dQh = R(rope(R(dQh), q_pos, back=True))  # ${said(x.t ?? english, 'rope-back')}`,
      '    steps.append(("dQ", h, R(dQh)))',
      '    dKh = R(rope(R(dKh), k_pos[n_past:], back=True))',
      '    steps.append(("dK", h, R(dKh)))',
    );
  }
  return lines;
}

/** After the heads: the cache's, W_O's and the projections' gradients, and X's. */
function gradientTail(ctx, x, past) {
  const lines = [];
  if (past) lines.push('steps += [("dpast_K", None, R(dpast_K)), ("dpast_V", None, R(dpast_V))]');
  if (x.variant?.qk) lines.push('steps += [("dg_q", None, dg_q[None, :]), ("dg_k", None, dg_k[None, :])]');
  if (ctx.hasWO) {
    lines.push('steps.append(("dW_O", None, R(R(concat).T @ R(dO))))');
    if (ctx.hasBO) lines.push('steps.append(("db_O", None, R(R(dO).sum(axis=0, keepdims=True))))');
  }
  if (ctx.mode === 'qkv') return lines;
  const cross = ctx.mode === 'cross';
  const Xkv = cross ? 'R(X_kv)' : 'R(X)';
  for (const [n, X, d] of [
    ['Q', 'R(X)', 'dQ_all'],
    ['K', Xkv, 'dK_all'],
    ['V', Xkv, 'dV_all'],
  ]) {
    lines.push(
      `steps.append(("dW_${n}", None, R(${X}.T @ ${d})))${n === 'Q' && x.positional ? `  # ${said(x.t ?? english, 'x-positions')}` : ''}`,
    );
    if (ctx.bias[n]) lines.push(`steps.append(("db_${n}", None, R(${d}.sum(axis=0, keepdims=True))))`);
  }
  lines.push('dX_q = dQ_all @ R(W_Q).T');
  if (x.variant?.gate) {
    lines.push(
      `dZ = dG_all * G * (1 - G)  # ${said(x.t ?? english, 'through-gate')}`,
      'steps += [("dgate", None, dG_all), ("dW_G", None, X.T @ dZ)]',
      ...(x.variant.gate.bias ? ['steps.append(("db_G", None, dZ.sum(axis=0, keepdims=True)))'] : []),
      'dX_q = dX_q + dZ @ W_G.T',
    );
  }
  lines.push(
    'dX_kv = dK_all @ R(W_K).T + dV_all @ R(W_V).T',
    cross ? 'steps += [("dX", None, R(dX_q)), ("dX_kv", None, R(dX_kv))]' : 'steps.append(("dX", None, R(dX_q + dX_kv)))',
  );
  if (x.positional === 'learned')
    lines.push(`steps.append(("dP", None, ${cross ? 'R(dX_q)' : 'R(dX_q + dX_kv)'}))  # ${said(x.t ?? english, 'dP')}`);
  return lines;
}

const LATENT_KEYS = ['W_DKV', 'W_UK', 'W_UV', 'W_KR', 'W_QR', 'W_DQ', 'W_UQ', 'past_c_KV', 'past_k_R'];

/**
 * Multi-head latent attention (DeepSeek-V2, equations 9-19 without the latent RMSNorms), rows
 * layout: c_KV, k_R, c_Q, then per head K_C, V, Q_C, q_R, the scores in two parts, the softmax,
 * the absorbed form (W_UK folded into the query, W_UV into W_O) and the cache's numbers per token.
 */
function latentLines(problem, trace, d, ctx, t = english) {
  const torch = d === TORCH;
  const m = trace.meta;
  const o = problem.options ?? {};
  const has = (k) => problem[k] != null;
  const rotary = has('W_KR');
  const past = has('past_c_KV');
  const fromCq = has('W_DQ') && rotary && matrixOf(problem.W_QR, 'W_QR').length === matrixOf(problem.W_DQ, 'W_DQ')[0].length;
  const cat0 = (a, b) => (torch ? `torch.cat([${a}, ${b}], dim=0)` : `np.vstack([${a}, ${b}])`);
  const given = (list) => (list?.length ? pyList(list) : null);
  const positions = o.positions && typeof o.positions === 'object' ? o.positions : {};
  const q = given(listOf(positions.queries));
  const k = given(listOf(positions.keys));
  const lines = [
    `heads = ${m.heads}`,
    `L, P = X.shape[0], ${past ? 'past_c_KV.shape[0]' : '0'}  # ${said(t, 'latent-sizes')}`,
    `S = P + L  # ${said(t, 'latent-keys')}`,
    `d_c, d_h, d_v = W_DKV.shape[1], W_UK.shape[1] // heads, W_UV.shape[1] // heads`,
    `d_r = ${rotary ? 'W_KR.shape[1]' : '0'}  # ${said(t, 'rotary-part')}`,
    torch
      ? `q_pos = ${q ? `torch.tensor(${q}, dtype=torch.float64)` : 'torch.arange(P, P + L, dtype=torch.float64)'}  # ${said(t, 'query-positions')}`
      : `q_pos = np.array(${q ?? '[P + i for i in range(L)]'}, dtype=np.float64)  # ${said(t, 'query-positions')}`,
    torch
      ? `k_pos = ${k ? `torch.tensor(${k}, dtype=torch.float64)` : 'torch.arange(S, dtype=torch.float64)'}  # ${said(t, 'key-positions')}`
      : `k_pos = np.array(${k ?? 'list(range(S))'}, dtype=np.float64)  # ${said(t, 'key-positions')}`,
    `steps = []  # ${said(t, 'steps')}`,
  ];
  if (rotary) {
    const r = o.rope === true || o.rope == null ? {} : o.rope;
    lines.push(`rope_dims = ${r.dims != null ? word(r.dims) : 'd_r'}  # ${said(t, 'latent-rope')}`);
    if (r.cos != null) {
      const table = (t) => (torch ? `torch.tensor(${pyList(tableOf(t))}, dtype=torch.float64)` : `np.array(${pyList(tableOf(t))})`);
      lines.push(`rope_cos = ${table(r.cos)}`, `rope_sin = ${table(r.sin)}`);
    } else {
      lines.push(`rope_base = ${pyNumber(word(r.base ?? 10000))}`);
    }
    lines.push(...ropeAngleLines(r, d, false, t));
  }
  lines.push(`c_KV = ${past ? cat0('past_c_KV', 'X @ W_DKV') : 'X @ W_DKV'}  # ${said(t, 'latent')}`, 'steps.append(("c_KV", None, c_KV))');
  if (rotary)
    lines.push(
      `k_R = ${past ? cat0('past_k_R', 'rope(X @ W_KR, k_pos[P:])') : 'rope(X @ W_KR, k_pos)'}  # ${said(t, 'k-rotary')}`,
      'steps.append(("k_R", None, k_R))',
    );
  if (has('W_DQ')) lines.push('c_Q = X @ W_DQ', 'steps.append(("c_Q", None, c_Q))');
  const divisor = ctx.scale.kind === 'sqrt_dk';
  lines.push(
    divisor ? `divisor = ${d.sqrt}(${d.scalar('d_h + d_r')})  # sqrt(d_h + d_r)` : scaleLine(ctx, m.scale, d, t),
    ...(ctx.softcap > 0 ? [`softcap = ${d.scalar(pyNumber(ctx.softcap))}`] : []),
  );
  const masked = ctx.causal || ctx.maskKind !== 'none';
  if (masked) {
    lines.push(torch ? 'hidden = torch.zeros(L, S, dtype=torch.bool)' : 'hidden = np.zeros((L, S), dtype=bool)');
    if (ctx.causal) lines.push(`hidden |= k_pos[None, :] > q_pos[:, None]  # ${said(t, 'causal-positions')}`);
    if (ctx.maskKind === 'keep') lines.push(`hidden |= ~${d.bools(pyList(ctx.mask, pyBool))}`);
    if (ctx.maskKind === 'additive') {
      lines.push(`user_mask = ${d.array(pyList(ctx.mask))}`, `hidden |= ${torch ? 'torch.isneginf' : 'np.isneginf'}(user_mask)`);
    }
    lines.push(
      ctx.maskKind === 'additive'
        ? torch
          ? 'M = user_mask.masked_fill(hidden, -math.inf)'
          : 'M = np.where(hidden, -math.inf, user_mask).astype(dt)'
        : torch
          ? 'M = torch.zeros(L, S, dtype=dt).masked_fill(hidden, -math.inf)'
          : 'M = np.where(hidden, -math.inf, 0).astype(dt)',
    );
  }
  const Wq = has('W_DQ') ? 'c_Q @ W_UQ' : 'X @ W_Q';
  lines.push(
    'head_outputs, latent_outputs = [], []',
    'for h in range(heads):',
    '    hk, hv, hr = slice(h * d_h, (h + 1) * d_h), slice(h * d_v, (h + 1) * d_v), slice(h * d_r, (h + 1) * d_r)',
    `    K_C = c_KV @ W_UK[:, hk]  # ${said(t, 'latent-head-keys')}`,
    '    Vh = c_KV @ W_UV[:, hv]',
    `    Q_C = (${Wq})[:, hk]`,
    '    steps += [("K_C", h, K_C), ("V", h, Vh), ("Q_C", h, Q_C)]',
  );
  if (rotary) {
    lines.push(
      `    q_R = rope(${fromCq ? 'c_Q' : 'X'} @ W_QR[:, hr], q_pos)`,
      `    scores_C, scores_R = Q_C @ K_C.T, q_R @ k_R.T  # ${said(t, 'latent-parts')}`,
      '    scores = scores_C + scores_R',
      '    steps += [("q_R", h, q_R), ("scores_C", h, scores_C), ("scores_R", h, scores_R), ("scores", h, scores)]',
    );
  } else {
    lines.push('    scores = Q_C @ K_C.T', '    steps.append(("scores", h, scores))');
  }
  lines.push(`    logits = scores ${multiplies(ctx) && !divisor ? '* factor' : '/ divisor'}`, '    steps.append(("scaled", h, logits))');
  if (ctx.softcap > 0) lines.push(`    logits = softcap * ${d.tanh}(logits / softcap)`, '    steps.append(("softcapped", h, logits))');
  if (masked) {
    lines.push(
      `    steps.append(("mask", h, ${ctx.maskKind === 'additive' ? 'M' : torch ? '(~hidden).to(torch.float64)' : '(~hidden) * 1.0'}))`,
      '    logits = logits + M',
      '    steps.append(("masked", h, logits))',
    );
  }
  lines.push(
    `    weights = softmax(logits, ${d.axis}=1)`,
    '    steps.append(("weights", h, weights))',
    '    head_outputs.append(weights @ Vh)',
  );
  if (m.heads > 1 || ctx.hasWO) lines.push('    steps.append(("head_output", h, head_outputs[-1]))');
  lines.push(
    `    Q_absorbed = Q_C @ W_UK[:, hk].T  # ${said(t, 'absorb-uk')}`,
    '    steps += [("Q_absorbed", h, Q_absorbed), ("scores_C_absorbed", h, Q_absorbed @ c_KV.T)]  # = Q_C K_C^T',
    '    latent_outputs.append(weights @ c_KV)',
    '    steps.append(("O_latent", h, latent_outputs[-1]))',
    '',
    `concat = ${d.concat.rows}`,
    ...(m.heads > 1 ? ['steps.append(("concat", None, concat))'] : []),
    ctx.hasWO ? `output = concat @ W_O${ctx.hasBO ? ' + b_O' : ''}` : 'output = concat',
    'steps.append(("output", None, output))',
    ctx.hasWO
      ? `absorbed = sum(latent_outputs[h] @ (W_UV[:, h * d_v:(h + 1) * d_v] @ W_O[h * d_v:(h + 1) * d_v]) for h in range(heads))${ctx.hasBO ? ' + b_O' : ''}  # ${said(t, 'absorb-uv')}`
      : `absorbed = ${torch ? 'torch.cat' : 'np.hstack'}([latent_outputs[h] @ W_UV[:, h * d_v:(h + 1) * d_v] for h in range(heads)]${torch ? ', dim=1' : ''})`,
    'steps.append(("output_absorbed", None, absorbed))',
    `# ${said(t, 'cache-sizes')}`,
    'forms = [2 * heads * d_h] + [2 * g * d_h for g in range(heads - 1, 1, -1) if heads % g == 0] + ([2 * d_h] if heads > 1 else []) + [d_c + d_r]',
    `steps.append(("cache_sizes", None, ${d.array('[forms]')}))`,
  );
  if (d.check) lines.push(`sdpa_checked = False  # ${said(t, 'sdpa-latent')}`);
  return lines;
}

/** A forward script's first lines: the header, imports, dtype and every input (`extra` besides ctx's). */
function scriptHead(ctx, trace, d, head, extra) {
  return [
    ...header(ctx, trace, d, head),
    'import json',
    'import math',
    'import sys',
    '',
    ...d.imports,
    '',
    `dt = ${d.dtype}.${trace.meta.precision}`,
    '',
    `# ---- ${said(head.t ?? english, 'inputs')}`,
    ...Object.entries({ ...ctx.inputs, ...extra }).map(([name, value]) => `${name} = ${d.array(pyList(value))}`),
    '',
    '',
  ];
}

/** A forward script's last lines: `steps` printed, or as JSON with --json, then the check's result. */
function scriptTail(d) {
  return [
    'def as_json(m):',
    `    rows = ${d.rows}`,
    '    return [[v if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")) for v in row] for row in rows]',
    '',
    '',
    'if "--json" in sys.argv:',
    '    print(json.dumps([{"id": i, "head": h, "shape": list(m.shape), "data": as_json(m)} for i, h, m in steps]))',
    'else:',
    `    ${d.printOptions}`,
    '    for i, h, m in steps:',
    '        print(f"{i}" + ("" if h is None or heads == 1 else f" (head {h + 1})") + f" {m.shape[0]}x{m.shape[1]}:")',
    '        print(m)',
    ...d.checkResult,
    '',
  ];
}

function latentScript(problem, trace, d, head, gradients) {
  if (gradients)
    throw exportError('the NumPy script of the backward pass does not cover multi-head latent attention: export the forward pass');
  const ctx = problemContext(problem, trace);
  const o = problem.options ?? {};
  const r = o.rope && typeof o.rope === 'object' ? o.rope : {};
  const extra = Object.fromEntries(LATENT_KEYS.filter((k) => problem[k] != null).map((k) => [k, matrixOf(problem[k], k)]));
  return [
    ...scriptHead(ctx, trace, d, head, extra),
    ...d.softmax,
    ...(problem.W_KR != null ? ['', '', ...(d === TORCH ? pyRopeTorch(r, false, head.t) : pyRopeNumpy(r, false, head.t))] : []),
    '',
    '',
    ...latentLines(problem, trace, d, ctx, head.t),
    '',
    '',
    ...scriptTail(d),
  ].join('\n');
}

function pythonScript(problem, trace, d, head, gradients = false) {
  if (problem?.W_DKV != null) return latentScript(problem, trace, d, head, gradients);
  const ctx = problemContext(problem, trace);
  const m = trace.meta;
  const cols = ctx.layout === 'columns';
  const t = head.t ?? english;
  const x = positionOptions(problem);
  x.t = t; // the language of the comments (every function that writes one reads x.t or takes t)
  x.gradients = gradients;
  x.linear = linearOptions(problem);
  // The variants (rows layout only) take the path of the position options: each step on its own line.
  x.variant = variantOptions(problem, trace);
  if (x.variant) x.any = true;
  if (gradients && !trace.steps.some((s) => s.id === 'dO')) {
    throw exportError('numpyScript with { gradients: true } takes the result of engine.gradients(problem), not engine.run(problem)');
  }
  const withPositions = x.any;
  const extra = Object.fromEntries(
    ['past_K', 'past_V', 'P', 'W_G', 'b_G'].filter((k) => problem[k] != null).map((k) => [k, matrixOf(problem[k], k)]),
  );
  const bias = ctx.hasBO ? (cols ? ' + b_O[:, None]' : ' + b_O') : '';
  const tokens = cols ? 1 : 0;
  const features = cols ? 0 : 1;
  return [
    ...scriptHead(ctx, trace, d, head, extra),
    ...d.softmax,
    ...(withPositions ? positionFunctions(x, d, cols) : []),
    ...(x.variant ? variantFunctions(x.variant, d) : []),
    '',
    '',
    ...(withPositions ? [`steps = []  # ${said(t, 'steps')}`, ...positionLines(x, d, m, cols), ...positionalLines(x, cols), ''] : []),
    `# ---- ${said(t, 'projections')}`,
    ...projections(ctx, cols, t),
    '',
    `heads, kv_heads = ${m.heads}, ${m.kv_heads}`,
    `L, S = Q.shape[${tokens}], K.shape[${tokens}]${x.past ? ` + past_K.shape[${tokens}]` : ''}  # ${said(t, 'sizes')}`,
    `d_k = Q.shape[${features}] // heads`,
    `d_v = V.shape[${features}] // kv_heads`,
    scaleLine(ctx, m.scale, d, t),
    ...(ctx.softcap > 0 ? [`softcap = ${d.scalar(pyNumber(ctx.softcap))}`] : []),
    ...(withPositions ? [...settingLines(x, d, cols), ...positionMaskLines(x, ctx, d, cols)] : maskLines(ctx, d, cols, t)),
    ...(x.variant ? variantSettingLines(x.variant, d, ctx, t) : []),
    '',
    ...(withPositions ? [] : [`steps = []  # ${said(t, 'steps')}`]),
    'head_outputs = []',
    ...(gradients ? [`saved = []  # ${said(t, 'saved')}`] : []),
    ...(gradients && x.variant ? [`extra = []  # ${said(t, 'extra')}`] : []),
    ...(withPositions && d.check && sdpaSkip(ctx, x) == null ? [`per_head = []  # ${said(t, 'per-head')}`] : []),
    ...headLoop(ctx, trace, d, cols, x),
    '',
    `concat = ${d.concat[ctx.layout]}`,
    ...(m.heads > 1 ? ['steps.append(("concat", None, concat))'] : []),
    ctx.hasWO ? (cols ? `output = W_O @ concat${bias}` : `output = concat @ W_O${bias}`) : 'output = concat',
    'steps.append(("output", None, output))',
    ...(d.check ? ['', ...d.check(ctx, m.precision, cols, x)] : []),
    ...(gradients ? ['', ...gradientLines(ctx, trace, cols, x)] : []),
    '',
    '',
    ...scriptTail(d),
  ].join('\n');
}

/**
 * A NumPy script that recomputes every step of the trace from the problem's inputs and prints
 * them (`--json`: the steps as JSON in the trace's order, non-finite as "inf"/"-inf"/"nan").
 * `recipe`: numpy lines that drew the inputs, quoted in a comment. `gradients`: `trace` is
 * engine.gradients(problem)'s result, and the script rebuilds its gradient steps too (the
 * backward pass of L = Σ O∘dO, with the problem's dO or all ones). `t`: the language of the
 * opening comment and of every comment of the code (export.script.comment.*), English by default;
 * the code (and a comment that is only code, such as `theta_i = base^(-2i/dims)`) is the same in
 * every language.
 * @type {typeof import('./index.js').numpyScript}
 */
export function numpyScript(problem, trace, { recipe, gradients = false, t } = {}) {
  return pythonScript(problem, trace, NUMPY, { recipe, t }, gradients);
}

/**
 * A PyTorch script: the same steps with torch tensors, then (when the options allow: no softcap,
 * sink logit or finite mask_fill) a check of the head outputs against
 * torch.nn.functional.scaled_dot_product_attention.
 * @type {typeof import('./index.js').pytorchScript}
 */
export function pytorchScript(problem, trace, { recipe, t } = {}) {
  return pythonScript(problem, trace, TORCH, { recipe, t });
}
