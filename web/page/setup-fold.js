// The problem panel folds away: beside the steps on a wide screen (a narrow strip when folded),
// below them on a phone (folded until opened). Folded or not is remembered for this browser tab
// (sessionStorage), not put in the link: it is the reader's layout, not the problem.
import { $ } from './app.js';
import { PANEL_KEY as KEY, PHONE } from './layout.js';

const phone = () => window.matchMedia(PHONE).matches;

function remembered() {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null; // storage blocked (a sandboxed frame): the default for the screen
  }
}

/** Opens or folds the problem panel; `remember` keeps the choice for this tab. */
export function setSetupOpen(open, remember = true) {
  $('setup-fold').setAttribute('aria-expanded', String(open));
  $('setup-body').hidden = !open;
  $('desk').classList.toggle('setup-folded', !open);
  if (!remember) return;
  try {
    sessionStorage.setItem(KEY, open ? 'open' : 'folded');
  } catch { /* not remembered */ }
}

export function bindSetupFold() {
  const kept = remembered();
  setSetupOpen(kept ? kept === 'open' : !phone(), false);
  $('setup-fold').addEventListener('click', () => setSetupOpen($('setup-fold').getAttribute('aria-expanded') !== 'true'));
}
