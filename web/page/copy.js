// Copying numbers from the page: its tables print a typographic minus (−0.1383) and ∞, which
// Python does not read; the clipboard gets ASCII (-0.1383, inf), so a copied row or table pastes
// into Python, a text box or a grid (cells come out tab-separated, rows on lines).

/** `text` with the page's typographic signs as the parser and Python write them. */
export function asciiNumbers(text) {
  return text.replace(/\u2212/g, '-').replace(/∞/g, 'inf');
}

/** Rewrites every copy of page text (not of a text field, whose text is the user's own). */
export function installCopy() {
  document.addEventListener('copy', (e) => {
    if (document.activeElement?.matches?.('input, textarea')) return;
    const text = String(document.getSelection() ?? '');
    if (!text || asciiNumbers(text) === text) return;
    e.clipboardData.setData('text/plain', asciiNumbers(text));
    e.preventDefault();
  });
}
