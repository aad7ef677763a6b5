// Numbers as the page shows them (and as text the parser reads back): presentation only.
import { formatNumber, matrixToText, texNumber } from 'attention-explorer';

// The package's number formats, with 0 written out ("0.0000") so table columns line up.
export const fmt = (x, decimals = 4) => formatNumber(x, decimals, { fixedZero: true });
/** A number in a step's table: one that rounds to 0 at `decimals` (floating-point noise) as 0.0000. */
export const cellFmt = (x, decimals = 4) => formatNumber(x, decimals, { fixedZero: true, tinyAsZero: true });
/** A number inside KaTeX source. */
export const tex = (x, decimals = 4) => texNumber(x, decimals, { fixedZero: true });
export { matrixToText };

// The parser's format names (engine.parseMatrixDetailed, cpp/parse.h) that read without an
// article: "read as CSV", but "read as a PyTorch tensor", "read as an R matrix".
const NO_ARTICLE = /^(CSV|TSV|NumPy print output|Octave\/MATLAB output|semicolon-separated values|whitespace-separated rows)\b/;

/** What a text box was read as: "read as a PyTorch tensor, 4 × 8". */
export function readAs(format, matrix) {
  const article = NO_ARTICLE.test(format) ? '' : /^[AEIOR]/.test(format) ? 'an ' : 'a ';
  return `read as ${article}${format}, ${matrix.length} × ${matrix[0]?.length ?? 0}`;
}

/**
 * A token's name as a sentence writes it: quoted when it reads as a word (“the”, “sweet?”), bare
 * otherwise (w1, input_2). The same rule as the package's narration (web/lib/narrate.js quoteToken,
 * not a package export), so the page's own sentences match the narrated ones.
 */
export function quoteToken(name) {
  const s = String(name);
  return /\p{L}/u.test(s) && !/[\p{N}_]/u.test(s) ? `“${s}”` : s;
}
