// Hand-written types of `attention-explorer` (Emscripten 3.1.6 cannot emit them); tests/js
// compiles real usage against them and checks the runtime exports match.

import type { Message, Translator } from './playground.js';

export type { Message, Translator };

/** A matrix as JSON: rows of numbers ("inf", "-inf", "nan" allowed), a flat list (one row),
 *  `{ shape, data }` with flat row-major data, or text in any format the parser accepts. */
export type MatrixInput =
  | ReadonlyArray<ReadonlyArray<number | string>>
  | ReadonlyArray<number | string>
  | { shape: readonly [number, number]; data: ArrayLike<number | string> }
  | string;

/** A keep-mask (true = keep) or an additive mask (0 keeps, "-inf" hides). */
export type MaskInput = MatrixInput | ReadonlyArray<ReadonlyArray<boolean>>;

/** A bias vector: a list of numbers, or text. */
export type VectorInput = ReadonlyArray<number | string> | ArrayLike<number> | string;

/**
 * What every input error thrown by the engine carries besides its message (docs/api.md, "Problem
 * JSON"): catch it as `unknown` and read these to show the error beside its input.
 */
export interface InputErrorPlace {
  /** The input or option as problem JSON names it ("W_K", "options.heads"); absent for an error about the whole problem. */
  field?: string;
  /** The core's errors: the field, then the input it was read against when two disagree. */
  fields?: string[];
  /** One entry's 1-based row (a list's entry number). */
  row?: number;
  /** One entry's 1-based column. */
  column?: number;
  /** runAll: the failing problem's index (from 0). */
  problemIndex?: number;
  /**
   * The core's input errors named as a message of the catalogues (web/lib/locales, "error.*"; runAll's
   * "error.problem-of"): `message` is its English; attention-explorer/i18n `errorWords(error, t)`
   * formats it in `t`'s language. Absent for an error not yet converted (its `message` is English).
   */
  message_id?: string;
  /**
   * The message's parameters, numbers formatted as text; a parameter may be a message itself
   * (runAll's `error` is the inner message; the JS checks' `value`, `expected` and `hint`).
   */
  values?: Record<string, string | ErrorMessage>;
}

/** A message of the catalogues not yet formatted: its id and parameters (which may be messages). */
export interface ErrorMessage {
  id: string;
  values: Record<string, string | ErrorMessage>;
}

export type Scale = 'sqrt_dk' | 'none' | number | `1/sqrt(${string})` | `1/${string}`;

export interface Options {
  /** Tokens as rows (Q = X·W_Q, the default) or as columns (Q = Ω_Q·X + β_Q, the UDL book). */
  layout?: 'rows' | 'columns';
  /** Default "sqrt_dk" (divide by √d_k); a number multiplies QKᵀ. */
  scale?: Scale;
  causal?: boolean;
  mask?: MaskInput;
  /** > 0: scores become softcap·tanh(scores/softcap). Default 0 (off). */
  softcap?: number;
  heads?: number;
  kv_heads?: number;
  precision?: 'float64' | 'float32';
  /** Explicit integer positions: one per query, one per key (cached keys first). */
  positions?: { queries?: ReadonlyArray<number>; keys?: ReadonlyArray<number> };
  /** Rotary positions on each head's queries and keys: true (base 10000, "half", all d_k), or settings, or cos/sin tables (a row per position, dims/2 columns). */
  rope?: boolean | RopeOptions;
  /** "sinusoidal" adds the original Transformer's encoding to X; input P means "learned". */
  positional?: 'none' | 'sinusoidal' | 'learned';
  /** ALiBi: true (the paper's slopes for the head count) or one slope per head. */
  alibi?: boolean | ReadonlyArray<number>;
  /** [left, right]: the query at p sees keys at p − left … p + right; null = unbounded side. */
  window?: readonly [number | null, number | null];
  /** Keys at positions < n stay visible whatever the window (StreamingLLM). */
  sink_tokens?: number;
  /** A learned sink logit in every softmax's denominator: one for all heads or one per head ("-inf": none). */
  sink_logit?: number | '-inf' | ReadonlyArray<number | '-inf'> | string;
  /** What a hidden score becomes: "-inf" (default) or a finite number such as -1e9. */
  mask_fill?: '-inf' | number;
  /** A query whose keys are all hidden: "zero" (default, PyTorch ≥ 2.5) or "nan" (plain softmax). */
  fully_masked?: 'zero' | 'nan';
  /** "linear": linear attention (Katharopoulos et al., 2020), φ(Q)φ(K)ᵀV over φ(q)·Σφ(k); "softmax" (default). */
  attention?: 'softmax' | 'linear';
  /** Linear attention's feature map φ: "elu+1" (default), "relu" or "identity". */
  feature_map?: 'elu+1' | 'relu' | 'identity';
  /** Linear attention: divide each row by φ(q)·Σφ(k) (default true). */
  normalize?: boolean;
  /** Linear attention with causal: γ in (0, 1], key j weighs γ^(pos(i) − pos(j)) (default 1). */
  decay?: number;
  /** QK-norm (Qwen3, Gemma 3): each head's d_k features of Q and of new keys normalised, before RoPE (steps Q_normed, K_normed). Rows layout. */
  qk_norm?: false | QkNormOptions;
  /** "sigmoid": weights σ(x + b) entry by entry (Ramapuram et al., 2024); rows need not sum to 1. Excludes differential (and linear, latent). Rows layout. */
  score_fn?: 'softmax' | 'sigmoid';
  /** The sigmoid's bias b: one number; default −ln S (S keys, a cache included). */
  sigmoid_bias?: number;
  /** Differential attention (Ye et al., 2024): A = softmax(Q₁K₁ᵀs) − λ·softmax(Q₂K₂ᵀs) per head (steps weights_1, weights_2, head_normed). d_k even; rows layout. */
  differential?: false | DifferentialOptions;
}

/** options.qk_norm: rms x/√(mean(x²)+eps)·g, or layer (x − mean)/√(var + eps)·g. */
export interface QkNormOptions {
  /** Required. */
  type: 'rms' | 'layer';
  /** Default 1e-6. */
  eps?: number;
  /** d_k gains of the queries, shared by every head (default ones). */
  g_q?: ReadonlyArray<number> | string;
  /** d_k gains of the keys (default ones). */
  g_k?: ReadonlyArray<number> | string;
}

/** options.differential. */
export interface DifferentialOptions {
  /** Required: one λ for every head, or one per head. */
  lambda: number | ReadonlyArray<number> | string;
  /** Default 0.8: the head norm multiplies by 1 − lambda_init. */
  lambda_init?: number;
  /** Default true: each head's output row x becomes x/√(mean(x²) + 1e-5)·(1 − lambda_init). */
  norm?: boolean;
}

/** options.rope as settings (θᵢ = base^(−2i/dims)) or explicit cos/sin tables. */
export interface RopeOptions {
  /** "half" pairs feature i with i + dims/2 (GPT-NeoX, Llama), "interleaved" 2i with 2i + 1 (RoFormer, GPT-J). */
  style?: 'half' | 'interleaved';
  /** Default 10000. */
  base?: number;
  /** Features rotated, from the first (even, at most d_k; default d_k). */
  dims?: number;
  /** cos of each position's angles: a row per position, dims/2 columns (replaces base). */
  cos?: MatrixInput;
  /** sin of the same angles. */
  sin?: MatrixInput;
}

