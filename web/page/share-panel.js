// The "Share, embed, export" panel: copy the link or an iframe snippet, export the solution or a
// step, set an exercise. Also runs, after every redraw, what the share, embed and exercise parts
// keep up to date.
import { $, app } from './app.js';
import { findPreset } from 'attention-explorer';
import { writeLink, takeLinkError } from './link.js';
import { applyLocks, installEmbed, setOpenFull } from './embed.js';
import { FORMATS, fillExportSelect, onExport } from './export-panel.js';
import { fillExerciseSteps, installExercise, newProblem, renderExercise, startExercise } from './exercise.js';
import { escapeHtml } from './format.js';

async function copy(text, what) {
  const status = $('share-status');
  $('export-preview').value = text;
  $('export-preview').hidden = false;
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = `${what} copied to the clipboard.`;
  } catch {
    $('export-preview').select();
    status.textContent = `${what} is in the box below: copy it from there (the clipboard is not available here).`;
  }
}

/** An <iframe> snippet of this page with ?embed=1 and the chosen hide/lock words. */
async function embedCode(options = {}) {
  const state = app.state;
  const url = new URL(location.href);
  url.search = '';
  const q = new URLSearchParams();
  q.set('embed', '1');
  if (options.hide?.length) q.set('hide', options.hide.join(','));
  if (options.lock?.length) q.set('lock', options.lock.join(','));
  url.search = q.toString().replace(/%2C/g, ',');
  url.hash = await writeLink(state);
  const title = state.preset ? findPreset(state.preset)?.title ?? 'Attention explorer' : 'Attention explorer';
  return `<iframe src="${escapeHtml(url.href)}" title="${escapeHtml(title)}" width="100%" height="720" style="border:1px solid #d5d9e0;border-radius:6px" loading="lazy"></iframe>`;
}

function buildPanel() {
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = new URL('share.css', import.meta.url).href;
  document.head.appendChild(link);

  const share = document.createElement('section');
  share.id = 'share';
  share.className = 'panel share';
  share.setAttribute('aria-labelledby', 'share-title');
  share.innerHTML = `
    <h2 id="share-title">Share, embed, export</h2>
    <div class="share-row">
      <button type="button" id="copy-link">Copy link</button>
      <button type="button" id="copy-embed">Copy embed code</button>
      <details class="embed-options"><summary>Embed options</summary>
        <p class="hint">Inputs or steps to hide, and inputs to lock (readers see them but cannot change them), for the embedded copy.</p>
        <label>Hide <input type="text" id="embed-hide" placeholder="e.g. W_Q,W_K,scores,why" spellcheck="false" autocomplete="off"></label>
        <label>Lock <input type="text" id="embed-lock" placeholder="e.g. inputs, options, all, X" spellcheck="false" autocomplete="off"></label>
      </details>
      <a href="embedding.html">Embedding examples</a>
    </div>
    <div class="share-row export-row">
      <label for="export-what">Export</label>
      <select id="export-what"><option value="all">the whole solution</option></select>
      <span role="group" aria-label="Export formats" class="formats">
        ${FORMATS.map(([f, label]) => `<button type="button" data-export="${f}">${label}</button>`).join('')}
      </span>
    </div>
    <details class="exercise-setup" id="exercise-setup"><summary>Set an exercise</summary>
      <p class="hint">Students type the numbers of the steps you choose; the page checks them. The link you share holds the problem and which numbers are hidden, not the answers.</p>
      <fieldset><legend>Steps the students compute</legend><div id="ex-steps" class="ex-steps"></div></fieldset>
      <div class="share-row">
        <label>Only <input type="number" id="ex-cells" min="0" step="1" size="4" placeholder="all"> numbers per step</label>
        <label>Tolerance ± <input type="number" id="ex-tol" min="0" step="any" value="0.01" size="6"></label>
      </div>
      <div class="share-row">
        <label>Seed <input type="number" id="ex-seed" min="0" step="1" value="1" size="8"></label>
        <label>Numbers <select id="ex-kind"><option value="round1">one decimal (np.round(randn, 1))</option><option value="int">small integers (−2 … 2)</option><option value="randn">np.random.randn</option></select></label>
        <button type="button" id="ex-new">New problem from this seed</button>
        <button type="button" id="ex-start">Start the exercise</button>
      </div>
    </details>
    <textarea id="export-preview" class="export-preview" rows="10" readonly aria-label="Export preview" hidden></textarea>
    <p id="share-status" class="share-status" role="status" aria-live="polite"></p>`;
  ($('why') ?? $('results')).after(share);

  share.addEventListener('click', async (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    if (b.dataset.export) { await onExport(b.dataset.export); return; }
    switch (b.id) {
      case 'copy-link': {
        const url = new URL(location.href);
        url.hash = await writeLink(app.state);
        await copy(url.href, 'The link');
        break;
      }
      case 'copy-embed': {
        const words = (id) => $(id).value.split(/[\s,]+/).filter(Boolean);
        await copy(await embedCode({ hide: words('embed-hide'), lock: words('embed-lock') }), 'The embed code');
        break;
      }
      case 'ex-new': newProblem(Math.max(0, Math.round(Number($('ex-seed').value) || 0)), $('ex-kind').value); break;
      case 'ex-start': startExercise(); break;
      default: break;
    }
  });
}

/** Called once, after the engine loaded: the exercise and share panels (or, embedded, a link out). */
export function installShare() {
  installExercise();
  buildPanel();
  installEmbed();
}

function showLinkError() {
  const error = takeLinkError();
  if (!error) return;
  $('link-error')?.remove();
  const box = document.createElement('div');
  box.id = 'link-error';
  box.className = 'link-error';
  box.setAttribute('role', 'alert');
  box.innerHTML = `<p>${escapeHtml(error)}</p><button type="button">Dismiss</button>`;
  box.querySelector('button').addEventListener('click', () => box.remove());
  $('app').prepend(box);
}

/** Called after each redraw of the steps. */
export function afterRender() {
  if (!$('share')) return;
  showLinkError();
  applyLocks();
  fillExportSelect();
  fillExerciseSteps();
  renderExercise();
  if ($('open-full')) writeLink(app.state).then(setOpenFull);
}
