// Numbers as the page shows them (and as text the parser reads back): presentation only.
import { formatNumber, matrixToText, texNumber } from 'attention-explorer';

// The package's number formats, with 0 written out ("0.0000") so table columns line up.
export const fmt = (x, decimals = 4) => formatNumber(x, decimals, { fixedZero: true });
/** A number inside KaTeX source. */
export const tex = (x, decimals = 4) => texNumber(x, decimals, { fixedZero: true });
export { matrixToText };

export function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}
