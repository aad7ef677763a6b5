// "Back to the playground": when the playground opened a head here (?from=playground&back=...),
// the header links back to the playground at the same step. Only a link to this site's
// playground page is followed (a relative "playground.html#..." address), never another site.
import { t } from './language.js';

const PLAYGROUND_LINK = /^playground\.html(\?[\w=&%.-]*)?(#[\w=&%.{}:,"[\]\-+]*)?$/;

/** Puts the link in the header when the address came from the playground. */
export function showBackLink(header, search = location.search) {
  const params = new URLSearchParams(search);
  const back = params.get('back');
  if (params.get('from') !== 'playground' || back === null || !PLAYGROUND_LINK.test(back)) return null;
  const step = /[#&]step=(\d+)/.exec(back)?.[1];
  const a = document.createElement('a');
  a.href = back;
  a.className = 'back-link';
  a.textContent = step ? t('explorer.nav.back-step', { step }) : t('explorer.nav.back');
  header.prepend(a);
  return a;
}