/** Either Q, K, V; or X with W_Q, W_K, W_V (X_kv for cross-attention). */
export interface Problem {
  Q?: MatrixInput;
  K?: MatrixInput;
  V?: MatrixInput;
  X?: MatrixInput;
  X_kv?: MatrixInput;
  W_Q?: MatrixInput;
  W_K?: MatrixInput;
  W_V?: MatrixInput;
  W_O?: MatrixInput;
  b_Q?: VectorInput;
  b_K?: VectorInput;
  b_V?: VectorInput;
  b_O?: VectorInput;
  /** A KV cache: the keys of earlier tokens as a cache stores them (projected, already rotated with RoPE), kv_heads·d_k wide. */
  past_K?: MatrixInput;
  /** The values of the same earlier tokens, kv_heads·d_v wide. */
  past_V?: MatrixInput;
  /** Learned positions added to X (X's shape). */
  P?: MatrixInput;
  /** Multi-head latent attention (DeepSeek-V2), on when given: X's down-projection to the latent c_KV, d_model × d_c. */
  W_DKV?: MatrixInput;
  /** Latent attention: c_KV to each head's keys K_C, d_c × heads·d_h. */
  W_UK?: MatrixInput;
  /** Latent attention: c_KV to each head's values, d_c × heads·d_v. */
  W_UV?: MatrixInput;
  /** Latent attention: X to the rotary key k_R shared by every head, d_model × d_r (with W_QR). */
  W_KR?: MatrixInput;
  /** Latent attention: c_Q (d_cq rows) or X (d_model rows) to each head's rotary query q_R, heads·d_r wide. */
  W_QR?: MatrixInput;
  /** Latent attention: X's down-projection to the queries' latent c_Q, d_model × d_cq (with W_UQ; else W_Q reads X). */
  W_DQ?: MatrixInput;
  /** Latent attention: c_Q to each head's content query Q_C, d_cq × heads·d_h. */
  W_UQ?: MatrixInput;
  /** Latent attention's cache: the latents c_KV of earlier tokens (positions 0 … P−1), d_c wide. */
  past_c_KV?: MatrixInput;
  /** Latent attention's cache: the rotated k_R of the same tokens, d_r wide. */
  past_k_R?: MatrixInput;
  /** The output gate (Qwen3-Next): G = σ(X·W_G + b_G), d_model×(heads·d_v) (one gate per feature) or d_model×heads (one per head); needs X. */
  W_G?: MatrixInput;
  /** The gate's bias, one per column of W_G. */
  b_G?: VectorInput;
  /** engine.gradients: the loss's gradient with respect to the output, shaped like it (default all ones). run() ignores it. */
  dO?: MatrixInput;
  options?: Options;
}

export type StepId =
  /** rope_angles: RoPE's angle of each position (rows) and rotated pair (columns), shared by every head. */
  | 'positional'
  | 'X_pos'
  | 'rope_angles'
  | 'Q'
  | 'K'
  | 'V'
  | 'Q_rot'
  | 'K_rot'
  | 'K_cache'
  | 'V_cache'
  | 'scores'
  | 'scaled'
  | 'softcapped'
  | 'alibi'
  | 'biased'
  | 'mask'
  | 'masked'
  | 'weights'
  | 'head_output'
  | 'concat'
  | 'output'
  /** Linear attention: φ(Q), φ(K), Λ = φ(Q)φ(K)ᵀ (with the decay and the causal mask), its row sums D. */
  | 'phi_Q'
  | 'phi_K'
  | 'linear_scores'
  | 'normalizer'
  /** Multi-head latent attention: c_KV, k_R, c_Q (shared); per head K_C, V, Q_C, q_R, the scores' two parts. */
  | 'c_KV'
  | 'k_R'
  | 'c_Q'
  | 'K_C'
  | 'Q_C'
  | 'q_R'
  | 'scores_C'
  | 'scores_R'
  /** Its absorbed form (per head Q_C·W_UKᵀ, that against c_KV, A·c_KV; then the output) and the numbers a cache stores per token. */
  | 'Q_absorbed'
  | 'scores_C_absorbed'
  | 'O_latent'
  | 'output_absorbed'
  | 'cache_sizes'
  /** Q_normed, K_normed: QK-norm; weights_1, weights_2, head_normed: differential attention; gate, gated_output: the output gate. */
  | 'Q_normed'
  | 'K_normed'
  | 'weights_1'
  | 'weights_2'
  | 'head_normed'
  | 'gate'
  | 'gated_output'
  | GradientStepId;

/**
 * engine.gradients' steps: the gradient of the loss L = Σ O∘dO with respect to a step or an
 * input. Per head: dhead_output, dA (the weights), dV_cache, dS (the softmax's input: A ∘ (dA −
 * rowsum(dA ∘ A))), dS_kept (through the mask: 0 where hidden), dS_uncapped (through softcap),
 * dscores (through the scale: the raw scores), dQ_rot, dK_rot, dK_cache, dQ, dK, dV. Whole (head
 * null): dO, then the gradients of the inputs as given, in the problem's layout: dQ, dK, dV,
 * dpast_K, dpast_V, dW_O, db_O, dW_Q, db_Q, dW_K, db_K, dW_V, db_V, dX, dX_kv, dP.
 */
export type GradientStepId =
  | 'dO'
  | 'dhead_output'
  | 'dA'
  | 'dS'
  | 'dS_kept'
  | 'dS_uncapped'
  | 'dscores'
  | 'dQ_rot'
  | 'dK_rot'
  | 'dK_cache'
  | 'dV_cache'
  | 'dQ'
  | 'dK'
  | 'dV'
  | 'dpast_K'
  | 'dpast_V'
  | 'dW_O'
  | 'db_O'
  | 'dW_Q'
  | 'db_Q'
  | 'dW_K'
  | 'db_K'
  | 'dW_V'
  | 'db_V'
  | 'dX'
  | 'dX_kv'
  | 'dP'
  /** The variants (issue 31): QK-norm (dQ_normed, dK_normed, dg_q, dg_k), the gate (dgated_output, dgate, dW_G, db_G), differential attention (dhead_normed, dweights_1, dweights_2). */
  | 'dQ_normed'
  | 'dK_normed'
  | 'dg_q'
  | 'dg_k'
  | 'dgated_output'
  | 'dgate'
  | 'dW_G'
  | 'db_G'
  | 'dhead_normed'
  | 'dweights_1'
  | 'dweights_2'
  /** Linear attention, per head: the gradients of Λ, φ(Q) and φ(K). */
  | 'dlinear_scores'
  | 'dphi_Q'
  | 'dphi_K'
  /**
   * Multi-head latent attention: per head dQ_C, dK_C, dq_R, dk_R (and the softmax's steps, dV);
   * whole: dk_R, dpast_k_R, dc_KV, dpast_c_KV, dW_UK, dW_UV, dW_DKV, dW_KR, dW_UQ (or dW_Q),
   * dW_QR, dc_Q, dW_DQ, dX.
   */
  | 'dQ_C'
  | 'dK_C'
  | 'dq_R'
  | 'dk_R'
  | 'dc_KV'
  | 'dpast_c_KV'
  | 'dpast_k_R'
  | 'dW_UK'
  | 'dW_UV'
  | 'dW_DKV'
  | 'dW_KR'
  | 'dW_UQ'
  | 'dW_QR'
  | 'dc_Q'
  | 'dW_DQ';

/** What a step's numbers are: picks the colour scale (fixed 0–1, symmetric about 0, mask). */
export type ValueKind = 'signed' | 'probability' | 'keep_mask' | 'additive_bias';
/** What a step's rows or columns stand for. */
export type Axis = 'queries' | 'keys' | 'features' | 'positions';

/**
 * One tie of a step's axis to an input step's (web/lib/lineage.js follows them): the input's index
 * along `input` is the step's index along `step` plus `shift` (K_cache's key j is K's key j − past:
 * shift −past; concat's feature c is head h's feature c − first: shift −first). Said in
 * the rows layout: an axis names the same thing in the columns layout; `row` and `column` (the
 * step's own row or column, for a weight's gradient whose two axes are both features) swap there.
 */
export interface StepTie {
  step: Axis | 'row' | 'column';
  input: Axis;
  shift: number;
}

/** How a step reads one input step: its ties; every axis of the input they do not name is read whole. */
export interface StepRead {
  ties: StepTie[];
}

