// The page inside an iframe: ?embed=1 drops the site chrome, ?hide= hides panels, inputs or steps,
// ?lock= makes inputs, the options or everything read-only. These flags belong to the address,
// not to the state: a link made from an embedded page shows everything (link.js drops them).
// ?present opens the presenter view (stepper.js): one step per screen, large type, keyboard driven.
import { $ } from './app.js';

const INPUT_NAMES = new Set(['Q', 'K', 'V', 'X', 'X_kv', 'W_Q', 'W_K', 'W_V', 'W_O', 'b_Q', 'b_K', 'b_V', 'b_O', 'P', 'past_K', 'past_V']);
const STEP_IDS = new Set(['positional', 'X_pos', 'Q', 'K', 'V', 'Q_rot', 'K_rot', 'K_cache', 'V_cache', 'scores', 'scaled',
  'softcapped', 'alibi', 'biased', 'mask', 'masked', 'weights', 'head_output', 'concat', 'output']);
/** ?hide= words that hide a whole panel, and the panel's id. */
const PANELS = { setup: 'setup', inputs: 'inputs', why: 'why', drill: 'drill', share: 'share', options: 'setup', lesson: 'lesson' };

/** The flags of this page's address: { embed, hide: [words], lock: Set, hidePanels: Set }. */
export const flags = readFlags();

function readFlags() {
  const q = new URLSearchParams(location.search);
  const words = (key) => (q.get(key) ?? '').split(/[\s,]+/).filter(Boolean);
  const hide = words('hide');
  return {
    embed: q.get('embed') === '1' || q.get('embed') === 'true',
    present: q.has('present'),
    hide,
    lock: new Set(words('lock')),
    hidePanels: new Set(hide.filter((w) => w in PANELS).map((w) => PANELS[w])),
  };
}

/** Puts ?embed/hide into a state (called for every state the page takes). */
export function applyFlags(state) {
  if (flags.embed) state.hide.chrome = true;
  const inputs = flags.hide.filter((w) => INPUT_NAMES.has(w));
  const steps = flags.hide.filter((w) => STEP_IDS.has(w));
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
  for (const ed of document.querySelectorAll('#editors .editor[data-input]')) {
    const locked = flags.lock.has(ed.dataset.input);
    ed.inert = locked;
    ed.classList.toggle('locked', locked);
  }
  for (const [name, id] of Object.entries(PANELS)) if (flags.hidePanels.has(id) || flags.hide.includes(name)) $(id).hidden = true;
  document.body.classList.toggle('embed', flags.embed);
}

/** Embedded: the share panel gives way to a link to the full explorer (its href: setOpenFull). */
export function installEmbed() {
  if (!flags.embed) return;
  $('share').hidden = true;
  const open = document.createElement('p');
  open.className = 'embed-open';
  open.innerHTML = '<a id="open-full" target="_blank" rel="noopener">Open in the attention explorer ↗</a>';
  document.querySelector('.status-bar')?.prepend(open);
}

/** Points "Open in the attention explorer" at the page without flags, holding `hash`. */
export function setOpenFull(hash) {
  const open = $('open-full');
  if (!open) return;
  const url = new URL(location.href);
  url.search = '';
  url.hash = hash;
  open.href = url.href;
}
