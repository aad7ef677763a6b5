// The "why √d_k" view: variance of the scores with and without scaling, and how saturated the
// softmax is (max weight and entropy per query), all read from engine traces (trace.facts).
import { fmt, escapeHtml } from './format.js';
import { mathHtml } from './math.js';
import { factsOf, metaOf } from './steps.js';

function bar(value, max, cls) {
  const pct = max > 0 && Number.isFinite(value) ? Math.max(0, Math.min(100, (100 * value) / max)) : 0;
  return `<span class="bar ${cls}" aria-hidden="true"><span style="width:${pct.toFixed(1)}%"></span></span>`;
}

/**
 * @param {HTMLElement} el
 * @param {object} o { scaled, unscaled: traces (same problem with 1/√d_k and with no scaling),
 *   sweep: [{ d_k, before, after, maxWeightUnscaled, maxWeightScaled }] | null, tokensQ, decimals, layout }
 */
export function renderWhy(el, o) {
  const d = o.decimals;
  if (!o.scaled || !o.unscaled) {
    el.innerHTML = '<p class="hint">Shown when the current problem computes.</p>';
    return;
  }
  const meta = metaOf(o.scaled);
  const fs = factsOf(o.scaled, 0);
  const fu = factsOf(o.unscaled, 0);
  const S = meta.keys;
  const columns = o.layout === 'columns';
  const intro = `<div class="why-intro">
    <p>Each score is a dot product of d<sub>k</sub> numbers. When the entries of q and k have variance about 1, the dot product's variance is about d<sub>k</sub>,
    so for large d<sub>k</sub> the scores spread far apart and the softmax puts almost all the weight on one key
    (and its gradients vanish). Dividing by √d<sub>k</sub> brings the variance back to about 1.</p>
    <div class="formula">${mathHtml('\\operatorname{Var}(q\\cdot k) = \\sum_{m=1}^{d_k} \\operatorname{Var}(q_m k_m) \\approx d_k \\quad\\Rightarrow\\quad \\operatorname{Var}\\!\\left(\\frac{q\\cdot k}{\\sqrt{d_k}}\\right) \\approx 1', true)}</div>
  </div>`;
  let html = `<div class="why-stats">
    <div class="stat"><span class="stat-label">variance of the scores QKᵀ</span><span class="stat-value" data-fact="scores_variance">${fmt(fs.scores_variance, d)}</span></div>
    <div class="stat"><span class="stat-label">after dividing by √d<sub>k</sub> = √${meta.d_k}</span><span class="stat-value" data-fact="scaled_variance">${fmt(fs.scaled_variance, d)}</span></div>
    <div class="stat"><span class="stat-label">d<sub>k</sub></span><span class="stat-value">${meta.d_k}</span></div>
  </div>`;
  html += `<p>How peaked is each query’s softmax${meta.heads > 1 ? ' (head 1)' : ''}? Max weight 1 and entropy 0 mean all attention on one key;
    a uniform spread over the ${S} keys has max weight 1/${S} and entropy ln ${S} = ${fmt(Math.log(S), 3)}.</p>`;
  html += `<div class="table-scroll"><table class="why-table"><caption class="visually-hidden">Max weight and entropy per query, without and with scaling</caption>
    <thead><tr><th scope="col">query ${columns ? 'column' : 'row'}</th><th scope="col">max weight, unscaled</th><th scope="col">max weight, ÷√d<sub>k</sub></th>
    <th scope="col">entropy, unscaled</th><th scope="col">entropy, ÷√d<sub>k</sub></th></tr></thead><tbody>`;
  const Hmax = Math.log(S);
  const n = Math.min(fs.max_weight.length, 64);
  for (let i = 0; i < n; i++) {
    html += `<tr><th scope="row">${escapeHtml(o.tokensQ[i] ?? `t${i + 1}`)}</th>
      <td>${bar(fu.max_weight[i], 1, 'u')}${fmt(fu.max_weight[i], d)}</td>
      <td>${bar(fs.max_weight[i], 1, 's')}${fmt(fs.max_weight[i], d)}</td>
      <td>${bar(fu.entropy[i], Hmax, 'u')}${fmt(fu.entropy[i], d)}</td>
      <td>${bar(fs.entropy[i], Hmax, 's')}${fmt(fs.entropy[i], d)}</td></tr>`;
  }
  if (fs.max_weight.length > n) html += `<tr><td colspan="5" class="hint">… ${fs.max_weight.length - n} more queries</td></tr>`;
  html += '</tbody></table></div>';
  let sweepHtml = '';
  if (o.sweep) {
    sweepHtml += `<h3>Random queries and keys (randn, ${o.sweep.tokens} tokens): the effect grows with d<sub>k</sub></h3>
      <div class="table-scroll"><table class="why-table sweep"><caption class="visually-hidden">Variance of the scores and the largest weight for growing d_k</caption>
      <thead><tr><th scope="col">d<sub>k</sub></th><th scope="col">variance of QKᵀ</th><th scope="col">variance ÷√d<sub>k</sub></th>
      <th scope="col">mean max weight, unscaled</th><th scope="col">mean max weight, ÷√d<sub>k</sub></th></tr></thead><tbody>`;
    const vmax = Math.max(...o.sweep.rows.map((r) => r.before));
    for (const r of o.sweep.rows) {
      sweepHtml += `<tr><th scope="row">${r.d_k}</th><td>${bar(r.before, vmax, 'u')}${fmt(r.before, 2)}</td><td>${bar(r.after, vmax, 's')}${fmt(r.after, 2)}</td>
        <td>${bar(r.maxUnscaled, 1, 'u')}${fmt(r.maxUnscaled, 3)}</td><td>${bar(r.maxScaled, 1, 's')}${fmt(r.maxScaled, 3)}</td></tr>`;
    }
    sweepHtml += `</tbody></table></div><p class="source">Computed by the engine from <code>${escapeHtml(o.sweep.numpy)}</code> for each d<sub>k</sub>.</p>`;
  }
  // Three parts, each replaced only when it changed: the formula and the sweep rarely do.
  if (!el.querySelector(':scope > .why-part')) el.innerHTML = '<div class="why-part"></div><div class="why-part"></div><div class="why-part"></div>';
  const parts = el.querySelectorAll(':scope > .why-part');
  [intro, html, sweepHtml].forEach((h, i) => { if (parts[i].whySource !== h) { parts[i].innerHTML = h; parts[i].whySource = h; } });
}