export interface Step {
  id: StepId;
  /** Head index from 0; null for concat and output. */
  head: number | null;
  shape: [number, number];
  /** Rows of values, in the layout the problem chose; masked entries are -Infinity. */
  data: number[][];
  /** A caption without the head number, in English, e.g. "Scaled scores" (the catalogue's words for `title_id`). */
  title: string;
  /**
   * The caption's message id in the catalogues (web/lib/locales), e.g. "step.scaled"; "step.dS.sigmoid"
   * for dS under sigmoid attention. A view in another language formats it with its translator.
   */
  title_id: string;
  /** Its name in TeX, e.g. "\\tilde S^{(2)}" for head 2's scaled scores. */
  symbol: string;
  /** The formula for this problem's options, in TeX (what KaTeX renders). */
  tex: string;
  /** The same formula as plain Unicode text. */
  text: string;
  /**
   * The formula as the core wrote it: its words as placeholders `@{formula.<id>}` (messages of the
   * catalogues), the same in both notations; `tex` and `text` are them filled in English. A view in
   * another language fills them with attention-explorer/i18n `stepFormula(step, t)`.
   */
  formula_ids: { tex: string; text: string };
  kind: ValueKind;
  /** [rows, columns] in the step's own layout (the columns layout swaps them). */
  axes: [Axis, Axis];
  /** Indices into `trace.steps` of the steps this one is computed from. */
  inputs: number[];
  /** How it reads each of `inputs` (same order): which cells of the input a cell of it reads. */
  reads: StepRead[];
  /** Problem inputs it reads directly, e.g. ["X", "W_Q", "b_Q"] or ["mask"]. */
  given: string[];
  /** Per-head steps: the key/value head this head reads (grouped-query attention); else null. */
  kv_group: number | null;
  /** Per-head slices (Q, K, V, head_output): [first, end) columns of the full projection or of
   *  the concatenation this step is (features, counted from 0); null otherwise. */
  features: [number, number] | null;
}

export interface HeadFacts {
  head: number;
  scores_variance: number;
  scaled_variance: number;
  weight_sums: number[];
  max_weight: number[];
  entropy: number[];
  /** Queries (from 0) whose keys are all masked: their weights and output are 0. */
  fully_masked: number[];
  /**
   * With a mask step: per entry (its layout) what hid it, a sum of bits: 1 causal, 2 window,
   * 4 your mask, 8 a sink token kept it from the window; 0 where it is visible. Else [].
   */
  hidden_by: number[][];
  /** With a mask step: the weight each query still gives its hidden keys (a finite mask_fill). */
  hidden_weight: number[];
  /** ALiBi: this head's slope m (bias −m·|query pos − key pos|); 0 when off. */
  alibi_slope: number;
  /** The head's sink logit; -Infinity when there is none. */
  sink_logit: number;
  /** With a sink logit: the share of each query's softmax the sink takes (1 − Σ weights). */
  sink_share: number[];
  /**
   * RoPE's relative-position property as numbers: every query and key turned `rope_shift` more
   * positions, and the largest change that makes to a score (0 up to rounding). 0 and 0 when not
   * checked (RoPE off, or cos/sin given as tables).
   */
  rope_shift: number;
  rope_shift_change: number;
  /** QK-norm: the largest score with the norm, and the largest the same queries and keys give without it (NaN without QK-norm). */
  max_score: number;
  max_score_without_norm: number;
  /** Differential attention: the head's λ (NaN otherwise). */
  lambda: number;
}

export interface Trace {
  steps: Step[];
  output: number[][];
  /** In English; `warning_messages` are the same as messages (`t.message(m)` in another language). */
  warnings: string[];
  warning_messages: Message[];
  facts: HeadFacts[];
  meta: {
    layout: 'rows' | 'columns';
    precision: 'float64' | 'float32';
    /** The factor QKᵀ was multiplied by. */
    scale: number;
    /** How options.scale gave it: √d_k, none, a number, "1/<n>" or "1/sqrt(<n>)". */
    scale_kind: 'sqrt_dk' | 'none' | 'multiply' | 'divide' | 'divide_sqrt';
    /** The kind of options.mask: booleans keep, numbers add; none without a mask. */
    mask_kind: 'none' | 'keep' | 'additive';
    d_k: number;
    d_v: number;
    heads: number;
    kv_heads: number;
    queries: number;
    keys: number;
    /** The rows of rope_angles: every position a query or key sits at, increasing, once; [] without RoPE. */
    rope_positions: number[];
  };
}

/** engine.gradients' result: the trace's steps followed by the gradient steps (their `inputs` index the same list). */
export interface Gradients extends Trace {
  /** L = Σ O∘dO (Σ O when dO is all ones). */
  loss: number;
}

/**
 * Which cell to explain, of a step of the trace or of a gradient step (engine.gradients); head
 * defaults to 0 (none for concat and output); null: no head (the whole dQ, dW_Q, ...; a per-head
 * step answers as head 0). Indices from 0.
 */
export interface Cell {
  step: StepId;
  head?: number | null;
  row: number;
  col: number;
}

/** The worked calculation of one cell; which fields matter depends on `kind`. */
export interface Explanation {
  kind:
    | 'projection'
    | 'input'
    | 'dot'
    | 'scale'
    | 'softcap'
    | 'alibi'
    | 'bias'
    | 'mask_entry'
    | 'mask'
    | 'softmax'
    | 'weighted_sum'
    | 'concat'
    | 'sinusoid'
    | 'add'
    | 'rotation'
    | 'unrotated'
    | 'cache'
    | 'angle'
    /** Linear attention: φ of a feature, a linear score, the normalizer, an output over the normalizer. */
    | 'feature_map'
    | 'linear_score'
    | 'row_sum'
    | 'linear_output'
    | 'linear_score_grad'
    | 'feature_map_grad'
    /** Latent attention: the scores' two parts summed; a cache's numbers per token for one form (`source`). */
    | 'sum'
    | 'cache_size'
    /** The variants: qk_norm (also head_normed), sigmoid, difference (A₁ − λA₂), gate, gated. */
    | 'qk_norm'
    | 'sigmoid'
    | 'difference'
    | 'gate'
    | 'gated'
    /** Gradient steps (docs/api.md, "Worked calculations of gradient cells"). */
    | 'gradient_dot'
    | 'softmax_grad'
    | 'mask_grad'
    | 'softcap_grad'
    | 'copy'
    | 'head_sum'
    | 'token_sum'
    /** The variants' gradient steps: QK-norm (and differential attention's head norm) turned back; σ′ of sigmoid attention. */
    | 'qk_norm_grad'
    | 'sigmoid_grad';
  step: StepId;
  head: number | null;
  row: number;
  col: number;
  value: number;
  left: number[];
  right: number[];
  products: number[];
  has_bias: boolean;
  bias: number;
  input: number;
  factor: number;
  divisor: number;
  additive: number;
  logits: number[];
  shifted: number[];
  exps: number[];
  max: number;
  exp_sum: number;
  source_head: number | null;
  source_col: number;
  /** alibi: the head's slope and the two positions compared. */
  slope: number;
  query_pos: number;
  key_pos: number;
  /** mask_entry / mask: hidden or not, by which components, kept by a sink, what a hidden score becomes. */
  hidden: boolean;
  kept_by_sink: boolean;
  components: Array<'causal' | 'window' | 'mask'>;
  fill: number;
  /** softmax with a sink logit: its logit, exp(logit − max) (in exp_sum) and its share. */
  has_sink: boolean;
  sink_logit: number;
  sink_exp: number;
  sink_share: number;
  /** qk_norm: the row's mean (layer) and its variance or mean square (spread); divisor √(spread + eps), factor the gain. */
  mean: number;
  spread: number;
  /** difference: λ and the two halves' weights. */
  lambda: number;
  part_1: number;
  part_2: number;
  /** sinusoid, rotation: the token's position. */
  position: number;
  /** sinusoid, rotation: the angle (NaN when RoPE's cos/sin come from tables), its cosine and sine. */
  angle: number;
  cos: number;
  sin: number;
  /** rotation: the two features (from 0) RoPE turns together. */
  pair_first: number;
  pair_second: number;
  /** cache: "past_K" / "past_V" (latent attention: "past_c_KV" / "past_k_R"; a cached row) or the step of the new rows, and the row read; copy: the step read (rows layout); cache_size: the form (MHA, GQA g = …, MQA, MLA). */
  source: string;
  source_row: number;
  // The calculation described, whatever its kind (fillExplanation fills the placeholders): `@N` is
  // numbers[N]; `@terms(a,b)` the sum (x)(y) + ... of the terms' columns a and b, `@terms(a)` the
  // sum of column a; `@query`, `@key`, `@token` (in text and the terms' caption) name the tokens.
  /** TeX of an aligned derivation: lines[0] is the cell, each further line a right-hand side, the last the value. */
  lines: string[];
  /** The same lines as the core wrote them, words as `@{formula.<id>}` placeholders (`lines` has them in English; `explanationWords(e, t).lines` in a language). */
  line_ids: string[];
  /** One or two plain sentences saying what happens, in English: `text_id` formatted with `params` by en.json. */
  text: string;
  /**
   * The sentence as a message id of the catalogues (web/lib/locales/<lang>.json), "explain.scores.dot": a view
   * in another language formats it with its own catalogue (attention-explorer/i18n `explanationWords(e, t)`).
   */
  text_id: string;
  /**
   * The message's parameters as text: numbers the learner copies as the core wrote them (a cell's operands
   * as their placeholders `@N`), words to choose between as keys ("yes"/"no", "row"/"column"); `hidden`
   * names what hid a key ("causal_window", "none"), the message explain.hidden.
   */
  params: Record<string, string>;
  /** The numbers the placeholders name; numbers[0] is the value. */
  numbers: number[];
  /** The table of terms (a dot product's, a softmax's keys), or null. */
  terms: ExplanationTerms | null;
}

