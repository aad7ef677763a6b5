// The worked calculation of one cell, from engine.explain(): every number shown is one the
// engine reports (terms, products, max, exps, sums); this module only writes them out.
import { fmt, tex, escapeHtml } from './format.js';
import { mathHtml } from './math.js';

const MAX_TERMS_IN_FORMULA = 3;
const MAX_TABLE_ROWS = 64;

/** "a·b + c·d + ⋯ + y·z" in TeX, with at most a few terms written out. */
function sumTerms(left, right, d) {
  const term = (k) => `(${tex(left[k], d)})(${tex(right[k], d)})`;
  const n = left.length;
  if (n <= MAX_TERMS_IN_FORMULA) return left.map((_, k) => term(k)).join(' + ');
  return `${term(0)} + ${term(1)} + \\cdots + ${term(n - 1)}`;
}

/** Lines of an aligned derivation: "lhs &= a \\ &= b". */
function aligned(lhs, ...rhs) {
  return `\\begin{aligned} ${lhs} &= ${rhs.join(' \\\\ &= ')} \\end{aligned}`;
}

function termTable(caption, headers, rows, highlight = -1) {
  const shown = rows.slice(0, MAX_TABLE_ROWS);
  let html = `<table class="terms"><caption>${caption}</caption><thead><tr>${headers.map((h) => `<th scope="col">${h}</th>`).join('')}</tr></thead><tbody>`;
  shown.forEach((cells, i) => {
    html += `<tr${i === highlight ? ' class="hl"' : ''}><th scope="row">${cells[0]}</th>${cells.slice(1).map((c) => `<td>${c}</td>`).join('')}</tr>`;
  });
  if (rows.length > shown.length) html += `<tr><td colspan="${headers.length}" class="hint">… and ${rows.length - shown.length} more terms</td></tr>`;
  return html + '</tbody></table>';
}

/** A problem input's name in TeX: X_{kv}; Ω and β for the weights and biases of the columns layout. */
function inputTex(name, columns) {
  const [letter, sub] = name.split('_');
  const greek = columns ? { W: '\\Omega', b: '\\beta' }[letter] : undefined;
  return sub ? `${greek ?? letter}_{${sub}}` : letter;
}

/**
 * HTML for an explanation. `where`: { step (the trace's step), steps (all of them), rowLabel,
 * colLabel, queryLabel, keyLabel, keyLabels[], layout, heads, scaleMode, d_k, decimals }.
 */
