// The reader's layout, as two rules the page and its prerendered first screen must agree on: the
// problem panel folds on a phone (setup-fold.js), and a folded or opened panel is remembered for
// the tab. scripts/build-site.mjs writes these same values into first-screen.js (a classic
// script, which cannot import a module), so each rule is said here only.
/** The screens the problem panel starts folded on (below the steps). */
export const PHONE = '(max-width: 640px)';
/** sessionStorage key: 'open' or 'folded', the reader's last choice in this tab. */
export const PANEL_KEY = 'attention-explorer:problem-panel';