export interface ExplanationTerms {
  /** The caption in English: `caption_id` formatted with `caption_params` (it may hold `@query`, `@key`, `@token`). */
  caption: string;
  /** The caption's message id, "explain.terms.keys_of_query", and its parameters. */
  caption_id: string;
  caption_params: Record<string, string>;
  /** The headers in English; headers[0] heads the row labels. */
  headers: string[];
  /** The headers as the core wrote them: a message id in words ("explain.term.weight"), or a symbol as it is shown ("q", "x̂"). */
  header_ids: string[];
  /** What labels the rows: 'feature' or 'm' (1, 2, ...), 'key' (the keys' names), 'query' (the queries'). */
  index: 'feature' | 'm' | 'key' | 'query';
  columns: number[][];
  /** The row of the cell's own term, or -1. */
  highlight: number;
}

/** One draw from numpy's legacy stream (np.random.randn / normal / rand / randint). */
export interface Draw {
  kind: 'randn' | 'normal' | 'rand' | 'randint';
  shape: readonly [number, number];
  /** normal only, default 0 */
  loc?: number;
  /** normal only, default 1 */
  scale?: number;
  /** randint only, default 0 */
  low?: number;
  /** randint only, exclusive */
  high?: number;
}

export interface HeapStats {
  /** Bytes of wasm memory. */
  heapSize: number;
  /** Bytes malloc has handed out and not taken back. */
  inUse: number;
  /** The top of the heap (sbrk(0)). */
  sbrk: number;
}

/** engine.parseMatrixDetailed's result. */
export interface ParsedMatrix {
  values: number[][];
  /**
   * The format the text was read as, a name for people: "NumPy print output", "NumPy array",
   * "PyTorch tensor", "TensorFlow tensor", "JAX array", "Julia matrix", "R matrix",
   * "Octave/MATLAB output", "Mathematica list", "LaTeX bmatrix", "Python list", "MATLAB matrix",
   * "CSV", "TSV", "semicolon-separated values", "whitespace-separated rows", ... (docs/api.md).
   */
  format: string;
}

export interface Engine {
  readonly version: string;
  /** The problem JSON's keys and what each holds, e.g. { key: "options.rope.base", expected: "a positive number" } (the CLI's help). */
  readonly problemKeys: ReadonlyArray<Readonly<{ key: string; expected: string }>>;
  /**
   * The core's step catalogue: every step a trace can hold, in trace order, the forward pass's
   * then the backward pass's (gradient: true), e.g. { id: "rope_angles", title: "RoPE angles", gradient: false }.
   */
  readonly steps: ReadonlyArray<Readonly<{ id: StepId; title: string; gradient: boolean }>>;
  /**
   * Computes one problem; throws Error (message names the field or the matrices) on bad input.
   * `reuse`: an earlier trace that is no longer needed; its matrices (rows of number arrays) that
   * sit at the same place with the same shape are refilled with this trace's numbers and returned
   * in it, so no new arrays are made for them. The earlier trace must not be read afterwards. On
   * bad input it is left as it was.
   */
  run(problem: Problem, settings?: { reuse?: Trace | null }): Trace;
  /** Computes each problem; an error message starts with "problem i of n: ". */
  runAll(problems: readonly Problem[]): Trace[];
  /** The worked calculation of one cell; a gradient step's cell needs the walkthroughs module. */
  explain(problem: Problem, cell: Cell): Explanation;
  /**
   * Loads the walkthroughs module once (decode, tiles, onlineSoftmax, gradients and explain of
   * gradient cells throw "engine.decode needs the walkthroughs module: ..." until it is loaded);
   * resolves to this engine. Idempotent; a failed load can be tried again.
   */
  loadWalkthroughs(): Promise<Engine>;
  /** Whether the walkthroughs module is loaded. */
  readonly walkthroughsLoaded: boolean;
  /**
   * A small transformer that trains (docs/model.md). Needs the model module (loaded at once in
   * Node; in browsers by loadModel() or loadAttention({ model: true })). Throws Error naming the
   * key for a bad configuration or weights ("model.heads: 4 heads do not divide d_model = 10 ...").
   */
  model(config: TrainConfig | string, settings?: { weights?: ModelWeights | string }): Model;
  /** The model's tasks and presets (needs the model module). */
  modelCatalogue(): ModelCatalogue;
  /** Loads the model module once; resolves to this engine. A failed load can be tried again. */
  loadModel(): Promise<Engine>;
  /** Whether the model module is loaded. */
  readonly modelLoaded: boolean;
  /**
   * The backward pass: the trace, then the gradient of L = Σ O∘dO with respect to every step back
   * to the inputs as given. `dO` (or the problem's dO) is shaped like the output; default all
   * ones. Throws Error for a problem run() refuses or a dO of another shape ("dO has 3 rows but
   * the output has 4 ...").
   */
  gradients(problem: Problem, settings?: { dO?: MatrixInput }): Gradients;
  /**
   * Runs a self-attention problem as a model generates it: at step t, token t's query attends to
   * the KV cache of tokens 0..t−1 plus its own key and value (causal whatever options.causal
   * says). Throws for past_K/past_V, X_kv, or a different number of keys and queries.
   */
  decode(problem: Problem): Decoding;
  /**
   * FlashAttention-2's forward pass: per head, query blocks of `block_q` rows (outer loop) and key
   * blocks of `block_k` keys (inner loop), with the running max, running sum and partial output.
   */
  tiles(problem: Problem, blocks: TileSizes): Tiles;
  /**
   * Causal linear attention token by token (its recurrent form: the state S and z per token) or,
   * with `{ chunk }`, chunk by chunk (inside each chunk in parallel plus the carried state), each
   * token's output beside the parallel form's, and each form's cost beside softmax attention's.
   */
  recurrent(problem: Problem, options?: RecurrentOptions): Recurrent;
  /** The softmax of one row entry by entry (running max and sum); -Infinity hides an entry. */
  onlineSoftmax(row: readonly number[] | Float64Array | Float32Array, options?: OnlineSoftmaxOptions): OnlineSoftmax;
  /**
   * Parses pasted text in any format the parser reads (docs/api.md: NumPy, PyTorch, TensorFlow,
   * JAX, Julia, R, Octave/MATLAB, Mathematica, LaTeX, CSV/TSV, ...); errors start with `name`.
   */
  parseMatrix(text: string, name?: string): number[][];
  /** parseMatrix, plus the name of the format the text was read as. */
  parseMatrixDetailed(text: string, name?: string): ParsedMatrix;
  /**
   * One number as typed into a table cell: `1,5` is 1.5 (never two numbers); an empty cell, two
   * numbers or `1,234` (a thousands separator?) is refused. `row`, `col` (from 1, default 1) name
   * the cell in the message: "X: row 2, column 3: ...".
   */
  parseCell(text: string, name?: string, row?: number, col?: number): number;
  /** np.random.seed(seed) once, then each draw in order from the same stream. */
  random(seed: number, draws: readonly Draw[]): number[][][];
  /**
   * The output-only path for numbers at scale (docs/performance.md): Q (L×d_k), K (S×d_k),
   * V (S×d_v) as typed arrays (with L and S) or nested arrays; never builds the L×S matrix.
   */
  attention(input: FastInput): FastResult;
  /** Which kernels `attention` runs: "wasm-simd128" or "eigen". */
  fastKernels(): 'wasm-simd128' | 'eigen';
  /** Diagnostic for leak checks; not part of the computation API. */
  heapStats(): HeapStats;
}

