// "Copy LaTeX" on each step card: the step as the page shows it (its formula, then its numbers at
// the page's decimals) put on the clipboard, with a confirmation next to the button.
import { stepLatex } from 'attention-explorer';
import { stepFormula } from 'attention-explorer/i18n';
import { app } from './app.js';
import { stepKey } from './steps.js';
import { t } from './language.js';

/** A step in LaTeX: its formula as the card shows it (in the page's language), then its matrix at `decimals` places. */
export function stepTex(step, decimals) {
  return `\\[ ${stepFormula(step, t).tex} \\]\n\\[ ${stepLatex(step, { decimals })} \\]\n`;
}

/** `text` on the clipboard: the Clipboard API, or a selected text field where it is refused. */
export async function toClipboard(text) {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch {
    /* not a secure context or no permission: copy from a field */
  }
  const field = document.createElement('textarea');
  field.value = text;
  field.setAttribute('readonly', '');
  field.style.cssText = 'position:fixed;top:0;left:0;opacity:0';
  document.body.appendChild(field);
  field.select();
  const ok = document.execCommand('copy');
  field.remove();
  if (!ok) throw new Error(t('explorer.export.clipboard-refused'));
}

/** Copy buttons of the step cards in `container` (one listener for every card). */
export function installCopyLatex(container) {
  container.addEventListener('click', async (e) => {
    const button = /** @type {HTMLElement} */ (e.target).closest?.('button.copy-tex');
    if (!button) return;
    const card = button.closest('article.step');
    // A step whose numbers are hidden (an exercise's, or one that asks for a prediction) is not copied.
    if (!app.result || card.classList.contains('predicting') || document.body.classList.contains('exercise-on')) return;
    const step = app.result.trace.steps.find((s) => stepKey(s) === card.dataset.key);
    if (!step) return;
    /** @type {HTMLElement & { timer?: ReturnType<typeof setTimeout> }} the message, and its timer */
    const done = card.querySelector('.copy-done');
    try {
      await toClipboard(stepTex(step, app.result.ctx.decimals));
      done.textContent = t('explorer.export.latex-copied');
    } catch (err) {
      done.textContent = t('explorer.export.not-copied', { error: err.message });
    }
    clearTimeout(done.timer);
    done.timer = setTimeout(() => {
      done.textContent = '';
    }, 4000);
  });
}
