// The reader's layout, as rules the page and its prerendered first screen must agree on: the
// problem panel folds on a phone (setup-fold.js), a folded or opened panel is remembered for the
// tab, and what folding does to the markup. scripts/build-site.mjs writes these same values and
// functions into first-screen.js (a classic script, which cannot import a module), so each rule is
// said here only; the functions are therefore written in the syntax a classic script accepts.
/** The screens the problem panel starts folded on (below the steps). */
export const PHONE = '(max-width: 640px)';
/** sessionStorage key: 'open' or 'folded', the reader's last choice in this tab. */
export const PANEL_KEY = 'attention-explorer:problem-panel';

/** Whether the problem panel starts folded: as the reader left it in this tab (`remembered`), else on a phone. */
export function startsFolded(remembered, phone) {
  return remembered === 'open' || remembered === 'folded' ? remembered === 'folded' : phone;
}

/** Opens or folds the problem panel in `doc`'s markup (the live page's, or the first screen's snapshot). */
export function showSetup(doc, open) {
  doc.getElementById('setup-fold').setAttribute('aria-expanded', String(open));
  doc.getElementById('setup-body').hidden = !open;
  doc.getElementById('desk').classList.toggle('setup-folded', !open);
}