/** One step of engine.decode(): token t with the cache of tokens 0..t−1. */
export interface DecodeStep {
  t: number;
  /** Keys and values the new query reads: t cached + its own. */
  cache_rows: number;
  /** One row per head: the new row of QKᵀ (before scaling), cache_rows long. */
  scores: number[][];
  /** One row per head: the new row of attention weights. */
  weights: number[][];
  /** The token's output (its row of the output). */
  output: number[];
  /** Multiply-adds of the matrix products for this token with the cache (the new token's
   *  projections, one row of QKᵀ and of A·V, W_O) and recomputing causal attention of tokens
   *  0..t from scratch (docs/api.md). */
  flops_cached: number;
  flops_full: number;
  /** max |this step − token t of engine.run() with causal: true| over weights and output. */
  difference: number;
}

export interface Decoding {
  steps: DecodeStep[];
  /** Every token's output, in the problem's layout. */
  output: number[][];
  /** In English; `warning_messages` are the same as messages (`t.message(m)` in another language). */
  warnings: string[];
  warning_messages: Message[];
  flops_cached: number;
  flops_full: number;
}

/** engine.recurrent()'s options: `chunk`, a positive integer (absent: token by token). */
export interface RecurrentOptions {
  chunk?: number;
}

/** One token (or chunk) of one head of engine.recurrent(). */
export interface RecurrentStep {
  head: number;
  /** [first, end): the tokens of this step. */
  tokens: [number, number];
  /** S after the step: d_k × d_v, Σ γ^(p − pos(j))·φ(k_j)v_jᵀ over the keys so far. */
  state: number[][];
  /** z after the step: Σ γ^(p − pos(j))·φ(k_j) (empty when not normalized). */
  z: number[];
  /** Chunked form: the numerators from inside the chunk and from the carried state (empty: recurrent form). */
  intra: number[][];
  inter: number[][];
  /** Chunked form: the denominators likewise. */
  intra_normalizer: number[];
  inter_normalizer: number[];
  /** The head's output rows of these tokens. */
  output: number[][];
  /** max |output − the parallel form's rows|. */
  difference: number;
}

/** A form's cost: multiply-adds of its products and the numbers it keeps (summed over the heads). */
export interface FormCost {
  form: 'softmax' | 'parallel' | 'recurrent' | 'chunked';
  multiply_adds: number;
  state: number;
}

/** engine.recurrent()'s result. */
export interface Recurrent {
  /** 0: token by token; else the chunk size. */
  chunk: number;
  steps: RecurrentStep[];
  output: number[][];
  max_difference: number;
  costs: FormCost[];
  /** In English; `warning_messages` are the same as messages (`t.message(m)` in another language). */
  warnings: string[];
  warning_messages: Message[];
}

/** engine.tiles()'s block sizes: positive integers (a block larger than the sequence is the sequence). */
export interface TileSizes {
  block_q: number;
  block_k: number;
}

/** One tile (query block × key block of one head), in the order FlashAttention-2 visits them. */
export interface Tile {
  head: number;
  q_block: number;
  k_block: number;
  /** [first, end) of the tile's queries and keys, counted from 0. */
  queries: [number, number];
  keys: [number, number];
  /** Every score hidden (−∞): the algorithm skips the tile; its number arrays are empty. */
  skipped: boolean;
  /** The scores the softmax reads (scaled, capped, biased, masked); transposed in the columns layout. */
  scores: number[][];
  /** Per query of the tile: running max m, e^(m_before − m_after), running sum ℓ. */
  m_before: number[];
  m_after: number[];
  rescale: number[];
  l_before: number[];
  l_after: number[];
  /** The unnormalised output Õ of the tile's queries (queries × d_v; transposed in the columns layout). */
  partial_before: number[][];
  partial_after: number[][];
}

/** A query block of one head after its last key block: output = Õ / ℓ. */
export interface TileBlock {
  head: number;
  q_block: number;
  queries: [number, number];
  m: number[];
  l: number[];
  output: number[][];
}

export interface Tiles {
  block_q: number;
  block_k: number;
  tiles: Tile[];
  blocks: TileBlock[];
  /** Tiles computed and tiles skipped. */
  visited: number;
  skipped: number;
  /** The problem's output (through W_O when given). */
  output: number[][];
  /** max |output − engine.run()'s output|. */
  max_difference: number;
  /** Bytes moved between HBM and SRAM by the standard algorithm and by these tiles (docs/api.md). */
  bytes_standard: number;
  bytes_flash: number;
  /** 8 (float64) or 4 (float32). */
  element_bytes: number;
  /** In English; `warning_messages` are the same as messages (`t.message(m)` in another language). */
  warnings: string[];
  warning_messages: Message[];
}

export interface OnlineSoftmaxOptions {
  /** Default true; false keeps m at 0, so e^x can overflow (float32: x > 88.7). */
  subtractMax?: boolean;
  /** Default "float64". */
  precision?: 'float64' | 'float32';
}

/** One entry j of the online softmax: m' = max(m, x), ℓ' = e^(m − m')·ℓ + e^(x − m'). */
export interface OnlineSoftmaxStep {
  j: number;
  x: number;
  m_before: number;
  m_after: number;
  rescale: number;
  l_before: number;
  l_after: number;
}

export interface OnlineSoftmax {
  steps: OnlineSoftmaxStep[];
  /** m and ℓ after the last entry. */
  max: number;
  sum: number;
  /** e^(x − m) / ℓ. */
  weights: number[];
  /** e.g. where e^x overflowed. */
  /** In English; `warning_messages` are the same as messages (`t.message(m)` in another language). */
  warnings: string[];
  warning_messages: Message[];
}

export interface FastInput {
  Q: Float32Array | Float64Array | readonly number[] | readonly (readonly number[])[];
  K: Float32Array | Float64Array | readonly number[] | readonly (readonly number[])[];
  V: Float32Array | Float64Array | readonly number[] | readonly (readonly number[])[];
  /** Number of queries and keys; needed when Q, K, V are flat. */
  L?: number;
  S?: number;
  causal?: boolean;
  /** "sqrt_dk" (default), "none", a number that multiplies QKᵀ, or "1/sqrt(n)" / "1/n". */
  scale?: 'sqrt_dk' | 'none' | number | string;
  /** L×S: booleans keep, numbers add (flat row-major typed arrays allowed). */
  mask?: Float32Array | Float64Array | Uint8Array | readonly number[] | readonly (readonly (number | boolean)[])[];
  /** Default: float32 for a Float32Array Q, else float64. */
  precision?: 'float64' | 'float32';
}

