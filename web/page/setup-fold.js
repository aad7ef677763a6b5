// The problem panel folds away: beside the steps on a wide screen (a narrow strip when folded),
// below them on a phone (folded until opened). Folded or not is remembered for this browser tab
// (sessionStorage), not put in the link: it is the reader's layout, not the problem.
import { $ } from './app.js';
import { PANEL_KEY as KEY, PHONE, showSetup, startsFolded } from './layout.js';

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
  showSetup(document, open);
  if (!remember) return;
  try {
    sessionStorage.setItem(KEY, open ? 'open' : 'folded');
  } catch {
    /* not remembered */
  }
}

export function bindSetupFold() {
  setSetupOpen(!startsFolded(remembered(), phone()), false);
  $('setup-fold').addEventListener('click', () => setSetupOpen($('setup-fold').getAttribute('aria-expanded') !== 'true'));
}
