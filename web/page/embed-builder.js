// The embed builder in the share panel: checkboxes for what to hide and lock (the page's own
// panels, the current inputs and steps), the frame's size, a live preview at that size and the
// <iframe> snippet. The snippet uses only the attributes learning platforms keep (Canvas keeps
// src, width, height, name, align, frameborder, scrolling, sandbox, allowfullscreen: no style,
// no data-*, no script), so the whole problem travels in the src.
import { $, app, writeHtml } from './app.js';
import { writeLink } from './link.js';
import { escapeHtml, html } from 'attention-explorer/html';
import { t } from './language.js';

/** Panels a reader may be spared, by their ?hide= word, named as the page heads them. */
const PANEL_CHOICES = [
  ['lesson', 'lesson-title'],
  ['setup', 'setup-title'],
  ['inputs', 'inputs-title'],
  ['drill', 'drill-title'],
  ['why', 'why-title'],
];
/** ?lock= words besides input names; each is named by its message `explorer.embed.lock.<word>`. */
const LOCK_CHOICES = ['options', 'inputs', 'all'];
/** The width menu's sizes in px, after the page's width (100%). */
const WIDTHS = [800, 640, 480];

const DEFAULT_HEIGHT = 720;
let previewTimer = 0;

/** Fills `details` (an empty <details> of the share panel) with the builder. */
export function installEmbedBuilder(details) {
  details.insertAdjacentHTML(
    'beforeend',
    String(html`
    <p class="hint">${t('explorer.embed.hint')}</p>
    <div class="embed-builder">
      <fieldset><legend>${t('explorer.embed.hide')}</legend><div id="embed-hide" class="embed-choices"></div></fieldset>
      <fieldset><legend>${t('explorer.embed.lock')}</legend><div id="embed-lock" class="embed-choices"></div></fieldset>
      <fieldset><legend>${t('explorer.embed.size')}</legend>
        <label>${t('explorer.embed.width', {
          field: html`<select id="embed-width"><option value="100%">${t('explorer.embed.width.page')}</option>${WIDTHS.map(
            (w) => html`<option value="${w}">${t('explorer.embed.px', { n: w })}</option>`,
          )}</select>`,
        })}</label>
        <label>${t('explorer.embed.height', {
          field: html`<input type="number" id="embed-height" min="200" max="4000" step="10" value="${DEFAULT_HEIGHT}" size="6">`,
        })}</label>
        <p class="hint">${t('explorer.embed.resize')}</p>
      </fieldset>
    </div>
    <label for="embed-snippet">${t('explorer.embed.code')}</label>
    <textarea id="embed-snippet" class="export-preview" rows="4" readonly></textarea>
    <p><button type="button" id="embed-preview-toggle" aria-expanded="false">${t('explorer.embed.preview.show')}</button></p>
    <div id="embed-preview-box" class="embed-preview" hidden></div>`),
  );
  details.addEventListener('change', () => refreshEmbedBuilder());
  details.addEventListener('input', (e) => {
    if (/** @type {HTMLElement} */ (e.target).id === 'embed-height') refreshEmbedBuilder();
  });
  $('embed-preview-toggle').addEventListener('click', () => {
    const box = $('embed-preview-box');
    box.hidden = !box.hidden;
    // The frame exists only while shown: a hidden preview would still load a whole explorer.
    if (box.hidden) box.replaceChildren();
    else {
      const frame = document.createElement('iframe');
      frame.id = 'embed-preview';
      frame.title = t('explorer.embed.preview.title');
      box.append(frame);
    }
    $('embed-preview-toggle').setAttribute('aria-expanded', String(!box.hidden));
    $('embed-preview-toggle').textContent = t(box.hidden ? 'explorer.embed.preview.show' : 'explorer.embed.preview.hide');
    refreshEmbedBuilder();
  });
}

const checked = (id) => [...document.querySelectorAll(`#${id} input:checked`)].map((c) => c.value);

function choicesHtml(group, choices, keep) {
  return html`${choices.map(
    ([word, label]) => html`<label><input type="checkbox" name="${group}" value="${word}"${keep.has(word) && ' checked'}> ${label}</label>`,
  )}`;
}

/** The checkboxes for what the page shows now (inputs and steps change with the problem). */
function fillChoices() {
  const keepHide = new Set(checked('embed-hide'));
  const keepLock = new Set(checked('embed-lock'));
  const heading = (id) => $(id)?.textContent.trim() ?? id;
  const inputs = [...new Set([...document.querySelectorAll('#editors .editor[data-input]')].map((e) => e.dataset.input))];
  const steps = new Map();
  // A step once, named by its caption without a head (the catalogue's words for its title_id).
  for (const step of app.result?.trace.steps ?? []) if (!steps.has(step.id)) steps.set(step.id, t(step.title_id));
  const input = (name) => t('explorer.embed.input', { name });
  const hide = [
    ...PANEL_CHOICES.map(([word, title]) => [word, t('explorer.embed.panel', { title: heading(title) })]),
    ...inputs.map((n) => [`input:${n}`, input(n)]),
    ...[...steps].map(([id, title]) => [`step:${id}`, t('explorer.embed.step', { title })]),
  ];
  const lock = [...LOCK_CHOICES.map((word) => [word, t(`explorer.embed.lock.${word}`)]), ...inputs.map((n) => [n, input(n)])];
  writeHtml($('embed-hide'), choicesHtml('hide', hide, keepHide));
  writeHtml($('embed-lock'), choicesHtml('lock', lock, keepLock));
}

/** The chosen size: { width: "100%" | "800", height: "720" }. */
function size() {
  const h = Math.round(Number($('embed-height').value));
  return { width: $('embed-width').value, height: String(Number.isFinite(h) && h >= 200 ? Math.min(h, 4000) : DEFAULT_HEIGHT) };
}

/** The embedded page's address for the current state and the chosen words. */
async function embedUrl() {
  const url = new URL(location.href);
  const q = new URLSearchParams();
  q.set('embed', '1');
  const hide = checked('embed-hide');
  const lock = checked('embed-lock');
  if (hide.length) q.set('hide', hide.join(','));
  if (lock.length) q.set('lock', lock.join(','));
  url.search = q.toString().replace(/%2C/g, ',').replace(/%3A/g, ':');
  url.hash = await writeLink(app.state);
  return url.href;
}

/** The <iframe> snippet: Canvas's attributes only, the problem in src. Text to copy, not markup for this page. */
export async function embedSnippet() {
  const { width, height } = size();
  return `<iframe src="${escapeHtml(await embedUrl())}" width="${width}" height="${height}" name="attention-explorer" frameborder="0" scrolling="auto" allowfullscreen></iframe>`;
}

/** Redraws the choices, the snippet and (if shown) the preview; after every redraw of the page. */
export function refreshEmbedBuilder() {
  if (!$('embed-hide')) return;
  if (!document.activeElement?.closest?.('#embed-hide, #embed-lock')) fillChoices();
  embedSnippet().then((snippet) => {
    if ($('embed-snippet').value !== snippet) $('embed-snippet').value = snippet;
  });
  if ($('embed-preview-box').hidden) return;
  // A new preview loads the whole explorer: wait until the choices settle.
  clearTimeout(previewTimer);
  previewTimer = setTimeout(async () => {
    const frame = $('embed-preview');
    const { width, height } = size();
    frame.style.width = width === '100%' ? '100%' : `${width}px`;
    frame.style.height = `${height}px`;
    const src = await embedUrl();
    if (frame.getAttribute('src') !== src) frame.setAttribute('src', src);
  }, 300);
}