export interface FastResult {
  /** L×d_v, row-major, a fresh copy. */
  output: Float32Array | Float64Array;
  shape: [number, number];
  precision: 'float64' | 'float32';
  fully_masked_rows: number;
}

export interface LoadOptions {
  /** Where attention.wasm is (URL; in Node also a file path). Default: next to the package's JS. */
  wasmUrl?: string | URL;
  /** Where attention-walkthroughs.wasm is (URL; in Node also a file path). Default: next to the package's JS. */
  walkthroughsUrl?: string | URL;
  /**
   * Load the walkthroughs module (decode, tiles, onlineSoftmax, gradients, explain of gradient
   * cells) at once. Default: false in browsers (engine.loadWalkthroughs() loads it), true in Node.
   */
  walkthroughs?: boolean;
  /** Where attention-model.wasm is (URL; in Node also a file path). Default: next to the package's JS. */
  modelUrl?: string | URL;
  /** Load the model module (engine.model) at once. Default: false in browsers (engine.loadModel()), true in Node. */
  model?: boolean;
}

// ---- the model that trains (docs/model.md) -----------------------------------------------------

/** A model's shape and options; defaults in brackets in docs/model.md. */
export interface ModelConfig {
  vocab?: number;
  context: number;
  d_model: number;
  layers?: number;
  heads?: number;
  d_head?: number;
  kv_heads?: number;
  positions?: 'learned' | 'sinusoidal' | 'rope' | 'none';
  /** 0: attention-only; else the MLP's hidden width. */
  mlp?: number;
  activation?: 'relu' | 'gelu';
  norm?: 'none' | 'layernorm' | 'rmsnorm';
  bias?: boolean;
  tied?: boolean;
  precision?: 'float32' | 'float64';
}

export type TaskName = 'previous' | 'reverse' | 'sort' | 'recall' | 'induction' | 'text' | 'custom';

/** A training run: the CLI's `train` file. */
export interface TrainConfig {
  model: ModelConfig;
  /** A task name, { name: 'text', text }, or { name: 'custom', tokens, targets }. Absent: a model that is only evaluated. */
  task?:
    TaskName | { name: 'text'; text: string } | { name: 'custom'; tokens: number[][] | number[]; targets: number[][] | number[] } | null;
  optimizer?: {
    lr?: number;
    beta1?: number;
    beta2?: number;
    eps?: number;
    /** Decoupled weight decay on the weight matrices (E, P, W_*, U), not on biases or gains. */
    weight_decay?: number;
    warmup?: number;
    schedule?: 'constant' | 'cosine';
    min_lr?: number;
    total_steps?: number;
    /** Largest global gradient norm; 0: no clipping. */
    clip?: number;
  };
  steps?: number;
  batch?: number;
  seed?: number;
  eval_every?: number;
}

/** A norm's gains (and a layernorm's offsets). */
export interface NormWeights {
  g: number[];
  b?: number[];
}

/** A layer's weights; keys the configuration does not use are absent. */
export interface LayerWeights {
  norm_attn?: NormWeights;
  W_Q: number[][];
  b_Q?: number[];
  W_K: number[][];
  b_K?: number[];
  W_V: number[][];
  b_V?: number[];
  W_O: number[][];
  b_O?: number[];
  norm_mlp?: NormWeights;
  W_in?: number[][];
  b_in?: number[];
  W_out?: number[][];
  b_out?: number[];
}

/** The weights under the contract's keys (and the gradients, shaped the same). */
export interface ModelWeights {
  E: number[][];
  P?: number[][];
  layers: LayerWeights[];
  norm_final?: NormWeights;
  U?: number[][];
  b_U?: number[];
}

/** A head's detector scores (layers and heads from 1). */
export interface HeadScore {
  layer: number;
  head: number;
  previous_token: number;
  induction: number;
  duplicate_token: number;
  first_token: number;
  /** The probe loss with this head's output zeroed. */
  ablated_loss: number;
}

export interface TaskExample {
  name: TaskName;
  description: string;
  tokens: number[];
  targets: number[];
  /** text: the characters tokens stand for. */
  alphabet?: string[];
}

export interface Model {
  /** The configuration with every default written out. */
  readonly config: Required<Omit<TrainConfig, 'task'>> & { model: Required<ModelConfig>; task: TrainConfig['task'] };
  readonly example: TaskExample | null;
  /** Optimiser steps taken so far. */
  readonly step: number;
  /** Trains `steps` steps; the training loss of each. Throws when a loss stops being finite (the step and the cause). */
  train(steps?: number): number[];
  /** Loss and accuracy on the task's fixed probe batch; `ablate` switches heads off. */
  evaluate(settings?: { ablate?: Array<[number, number]> }): { step: number; loss: number; accuracy: number | null; predictions: number };
  headScores(): HeadScore[];
  /** A problem for engine.run(): that head (from 1) of that layer (from 1) on these tokens. */
  headProblem(layer: number, head: number, tokens: number[]): Problem;
  weights(): ModelWeights;
  gradients(
    tokens: number[] | number[][],
    targets?: number[] | number[][],
  ): { loss: number; logits: number[][] | number[][][]; gradients: ModelWeights };
  predict(
    tokens: number[],
    settings?: { ablate?: Array<[number, number]> },
  ): {
    tokens: number[];
    logits: number[][];
    predictions: number[];
    /** [layer][head]: T×T attention weights. */
    attention: number[][][][];
  };
  /** Frees the model's memory now (otherwise when it is garbage-collected). */
  dispose(): void;
}

export interface ModelCatalogue {
  tasks: Array<{ name: TaskName; description: string }>;
  presets: Array<{
    name: string;
    description: string;
    /** Asked before training; the run reveals the answer. */
    question: string;
    /** How: the first layer or head whose `score` passes `threshold`, or whether `accuracy` is passed by the last step. */
    reveal:
      | { choose: 'layer' | 'head'; score: 'previous_token' | 'induction' | 'duplicate_token' | 'first_token'; threshold: number }
      | { choose: 'yes_no'; accuracy: number };
    config: TrainConfig;
    example: TaskExample | null;
  }>;
}

/** The model's methods in a Worker running `attention-explorer/model-worker`, as promises. */
export interface ModelWorker {
  load(settings?: { wasmUrl?: string | URL }): Promise<true>;
  catalogue(): Promise<ModelCatalogue>;
  create(
    config: TrainConfig | string,
    settings?: { weights?: ModelWeights | string },
  ): Promise<{ config: Model['config']; example: TaskExample | null; step: number }>;
  step(): Promise<number>;
  train(steps: number): Promise<number[]>;
  evaluate(settings?: { ablate?: Array<[number, number]> }): Promise<ReturnType<Model['evaluate']>>;
  headScores(): Promise<HeadScore[]>;
  headProblem(layer: number, head: number, tokens: number[]): Promise<Problem>;
  weights(): Promise<ModelWeights>;
  gradients(tokens: number[] | number[][], targets?: number[] | number[][]): Promise<ReturnType<Model['gradients']>>;
  predict(tokens: number[], settings?: { ablate?: Array<[number, number]> }): Promise<ReturnType<Model['predict']>>;
  terminate(): void;
}

/** Talks to a Worker started from `attention-explorer/model-worker`. */
export function connectModelWorker(worker: Worker): ModelWorker;

/** Loads the WebAssembly core; rejects with an Error naming the URL or path it tried. */
export function loadAttention(options?: LoadOptions): Promise<Engine>;

/**
 * Wraps an already instantiated Emscripten module (advanced use). `reload`, when given, makes a fresh module after a
 * crash inside the wasm (the crashed call throws an Error whose `reloaded` promise settles when
 * the fresh module is in place). Throws when the module is from another build of the package (its
 * wire format version differs). Without `loadWalkthroughs`, engine.loadWalkthroughs() rejects.
 */
