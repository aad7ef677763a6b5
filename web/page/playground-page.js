// The playground page: the playground (attention-explorer/playground) mounted on #playground, its
// link kept in the address (configuration, seed and step: a link retrains to the same step),
// weights saved and loaded as JSON, lessons (a preset, changes and questions) saved, opened and
// read from ?lesson=URL, and ?embed=1 for course pages' iframes. ?lang=xx (else the browser's
// languages) chooses the catalogue (web/lib/locales): the page's words and the playground's.
import { lessonOf, linkOf, mountPlayground, openLesson, readPlaygroundLesson } from 'attention-explorer/playground';
import { errorWords, loadTranslator, mountLanguageMenu, negotiate, translateDocument, withLang } from 'attention-explorer/i18n';
import { fetchLesson } from 'attention-explorer/share';
import { postHeight } from './frame-resize.js';

/** @type {typeof import('./app.js').$} */
const $ = (id) => /** @type {any} */ (document.getElementById(id));
const params = new URLSearchParams(location.search);
const embedded = params.get('embed') === '1';
if (embedded) {
  document.body.classList.add('embedded');
  postHeight();
}

// The language: ?lang= first, then the browser's; the page's own words, lang and dir at once.
const t = await loadTranslator(negotiate(params.get('lang'), navigator.languages));
document.documentElement.lang = t.lang;
document.documentElement.dir = t.dir;
// The tagline's explorer link carries the language.
const explorerLink = (chunks) =>
  Object.assign(document.createElement('a'), {
    href: withLang('index.html', t.lang),
    id: 'pg-explorer-link',
    textContent: chunks.join(''),
  });
translateDocument(document, t, { 'page.tagline': { explorer: explorerLink } });
// The language menu: choosing one reloads with ?lang= (the link's hash retrains to the same step).
mountLanguageMenu($('pg-lang'), t);

const root = $('playground');
const shareStatus = $('pg-share-status');
const say = (text) => {
  shareStatus.textContent = text;
};

try {
  const playground = await mountPlayground(root, {
    link: location.hash,
    lang: t.lang,
    explorerUrl: new URL('index.html', location.href).href,
    linkFor: (state) => `${location.pathname.split('/').pop() || 'playground.html'}${location.search}${linkOf(state)}`,
  });
  $('pg-loading').remove();
  root.removeAttribute('aria-busy');
  const { store, trainer } = playground;

  // The address follows the state whenever training stops and when the configuration changes.
  store.subscribe(
    (s) => [s.config, s.status === 'playing' || s.status === 'replaying' ? -1 : s.step],
    (_, s) => {
      if (s.status === 'playing' || s.status === 'replaying') return;
      history.replaceState(null, '', linkOf(s));
    },
  );

  $('pg-copy-link').addEventListener('click', async () => {
    const url = new URL(linkOf(store.get()), location.href).href;
    try {
      await navigator.clipboard.writeText(url);
      say(t('page.linkCopied'));
    } catch {
      say(url);
    }
  });
  $('pg-save').addEventListener('click', async () => {
    const file = await trainer.saveWeights();
    download(`playground-${store.get().preset}-step-${file.step}.json`, file);
    say(t('page.savedWeights', { step: file.step }));
  });
  const download = (name, value) => {
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([JSON.stringify(value, null, 2)], { type: 'application/json' }));
    a.download = name;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  };
  const showError = (message) => store.dispatch((s) => ({ ...s, error: message }));
  const open = (text, where) => {
    // The lesson file's own errors (its schema's) stay English for now, as the core's.
    const { lesson, error } = readPlaygroundLesson(text, store.get().catalogue, where);
    if (error) return showError(error);
    store.dispatch(openLesson, lesson);
    say(lesson.title ? t('page.openedLesson', { title: lesson.title }) : t('page.openedLessonFrom', { where }));
  };
  $('pg-save-lesson').addEventListener('click', () => {
    download(`playground-lesson-${store.get().preset}.json`, lessonOf(store.get()));
    say(t('page.savedLesson'));
  });
  $('pg-open-lesson').addEventListener('change', async (event) => {
    const [file] = /** @type {HTMLInputElement} */ (event.target).files;
    if (file) open(await file.text(), file.name);
    /** @type {HTMLInputElement | HTMLSelectElement} */ (event.target).value = '';
  });
  // ?lesson=URL: the default preset is drawn underneath while it loads; the wait has a limit.
  const lessonUrl = params.get('lesson');
  if (lessonUrl !== null) {
    let url;
    try {
      url = new URL(lessonUrl, location.href);
    } catch {
      url = null;
    }
    if (!url) showError(t('page.notAddress', { lesson: lessonUrl.slice(0, 80) }));
    else {
      say(t('page.loadingLesson', { url: url.href }));
      fetchLesson(url.href).then(
        (text) => open(text, url.href),
        (error) => {
          say('');
          showError(error.message);
        },
      );
    }
  }
  $('pg-load').addEventListener('change', async (event) => {
    const [file] = /** @type {HTMLInputElement} */ (event.target).files;
    if (!file) return;
    try {
      await trainer.loadWeights(JSON.parse(await file.text()));
      say(t('page.loadedWeights', { name: file.name }));
    } catch (error) {
      say('');
      showError(`${file.name}: ${errorWords(error, t)}`); // the core's errors in the page's language
    }
    /** @type {HTMLInputElement | HTMLSelectElement} */ (event.target).value = '';
  });
} catch (error) {
  $('pg-loading').textContent = t('playground.couldNotStart', { message: error.message });
  root.removeAttribute('aria-busy');
}
