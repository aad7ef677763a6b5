// The "Share, embed, export" panel: copy the link or an iframe snippet, export the solution or a
// step, set an exercise. Also runs, after every redraw, what the share, embed and exercise parts
// keep up to date.
import { $, app, whenIdle } from './app.js';
import { writeLink, takeLinkError } from './link.js';
import { applyLocks, installEmbed, setOpenFull } from './embed.js';
import { embedSnippet, installEmbedBuilder, refreshEmbedBuilder } from './embed-builder.js';
import { FORMATS, fillExportSelect, onExport } from './export-panel.js';
import { fillExerciseSteps, installExercise, newProblem, renderExercise, startExercise, studentLink } from './exercise.js';
import { html, setHtml } from 'attention-explorer/html';
import { resultParts, store } from './store.js';
import { t } from './language.js';

/** `text` on the clipboard; `what` (link, students, embed) names it in the message. */
async function copy(text, what) {
  const status = $('share-status');
  $('export-preview').value = text;
  $('export-preview').hidden = false;
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = t('explorer.share.copied', { what });
  } catch {
    $('export-preview').select();
    status.textContent = t('explorer.share.copyHere', { what });
  }
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
  setHtml(
    share,
    html`
    <h2 id="share-title">${t('explorer.share.title')}</h2>
    <div class="share-row">
      <button type="button" id="copy-link">${t('explorer.share.copy-link')}</button>
      <button type="button" id="copy-teacher-link" hidden>${t('explorer.share.copy-teacher-link')}</button>
      <button type="button" id="copy-embed">${t('explorer.share.copy-embed')}</button>
      <details class="embed-options" id="embed-options"><summary>${t('explorer.embed.options')}</summary></details>
      <a href="embedding.html">${t('explorer.embed.examples')}</a>
    </div>
    <div class="share-row export-row">
      <label for="export-what">${t('explorer.export.label')}</label>
      <select id="export-what"><option value="all">${t('explorer.export.all')}</option></select>
      <span role="group" aria-label="${t('explorer.export.formats')}" class="formats">
        ${FORMATS.map((f) => html`<button type="button" data-export="${f}">${t(`explorer.export.format.${f}`)}</button>`)}
      </span>
    </div>
    <details class="exercise-setup" id="exercise-setup"><summary>${t('explorer.share.exercise')}</summary>
      <p class="hint">${t('explorer.share.exercise.hint')}</p>
      <fieldset><legend>${t('explorer.share.exercise.steps')}</legend><div id="ex-steps" class="ex-steps"></div></fieldset>
      <div class="share-row">
        <label>${t('explorer.share.exercise.cells', { field: html`<input type="number" id="ex-cells" min="0" step="1" size="4" placeholder="${t('explorer.share.exercise.cells.all')}">` })}</label>
        <label>${t('explorer.share.exercise.tolerance', { field: html`<input type="number" id="ex-tol" min="0" step="any" value="0.01" size="6">` })}</label>
      </div>
      <div class="share-row">
        <label>${t('explorer.share.exercise.seed', { field: html`<input type="number" id="ex-seed" min="0" step="1" value="1" size="8">` })}</label>
        <label>${t('explorer.share.exercise.numbers', {
          field: html`<select id="ex-kind">${['round1', 'int', 'randn'].map(
            (kind) => html`<option value="${kind}">${t(`explorer.share.exercise.kind.${kind}`)}</option>`,
          )}</select>`,
        })}</label>
        <button type="button" id="ex-new">${t('explorer.share.exercise.new')}</button>
        <button type="button" id="ex-start">${t('explorer.share.exercise.start')}</button>
      </div>
    </details>
    <textarea id="export-preview" class="export-preview" rows="10" readonly aria-label="${t('explorer.export.preview')}" hidden></textarea>
    <p id="share-status" class="share-status" role="status" aria-live="polite"></p>`,
  );
  ($('why') ?? $('results')).after(share);
  installEmbedBuilder($('embed-options'));

  share.addEventListener('click', async (e) => {
    const b = /** @type {HTMLElement} */ (e.target).closest('button');
    if (!b) return;
    if (b.dataset.export) {
      await onExport(b.dataset.export);
      return;
    }
    switch (b.id) {
      case 'copy-link':
        // During an exercise, the link to hand out is the students' (the teacher's holds the answers).
        if (app.state.exercise) {
          await copy(await studentLink(), 'students');
          break;
        }
      // falls through
      case 'copy-teacher-link': {
        const url = new URL(location.href);
        url.hash = await writeLink(app.state);
        await copy(url.href, 'link');
        break;
      }
      case 'copy-embed':
        await copy(await embedSnippet(), 'embed');
        break;
      case 'ex-new':
        newProblem(Math.max(0, Math.round(Number($('ex-seed').value) || 0)), $('ex-kind').value);
        break;
      case 'ex-start':
        startExercise();
        break;
      default:
        break;
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
  setHtml(box, html`<p>${error}</p><button type="button">${t('explorer.share.dismiss')}</button>`);
  box.querySelector('button').addEventListener('click', () => box.remove());
  $('app').prepend(box);
}

let pending = false;
/** The share panel's lists and the embed code, which nobody reads while typing: after the frame. */
function refreshSharePanel() {
  pending = false;
  fillExportSelect();
  fillExerciseSteps();
  refreshEmbedBuilder();
  if ($('open-full')) writeLink(app.state).then(setOpenFull);
}

/**
 * Called after each redraw of the steps. What the page shows (a link's error, the locks, the
 * exercise's hidden numbers) now; the share panel's export list, exercise steps, embed code and
 * "open full" link once the frame is painted (issue 18: they were a quarter of an edit's update).
 */
export function afterRender() {
  if (!$('share')) return;
  showLinkError();
  applyLocks();
  renderExercise();
  const exercise = Boolean(app.state.exercise);
  const label = t(exercise ? 'explorer.share.copy-students-link' : 'explorer.share.copy-link');
  if ($('copy-link').textContent !== label) $('copy-link').textContent = label;
  $('copy-teacher-link').hidden = !exercise;
  if (pending) return;
  pending = true;
  whenIdle(refreshSharePanel, 250);
}

/** The share panel (its exercise, locks, link) follows the results, after the open cell. */
export function mountSharePanel() {
  store.subscribe(resultParts, ([result]) => {
    if (result) afterRender();
  });
}