export function createEngine(
  module: unknown,
  reload?: () => Promise<unknown>,
  /** Resolves to [module, reload] of the walkthroughs module, for engine.loadWalkthroughs(). */
  loadWalkthroughs?: () => Promise<[unknown, (() => Promise<unknown>)?]>,
  /** Resolves to [module] of the model module, for engine.loadModel(). */
  loadModel?: () => Promise<[unknown, (() => Promise<unknown>)?]>,
): Engine;

/** A JSON-safe deep copy: Infinity, -Infinity, NaN become "inf", "-inf", "nan". */
export function toJSON<T>(value: T): unknown;
/** JSON text with "inf"/"-inf"/"nan"; with an indent, rows of numbers stay on one line. */
export function stringify(value: unknown, indent?: number | string): string;

export const version: string;

export interface Recipe {
  seed: number;
  draws: Array<Draw & { name: string; join?: 'columns' }>;
}

export interface Preset {
  id: string;
  title: string;
  source: string;
  url?: string;
  note?: string;
  mode: 'qkv' | 'self' | 'cross';
  tokens?: string[];
  kvTokens?: string[];
  inputs?: Record<string, number[][] | number[]>;
  random?: Recipe[];
  options?: Options;
  expect?: Record<string, unknown>;
}

/** Ready-made problems: the seed examples and more. */
export const presets: Preset[];
export function findPreset(id: string): Preset | undefined;
/** A preset as a problem (random inputs drawn with `engine`), with the numpy lines per input. */
export function presetProblem(preset: Preset, engine: Engine): { problem: Problem; numpy: Record<string, string> };
/** Token names for narrate(): as the page shows them; a missing name reads "query 1", "key 1", ... */
export interface NarrateLabels {
  tokensQ?: string[];
  tokensK?: string[];
  /** The problem's options: with `score_fn: "sigmoid"` the weights (and dS) are told as sigmoids' (rows need not sum to 1, or dS's to 0). */
  options?: Options;
}
/**
 * One sentence per step (the trace's order): what it does and what to notice in these numbers, in
 * the language of `t` (`attention-explorer/i18n`'s loadTranslator(lang); default English).
 */
export function narrate(trace: Trace, labels?: NarrateLabels, t?: Translator): string[];
/** The sentence of step `index` of `trace`, e.g. "sweet? puts 80% of its weight on banana because their score is largest." */
export function narrateStep(trace: Trace, index: number, labels?: NarrateLabels, t?: Translator): string;
/**
 * What each query's attention weights sum to, from the problem's options and a head's facts:
 * 'one' (softmax), 'lambda' (differential: 1 − λ), 'sink' (a sink logit takes a share: less than
 * 1) or 'free' (sigmoid: each weight on its own); `phrase` completes "each query's weights …".
 */
export function weightSums(options?: Options, facts?: Partial<HeadFacts>): { kind: 'one' | 'lambda' | 'sink' | 'free'; phrase: string };
/** Online softmax (engine.onlineSoftmax's result): position j < n tells entry j (running max, sum, rescale), position n the weights or the overflow. */
export function narrateOnlineSoftmax(result: OnlineSoftmax, index: number, settings?: OnlineSoftmaxOptions, t?: Translator): string;
/** engine.decode's step `index`: the cache, where the new token's weight goes, multiply-adds with and without the cache, the check against causal attention. */
export function narrateDecodeStep(decoding: Decoding, index: number, labels?: NarrateLabels, t?: Translator): string;
/** engine.tiles: position i < tiles.length tells tile i (running max, rescale, sum), position tiles.length the output's check and the bytes moved. */
export function narrateTile(tiles: Tiles, index: number, labels?: NarrateLabels, t?: Translator): string;
/** The gradient step `index` (into gradients.steps, an id starting with "d"): what it is, its largest entry, what heads share. */
export function narrateGradientStep(gradients: Gradients, index: number, labels?: NarrateLabels, t?: Translator): string;
/** Cells that feed or are fed by a cell: of a step (index into trace.steps) or of a problem input. */
export type Lineage = Array<
  { step: number; level: number; cells: Array<[number, number]> } | { input: string; level: number; cells: Array<[number, number]> }
>;
/**
 * The cells a cell (row, col, from 0, in the step's layout) was computed from, through every
 * earlier step: level 1 is what it reads directly (a score: its query row and key row; a weight:
 * its row of the scores the softmax read; an output: its row of weights and column of V), 0 the
 * same number in another head of its GQA group. Problem inputs (X, W_Q, past_K, the mask, ...)
 * are listed when `problem` holds them as arrays (a bias as one row).
 */
export function precedents(
  trace: Trace,
  stepIndex: number,
  row: number,
  col: number,
  options?: { problem?: Problem; depth?: number },
): Lineage;
/** The cells of later steps computed from a cell, nearest first (levels as in precedents). */
export function dependents(trace: Trace, stepIndex: number, row: number, col: number, options?: { depth?: number }): Lineage;
/** The numpy lines a recipe stands for, e.g. ["np.random.seed(42)", "Q = np.random.randn(4, 8)"]. */
export function numpyLines(recipe: Recipe): string[];
/** One line: "np.random.seed(seed); name = np.random...". */
export function numpyLine(name: string, seed: number, draw: Draw): string;

// ---- exports (export.js: latex.js, data.js, python.js, svg.js): LaTeX, CSV, JSON, NumPy/PyTorch
// scripts, SVG heatmaps --------------------------------------------------------------------------

/** What the exports read off a problem: its inputs as numbers, layout, mode, options (what the
 *  core computes, e.g. the scale factor, comes from the trace). */
export interface ProblemContext {
  layout: 'rows' | 'columns';
  mode: 'qkv' | 'self' | 'cross';
  inputs: Record<string, number[][] | number[]>;
  bias: { Q: boolean; K: boolean; V: boolean };
  hasWO: boolean;
  hasBO: boolean;
  causal: boolean;
  maskKind: 'none' | 'keep' | 'additive';
  mask: number[][] | null;
  /** How the scores are scaled (a number multiplies, text such as "1/sqrt(3)" divides); `text` quotes the option. */
  scale: { kind: 'sqrt_dk' | 'none' | 'multiply' | 'divide'; text: string };
  softcap: number;
}
export interface LatexOptions {
  decimals?: number;
  /** Larger matrices show their first rows/columns, dots and the last one (default 16). */
  max?: number;
}
export interface HeatmapOptions {
  title?: string;
  rowLabels?: readonly string[];
  colLabels?: readonly string[];
  /** The colour scale; default the step's own kind (probabilities 0 to 1, signed symmetric about 0). */
  kind?: ValueKind;
  /** The axes' names, drawn as "query ↓ key →" (e.g. { rows: 'query', cols: 'key' }). */
  axisTitles?: { rows: string; cols: string };
  /** Cells drawn grey as masked (true where hidden), e.g. the weights of keys a mask hid. */
  masked?: readonly (readonly boolean[])[];
  /** Draw the colour bar with the scale's meaning under the grid (default true). */
  colourBar?: boolean;
  /** Cell size in px. */
  cell?: number;
  /** Write the values in the cells (default: when cells are at least 36 px). */
  numbers?: boolean;
  decimals?: number;
  /** The language of the file's own words (the scale's meaning, a masked cell's tooltip, the default title); default English. */
  t?: Translator;
}
/** A step, or any matrix with the step fields an export uses. */
type StepLike = {
  id: string;
  head?: number | null;
  data: readonly (readonly number[])[];
  title?: string;
  title_id?: string;
  kind?: ValueKind;
};

/** `trace` (the problem's) gives the mask kind: needed when the problem has a mask. */
export function problemContext(problem: Problem, trace?: Trace): ProblemContext;
/**
 * A step's title with its head (from 1) when `heads` > 1, e.g. "Scores, head 2", in the language
 * of `t` (default English; the title is the catalogue's message `title_id`, else `title`).
 */
