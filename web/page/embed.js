// The page inside an iframe: ?embed=1 drops the site chrome, ?hide= hides panels, inputs or steps,
// ?lock= makes inputs, the options or everything read-only. These flags belong to the address,
// not to the state: a link made from an embedded page shows everything (link.js drops them).
// ?present opens the presenter view (stepper.js): one step per screen, large type, keyboard driven.
// ?lesson=URL opens a lesson file (lesson-file.js) when the address has no state of its own.
// A word the page does not know gets a visible message. Inside any frame the page posts its height
// to the parent on every change (postHeight), so a host can size the iframe to its content.
// The words and values each flag takes are the package's embedFlagsSchema (formats.js,
// docs/formats.md): each word is checked against it, and one it does not take is named.
import { INPUT_NAMES as INPUTS, STEP_IDS as STEPS, check, embedFlagsSchema } from 'attention-explorer/share';
import { html, setHtml } from 'attention-explorer/html';
import { $ } from './app.js';
import { postHeight } from './frame-resize.js';
import { t } from './language.js';

const INPUT_NAMES = new Set(INPUTS);
const STEP_IDS = new Set(STEPS);
/** ?hide= words that hide a whole panel (embedFlagsSchema's HIDE_PANELS), and the panel's id. */
export const PANELS = { setup: 'setup', inputs: 'inputs', why: 'why', drill: 'drill', share: 'share', options: 'setup', lesson: 'lesson' };
// `input:Q` and `step:Q` name only the input or only the step; a plain `Q` hides both.
const INPUT_PREFIX = 'input:';
const STEP_PREFIX = 'step:';
const hiddenInput = (w) => (w.startsWith(INPUT_PREFIX) ? w.slice(INPUT_PREFIX.length) : w);
const hiddenStep = (w) => (w.startsWith(STEP_PREFIX) ? w.slice(STEP_PREFIX.length) : w);
const isHiddenInput = (w) => !w.startsWith(STEP_PREFIX) && INPUT_NAMES.has(hiddenInput(w));
const isHiddenStep = (w) => !w.startsWith(INPUT_PREFIX) && STEP_IDS.has(hiddenStep(w));

/**
 * The flags of this page's address: { embed, present, lesson, hide: [words], lock: Set,
 * hidePanels: Set, hideInputs: [names], hideSteps: [step ids], unknown: [messages] }. A word or
 * value the schema does not take is left out and named in `unknown`, as messages ({ id, values }):
 * the flags are read before the page's language is known. The schema's `expected` is English.
 */
export const flags = readFlags();

function readFlags() {
  const q = new URLSearchParams(location.search);
  const unknown = [];
  // What the page does instead: explorer.embed.fallback.<key>.
  const fallback = (key) => ({ id: `explorer.embed.fallback.${key}` });
  /** The parameter's value if the schema takes it, else null (and a message). */
  const value = (key) => {
    if (!q.has(key)) return null;
    const v = q.get(key);
    if (!check(embedFlagsSchema.fields[key], v).error) return v;
    const flag = `${key}=${v.length > 60 ? `${v.slice(0, 60)}…` : v}`;
    unknown.push({
      id: 'explorer.embed.bad-value',
      values: { flag, expected: embedFlagsSchema.fields[key].expected, fallback: fallback(key) },
    });
    return null;
  };
  /** The words of a list parameter the schema takes; the others are named in one message. */
  const words = (key) => {
    const all = (q.get(key) ?? '').split(/[\s,]+/).filter(Boolean);
    const item = embedFlagsSchema.fields[key].item;
    const bad = all.filter((w) => check(item, w).error);
    if (bad.length)
      unknown.push({
        id: 'explorer.embed.bad-words',
        values: { flag: `${key}=${bad.join(',')}`, expected: item.expected, fallback: fallback(key) },
      });
    return all.filter((w) => !bad.includes(w));
  };
  const embed = value('embed');
  const hide = words('hide');
  return {
    embed: embed === '1' || embed === 'true',
    present: q.has('present'),
    lesson: value('lesson') || null,
    hide,
    lock: new Set(words('lock')),
    hidePanels: new Set(hide.filter((w) => w in PANELS).map((w) => PANELS[w])),
    hideInputs: hide.filter(isHiddenInput).map(hiddenInput),
    hideSteps: hide.filter(isHiddenStep).map(hiddenStep),
    unknown,
  };
}

/** Puts ?embed/hide into a state (called for every state the page takes). */
export function applyFlags(state) {
  if (flags.embed) state.hide.chrome = true;
  const inputs = flags.hideInputs;
  const steps = flags.hideSteps;
  if (inputs.length) state.hide.inputs = [...new Set([...(state.hide.inputs ?? []), ...inputs])];
  if (steps.length) state.hide.steps = [...new Set([...(state.hide.steps ?? []), ...steps])];
  return state;
}

/** Hides the panels and makes the locked parts inert (after every redraw: editors come and go). */
export function applyLocks() {
  const lockAll = flags.lock.has('all');
  $('setup').inert = lockAll || flags.lock.has('options');
  $('setup').classList.toggle('locked', $('setup').inert);
  $('inputs').inert = lockAll || flags.lock.has('inputs');
  $('inputs').classList.toggle('locked', $('inputs').inert);
  for (const ed of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('#editors .editor[data-input]'))) {
    const locked = flags.lock.has(ed.dataset.input);
    ed.inert = locked;
    ed.classList.toggle('locked', locked);
  }
  for (const [name, id] of Object.entries(PANELS)) if (flags.hidePanels.has(id) || flags.hide.includes(name)) $(id).hidden = true;
  document.body.classList.toggle('embed', flags.embed);
}

/** Embedded: the share panel gives way to a link to the full explorer (its href: setOpenFull). */
export function installEmbed() {
  showUnknownFlags();
  if (window.parent !== window) postHeight();
  if (!flags.embed) return;
  $('share').hidden = true;
  const open = document.createElement('p');
  open.className = 'embed-open';
  setHtml(open, html`<a id="open-full" target="_blank" rel="noopener">${t('explorer.embed.open-full')}</a>`);
  document.querySelector('.status-bar')?.prepend(open);
}

/** Points "Open in the attention explorer" at the page without flags, holding `hash`. */
export function setOpenFull(hash) {
  const open = /** @type {HTMLAnchorElement} */ ($('open-full'));
  if (!open) return;
  const url = new URL(location.href);
  url.search = '';
  url.hash = hash;
  open.href = url.href;
}

/** The words of this address the page did not understand, in a box at the top of the page. */
function showUnknownFlags() {
  if (!flags.unknown.length) return;
  const box = document.createElement('div');
  box.id = 'flag-error';
  box.className = 'link-error';
  box.setAttribute('role', 'alert');
  setHtml(box, html`<p></p><button type="button">${t('explorer.share.dismiss')}</button>`);
  box.querySelector('p').textContent = t('explorer.embed.unknown', { flags: flags.unknown.map((m) => t.message(m)).join(' ') });
  box.querySelector('button').addEventListener('click', () => box.remove());
  $('app').prepend(box);
}
