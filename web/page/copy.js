// Copying numbers from the page: its tables print a typographic minus (−0.1383) and ∞, which
// Python does not read, and label their rows. The clipboard gets ASCII (-0.1383, inf); a
// selection inside a table gets its selected numbers only (no row or column labels), tab-separated
// with rows on lines, so it pastes into Python, a text box or a grid as the same matrix.

/** `text` with the page's typographic signs as the parser and Python write them. */
export function asciiNumbers(text) {
  return text.replace(/\u2212/g, '-').replace(/∞/g, 'inf');
}

/** The selected cells (td) of the table the selection lies in, as rows of tab-separated text. */
function selectedCells(selection, table) {
  const rows = [];
  for (const tr of table.rows) {
    const cells = [...tr.cells].filter((c) => c.tagName === 'TD' && selection.containsNode(c, true));
    if (cells.length) rows.push(cells.map((c) => c.textContent.trim()).join('\t'));
  }
  return rows.join('\n');
}

/** Rewrites every copy of page text (not of a text field, whose text is the user's own). */
export function installCopy() {
  document.addEventListener('copy', (e) => {
    if (e.target instanceof Element && /** @type {HTMLElement} */ (e.target).closest('input, textarea')) return;
    const selection = document.getSelection();
    if (!selection || selection.isCollapsed) return;
    const within = selection.getRangeAt(0).commonAncestorContainer;
    const table = (within.nodeType === Node.ELEMENT_NODE ? /** @type {Element} */ (within) : within.parentElement)?.closest('table');
    const text = table ? selectedCells(selection, table) || String(selection) : String(selection);
    e.clipboardData.setData('text/plain', asciiNumbers(text));
    e.preventDefault();
  });
}