export function stepCaption(step: Pick<Step, 'title' | 'head'> & { title_id?: string }, heads: number, t?: Translator): string;
/**
 * Labels along `axis` of RoPE's angle table (the step with a "positions" axis): the positions
 * ("p = 0", from meta.rope_positions) and the rotated pairs i of θ_i ("i = 0"); null for any other step.
 */
export function positionsAxisLabels(
  step: Pick<Step, 'axes' | 'shape'>,
  axis: Axis,
  meta: Pick<Trace['meta'], 'rope_positions'>,
): { labels: string[]; title: 'position' | 'pair' } | null;

// ---- numbers as text (format.js): the one rule of the page, the component and the exports ----

export interface NumberFormat {
  /** 0 as "0.0000" (columns that line up) instead of "0". */
  fixedZero?: boolean;
  /** formatNumber only: a number that rounds to 0 at `decimals` shown as 0 (tables), not 1.500e−7. */
  tinyAsZero?: boolean;
}
/** `decimals` places (default 4), or scientific (1.500e−7) where fixed places would show no digit
 *  or |x| ≥ 1e7; −∞, ∞, NaN; a typographic minus (U+2212). */
export function formatNumber(x: number, decimals?: number, options?: NumberFormat): string;
/** The same in TeX: -\infty, \text{NaN}, 1.500 \times 10^{-7}. */
export function texNumber(x: number, decimals?: number, options?: NumberFormat): string;
/** A matrix or vector as text engine.parseMatrix reads back exactly (rows on lines, "-inf" for -Infinity). */
export function matrixToText(value: readonly (readonly (number | string)[])[] | readonly (number | string)[]): string;

export function matrixLatex(data: readonly (readonly number[])[], options?: LatexOptions): string;
/** "symbol = \begin{bmatrix}...\end{bmatrix}" (the step's own symbol; its formula is step.tex). */
export function stepLatex(step: Pick<Step, 'symbol' | 'data'>, options?: LatexOptions): string;
/**
 * Every step's formula and matrix in \[ ... \]; `standalone` gives a whole document. Its headings,
 * captions and default title are in the language of `t` (default English); numbers are the same in every language.
 */
export function solutionLatex(
  problem: Problem,
  trace: Trace,
  options?: LatexOptions & { standalone?: boolean; title?: string; t?: Translator },
): string;
/** An engine.explain() result as a TeX aligned block; `trace` (of the same problem) names the steps. */
export function cellLatex(explanation: Explanation, trace: Trace, options?: LatexOptions & { maxTerms?: number; t?: Translator }): string;
/**
 * An engine.explain() result's sentences as plain text, tokens named by place ("query 2", "key 3"), in the
 * language of `t` (a translator of attention-explorer/i18n; default English).
 */
export function cellText(explanation: Explanation, trace: Trace, options?: { decimals?: number; t?: Translator }): string;
/**
 * One of an explanation's templates (a line, its text, its terms' caption) with its placeholders
 * filled: numbers by `number`, sums of terms (more than `maxTerms`, default 8: elided with \cdots),
 * token names by `label` ('query' | 'key' | 'token').
 */
export function fillExplanation(
  template: string,
  explanation: Explanation,
  options: { number: (x: number) => string; maxTerms?: number; label?: (name: 'query' | 'key' | 'token') => string },
): string;
export function matrixCsv(
  data: readonly (readonly number[])[],
  options?: { rowLabels?: readonly string[]; colLabels?: readonly string[] },
): string;
export function stepCsv(step: StepLike, options?: { rowLabels?: readonly string[]; colLabels?: readonly string[] }): string;
/** step,head,row,col,value: the whole trace in one table. */
export function traceCsv(trace: Trace): string;
/** Reads matrixCsv (no labels) back as rows, or traceCsv back as { steps }. */
export function parseCsv(
  text: string,
): number[][] | { steps: Array<{ id: string; head: number | null; shape: [number, number]; data: number[][] }> };
export function traceJson(trace: Trace, indent?: number | string): string;
/** Options of decodeLatex and tilesLatex: solutionLatex's, and token names for the headings. */
export interface WalkthroughLatexOptions extends LatexOptions {
  /** A complete document (amsmath) instead of a fragment. */
  standalone?: boolean;
  title?: string;
  /** Token names, as narrate's labels ("Token 2 (sat)"); missing names are numbers. */
  labels?: NarrateLabels;
  /** The headings' and sentences' language (`attention-explorer/i18n`'s loadTranslator(lang); default English). */
  t?: Translator;
}
/**
 * engine.decode's result as LaTeX: per token its cache, the new row of scores and weights of each
 * head, its output row, multiply-adds with and without the cache, the check against causal attention.
 */
export function decodeLatex(decoding: Decoding, options?: WalkthroughLatexOptions): string;
/**
 * engine.tiles' result as LaTeX: the recurrence, per tile its scores, m, ℓ before and after, the
 * rescale factor and Õ before and after (or that it is skipped); the output, its difference from
 * run()'s, the bytes moved.
 */
export function tilesLatex(tiles: Tiles, options?: WalkthroughLatexOptions): string;
/**
 * t,head,quantity,row,col,value: a row per number of engine.decode's result. scores, weights (per
 * head) and output are row t of the whole matrix (col: key or feature); cache_rows, flops_cached,
 * flops_full, difference one per token (head, row, col empty).
 */
export function decodeCsv(decoding: Decoding): string;
/**
 * tile,head,q_block,k_block,quantity,row,col,value: a row per number of engine.tiles' result, tile
 * by tile (skipped as 1 or 0, then its arrays, row and col as the tile holds them), then output,
 * max_difference, bytes_standard, bytes_flash, element_bytes with the tile columns empty.
 */
export function tilesCsv(tiles: Tiles): string;
/** A NumPy script that recomputes every step; `--json` prints them as JSON. */
export function numpyScript(
  problem: Problem,
  trace: Trace,
  options?: {
    recipe?: string;
    /** The language of the comments (default English); the code is the same in every language. */
    t?: Translator;
    /** `trace` is engine.gradients(problem)'s result: the script rebuilds its gradient steps too. */
    gradients?: boolean;
  },
): string;
/** A PyTorch script: the same steps, checked against F.scaled_dot_product_attention when possible. */
export function pytorchScript(problem: Problem, trace: Trace, options?: { recipe?: string; t?: Translator }): string;
/** Colours of a matrix of `kind` (default "signed"); null for non-finite values. */
export function heatColours(data: readonly (readonly number[])[], kind?: ValueKind): (v: number) => { fill: string; text: string } | null;
/**
 * What a legend shows for a matrix of `kind`: the scale's meaning ("weight, 0 to 1", "signed, ±max",
 * "mask, 1 kept, 0 hidden", "bias, ±max (−∞ hides)": English, the catalogue's export.legend.<scale>), its two ends and its colours from low to high.
 */
export function colourLegend(
  data: readonly (readonly number[])[],
  kind: ValueKind,
): { meaning: string; lo: number; hi: number; colours: string[] };
/** The two ends of a matrix's colour scale for a step `kind`: [0, 1] for probabilities and keep-masks, else [-max, max]. */
export function colourRange(data: readonly (readonly number[])[], kind: ValueKind): [number, number];
/** A matrix's colour scale for a step `kind`: probabilities sequential from 0 to 1, others diverging around 0. */
export function colourScale(
  data: readonly (readonly number[])[],
  kind: ValueKind,
): (v: number) => { bg: string; fg: string; rgb: number[] } | null;
/** The same scale as a 256-entry RGB lookup table for canvases; `index` is -1 for non-finite values. */
export function colourLut(data: readonly (readonly number[])[], kind: ValueKind): { lut: Uint8ClampedArray; index: (v: number) => number };
/** A standalone SVG document (string). */
export function heatmapSvg(step: StepLike, options?: HeatmapOptions): string;
export function stepFileName(step: Pick<Step, 'id' | 'head'>, ext: string, heads?: number): string;
