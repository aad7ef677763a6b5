// The playground page: the playground (attention-explorer/playground) mounted on #playground, its
// link kept in the address (configuration, seed and step: a link retrains to the same step),
// weights saved and loaded as JSON, and ?embed=1 for course pages' iframes.
import { linkOf, mountPlayground } from 'attention-explorer/playground';
import { postHeight } from './frame-resize.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const embedded = params.get('embed') === '1';
if (embedded) {
  document.body.classList.add('embedded');
  postHeight();
}

const root = $('playground');
const shareStatus = $('pg-share-status');
const say = (text) => {
  shareStatus.textContent = text;
};

try {
  const playground = await mountPlayground(root, {
    link: location.hash,
    explorerUrl: new URL('index.html', location.href).href,
    linkFor: (state) => `${location.pathname.split('/').pop() || 'playground.html'}${location.search}${linkOf(state)}`,
  });
  $('pg-loading').remove();
  root.removeAttribute('aria-busy');
  const { store, trainer } = playground;

  // The address follows the state whenever training stops and when the configuration changes.
  store.subscribe((s) => [s.config, s.status === 'playing' || s.status === 'replaying' ? -1 : s.step], (_, s) => {
    if (s.status === 'playing' || s.status === 'replaying') return;
    history.replaceState(null, '', linkOf(s));
  });

  $('pg-copy-link').addEventListener('click', async () => {
    const url = new URL(linkOf(store.get()), location.href).href;
    try {
      await navigator.clipboard.writeText(url);
      say('Link copied: it retrains to this step in the same browser.');
    } catch {
      say(url);
    }
  });
  $('pg-save').addEventListener('click', async () => {
    const file = await trainer.saveWeights();
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([JSON.stringify(file)], { type: 'application/json' }));
    a.download = `playground-${store.get().preset}-step-${file.step}.json`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
    say(`Saved the weights at step ${file.step}.`);
  });
  $('pg-load').addEventListener('change', async (event) => {
    const [file] = event.target.files;
    if (!file) return;
    try {
      await trainer.loadWeights(JSON.parse(await file.text()));
      say(`Loaded ${file.name}.`);
    } catch (error) {
      say('');
      store.dispatch((s) => ({ ...s, error: `${file.name}: ${error.message}` }));
    }
    event.target.value = '';
  });
} catch (error) {
  $('pg-loading').textContent = `The playground could not start: ${error.message}`;
  root.removeAttribute('aria-busy');
}