export function explanationHtml(e, where) {
  const d = where.decimals;
  const { kind, step, head, row, col, value, left, right, products } = e;
  const columns = where.layout === 'columns';
  const name = where.step.title;
  const headTxt = where.heads > 1 && head != null && head >= 0 ? `, head ${head + 1}` : '';
  let html = `<p class="drill-target"><strong>${escapeHtml(name)}</strong>${headTxt}: row ${row + 1} <span class="lbl">(${escapeHtml(where.rowLabel)})</span>, column ${col + 1} <span class="lbl">(${escapeHtml(where.colLabel)})</span></p>`;
  html += `<p class="drill-value">= <strong>${fmt(value, d)}</strong></p>`;
  const eq = (t) => `<div class="drill-eq">${mathHtml(t, true)}</div>`;
  // In the columns layout the step's (row, col) is (feature, token) or (key, query).
  const q = where.queryLabel, k = where.keyLabel;

  switch (kind) {
    case 'input':
      html += `<p>${escapeHtml(step)} was given directly: this number is one of your inputs.</p>`;
      break;
    case 'projection': {
      // Q, K, V read [X or X_kv, W, b?]; the output [W_O, b_O?] and the heads (its input step).
      const hasBias = e.has_bias;
      const bias = e.bias;
      const isOut = step === 'output';
      const given = where.step.given;
      const [x, w, b] = isOut ? [null, ...given] : given;
      const inName = isOut ? where.steps[where.step.inputs[0]].symbol : inputTex(x, false);
      const wName = inputTex(w, columns);
      const bName = b ? inputTex(b, columns) : '';
      const token = columns ? where.colLabel : where.rowLabel;
      html += `<p>The ${isOut ? 'row' : 'token'} <span class="lbl">${escapeHtml(token)}</span> of ${isOut ? 'the heads' : (x === 'X' ? 'X' : 'X<sub>kv</sub>')} times one ${columns ? 'row' : 'column'} of the weights, term by term${hasBias ? ', plus the bias' : ''}:</p>`;
      html += eq(aligned(`{${where.step.symbol}}_{${row + 1},${col + 1}}`, `\\sum_m ${inName}_{\\cdot m}\\,(${wName})_{m\\cdot}${hasBias ? ` + ${bName}` : ''}`, `${sumTerms(left, right, d)}${hasBias ? ` + ${tex(bias, d)}` : ''}`, tex(value, d)));
      html += termTable('Terms', ['m', `${isOut ? 'H' : 'X'} value`, 'weight', 'product'],
        left.map((x, m) => [String(m + 1), fmt(x, d), fmt(right[m], d), fmt(products[m], d)]));
      if (hasBias) html += `<p>bias: ${fmt(bias, d)}</p>`;
      break;
    }
    case 'dot':
      html += `<p>The query of <span class="lbl">${escapeHtml(q)}</span> dotted with the key of <span class="lbl">${escapeHtml(k)}</span>, over the d<sub>k</sub> = ${left.length} features:</p>`;
      html += eq(aligned(`q_{\\text{${escapeTexText(q)}}} \\cdot k_{\\text{${escapeTexText(k)}}}`, '\\textstyle\\sum_m q_m k_m', sumTerms(left, right, d), tex(value, d)));
      html += termTable('Term by term', ['feature', 'q', 'k', 'q × k'],
        left.map((x, m) => [String(m + 1), fmt(x, d), fmt(right[m], d), fmt(products[m], d)]));
      html += `<p>sum of the products = <strong>${fmt(value, d)}</strong></p>`;
      break;
    case 'scale': {
      const { input, factor, divisor } = e;
      if (divisor) {
        html += eq(`\\frac{${tex(input, d)}}{${where.scaleMode === 'sqrt_dk' ? `\\sqrt{${where.d_k}}` : tex(divisor, d)}} = \\frac{${tex(input, d)}}{${tex(divisor, d)}} = ${tex(value, d)}`);
        html += `<p>The score divided by ${where.scaleMode === 'sqrt_dk' ? `√d<sub>k</sub> = √${where.d_k}` : 'the chosen divisor'} = ${fmt(divisor, d)}.</p>`;
      } else {
        html += eq(`${tex(input, d)} \\times ${tex(factor, d)} = ${tex(value, d)}`);
        html += `<p>The score multiplied by the scale ${fmt(factor, d)}${factor === 1 ? ' (no scaling)' : ''}.</p>`;
      }
      break;
    }
    case 'softcap': {
      const { input, factor: cap } = e;
      html += eq(`${tex(cap, d)} \\tanh\\!\\left(\\frac{${tex(input, d)}}{${tex(cap, d)}}\\right) = ${tex(value, d)}`);
      html += '<p>Soft-capping squashes large scores smoothly into (−c, c).</p>';
      break;
    }
    case 'mask': {
      const { input, additive: add } = e;
      if (e.hidden && Number.isFinite(e.fill)) {
        html += eq(`${tex(input, d)} \;\to\; ${tex(e.fill, d)}`);
        html += `<p>${hiddenBy(e)} The hidden score is replaced by the fill ${fmt(e.fill, d)}, not −∞: after the softmax this key keeps a tiny weight, and a query whose keys are all hidden spreads its weight evenly over them.</p>`;
        break;
      }
      html += eq(`${tex(input, d)} + (${tex(add, d)}) = ${tex(value, d)}`);
      html += `<p>${e.hidden ? `${hiddenBy(e)} −∞ becomes weight 0 after the softmax.` : add === 0 ? `This key is visible: the mask adds 0.${keptBySink(e)}` : 'The additive mask biases this score.'}</p>`;
      break;
    }
    case 'mask_entry':
      html += `<p>${e.hidden ? hiddenBy(e) : `This key is visible to this query.${keptBySink(e)}`}</p>`;
      break;
    case 'alibi':
      html += eq(`-m\,\lvert i - j \rvert = -${tex(e.slope, d)} \cdot \lvert ${tex(e.query_pos, 0)} - ${tex(e.key_pos, 0)} \rvert = ${tex(value, d)}`);
      html += `<p>ALiBi: this head’s slope m = ${fmt(e.slope, d)} times the distance between the query’s position ${e.query_pos} and the key’s ${e.key_pos}, subtracted: far keys lose more.</p>`;
      break;
    case 'bias':
    case 'add':
      html += eq(`${tex(e.input, d)} + (${tex(e.additive, d)}) = ${tex(value, d)}`);
      html += `<p>${kind === 'bias' ? 'The scaled score plus the ALiBi bias of this query and key.' : 'The token’s number plus its position encoding.'}</p>`;
      break;
    case 'sinusoid': {
      const even = col % 2 === 0;
      html += eq(`${even ? '\sin' : '\cos'}\!\left(\frac{${tex(e.position, 0)}}{10000^{${2 * Math.floor(col / 2)}/d}}\right) = ${even ? '\sin' : '\cos'}(${tex(e.angle, d)}) = ${tex(value, d)}`);
      html += `<p>Position ${e.position}, feature ${col + 1}: even features take the sine, odd ones the cosine of the same angle; the angle shrinks by a constant factor every two features, so each pair turns at its own speed.</p>`;
      break;
    }
    case 'rotation': {
      const [a, b] = e.left;
      const first = (columns ? row : col) === e.pair_first;
      const angle = Number.isNaN(e.angle) ? '\theta' : tex(e.angle, d);
      html += eq(first
        ? `x_{${e.pair_first + 1}}\cos ${angle} - x_{${e.pair_second + 1}}\sin ${angle} = (${tex(a, d)})(${tex(e.cos, d)}) - (${tex(b, d)})(${tex(e.sin, d)}) = ${tex(value, d)}`
        : `x_{${e.pair_first + 1}}\sin ${angle} + x_{${e.pair_second + 1}}\cos ${angle} = (${tex(a, d)})(${tex(e.sin, d)}) + (${tex(b, d)})(${tex(e.cos, d)}) = ${tex(value, d)}`);
      html += `<p>RoPE turns features ${e.pair_first + 1} and ${e.pair_second + 1} together, as a point in a plane, by the angle ${Number.isNaN(e.angle) ? 'of the cos/sin tables' : `${fmt(e.angle, d)} rad`} at position ${e.position}. A rotation keeps the pair’s length, and the dot product of a rotated query and key depends only on how far apart they are.</p>`;
      break;
    }
    case 'unrotated':
      html += `<p>This feature lies beyond RoPE’s rotated dimensions: it passes through unchanged (${fmt(value, d)}).</p>`;
      break;
    case 'cache':
      html += `<p>${e.source === 'past_K' || e.source === 'past_V' ? `Read from the cache: row ${e.source_row + 1}, feature ${e.source_col + 1} of ${escapeHtml(e.source)}, a token seen earlier whose ${e.source === 'past_K' ? 'key' : 'value'} the model kept instead of computing it again.` : `A new token: row ${e.source_row + 1}, feature ${e.source_col + 1} of this step’s new rows, appended after the cached ones.`}</p>`;
      break;
    case 'softmax': {
      const { logits, shifted, exps, max, exp_sum: sum } = e;
      const target = columns ? row : col;
      const along = columns ? 'column' : 'row';
      if (sum === 0) {
        html += `<p>Every key of this query is masked, so all its weights are 0 (no softmax is taken).</p>`;
        break;
      }
      html += `<p>Softmax along the ${along} of <span class="lbl">${escapeHtml(q)}</span>: subtract the largest score${e.has_sink ? ' or sink logit' : ''} (${fmt(max, d)}) so no exponential overflows, exponentiate, divide by the sum.</p>`;
      html += eq(aligned('A', `\\frac{e^{\\tilde S_{${target + 1}} - m}}{\\sum_{j} e^{\\tilde S_{j} - m}${e.has_sink ? ' + e^{s - m}' : ''}},\\quad m = ${tex(max, d)}${e.has_sink ? `,\\ s = ${tex(e.sink_logit, d)}` : ''}`, `\\frac{e^{${tex(logits[target], d)} - ${tex(max, d)}}}{${tex(sum, d)}}`, `\\frac{${tex(exps[target], d)}}{${tex(sum, d)}}`, tex(value, d)));
      html += termTable(`Keys of ${escapeHtml(q)}`, ['key', 'score', 'score − max', 'exp'],
        logits.map((x, j) => [escapeHtml(where.keyLabels[j] ?? String(j + 1)), fmt(x, d), fmt(shifted[j], d), fmt(exps[j], d)]), target);
      html += `<p>Σ exp${e.has_sink ? ' (with the sink’s)' : ''} = <strong>${fmt(sum, d)}</strong></p>`;
      if (e.has_sink) {
        html += `<p>The sink logit ${fmt(e.sink_logit, d)} joins the denominator (e<sup>sink − m</sup> = ${fmt(e.sink_exp, d)}) but has no value: it takes ${fmt(e.sink_share, d)} of this query’s attention, so its weights sum to ${fmt(1 - e.sink_share, d)}.</p>`;
      }
      break;
    }
    case 'weighted_sum': {
      const feature = columns ? row : col;
      html += `<p>The weights of <span class="lbl">${escapeHtml(q)}</span> times feature ${feature + 1} of each value, summed:</p>`;
      html += eq(aligned(`O_{\\text{${escapeTexText(q)}},${feature + 1}}`, `\\textstyle\\sum_j A_{\\text{${escapeTexText(q)}},j}\\, V_{j,${feature + 1}}`, sumTerms(left, right, d), tex(value, d)));
      html += termTable('Weighted values', ['key', 'weight', 'value', 'weight × value'],
        left.map((x, j) => [escapeHtml(where.keyLabels[j] ?? String(j + 1)), fmt(x, d), fmt(right[j], d), fmt(products[j], d)]));
      break;
    }
    case 'concat': {
      const { source_head: sh, source_col: sc } = e;
      html += `<p>Copied from <strong>head ${sh + 1}</strong>, feature ${sc + 1} of its output: the heads sit side by side.</p>`;
      break;
    }
    default:
      html += `<p>${escapeHtml(kind ?? '')}</p>`;
  }
  return html;
}

const COMPONENT_WORDS = { causal: 'causal masking (the key comes after the query)', window: 'the window (the key is too far from the query)', mask: 'your mask' };

/** "Hidden by the window and your mask." */
function hiddenBy(e) {
  const names = (e.components ?? []).map((c) => COMPONENT_WORDS[c] ?? c);
  return names.length ? `Hidden from this query by ${names.join(' and ')}.` : 'Hidden from this query.';
}

const keptBySink = (e) => (e.kept_by_sink ? ' The window alone would hide it, but it is a sink token: it stays visible.' : '');

function escapeTexText(s) {
  return String(s).replace(/\\/g, '').replace(/[{}$&#^_%~]/g, (c) => `\\${c}`).slice(0, 24);
}
