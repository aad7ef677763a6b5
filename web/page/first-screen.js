// The prerendered first screen (scripts/build-site.mjs): #app holds the default example as the
// page first draws it at 1440 × 900, computed by the engine when the site was built, and
// <template id="app-pristine"> the page's own markup. index.html runs this classic script twice:
// - in <head>, before anything is painted (a script there blocks the first paint, as the
//   stylesheets do), it decides whether the snapshot is what the live page will show, and says so
//   on <html data-first-screen="prerendered">; style.css shows a snapshot only then, so a kept one
//   is painted in the first frame, with the header;
// - right after #app and its template, it puts the pristine markup back when the snapshot is not
//   kept, folds the snapshot's problem panel where the live page starts with it folded (a phone,
//   or the reader folded it in this tab), and marks when the kept one is painted.
// It also starts the live page: build-site moved the page's module and the engine's preload out of
// <head> into `start` below. Without a snapshot they start at once (the module runs once the HTML
// is parsed, as a module in <head> would); with one, after the frame that shows it: fetching and
// compiling the page's module while the snapshot was laid out and painted delayed the first steps
// by ~0.1 s on a 2-core machine (BENCHMARKS.md, twelfth session).
// main.js swaps the pristine markup in when the engine is ready (takeOver).
// Not inline: the site runs under a strict Content-Security-Policy (script-src 'self').
/** @typedef {PerformanceEntry & { identifier: string, renderTime: number, loadTime: number }} ElementTiming the Element Timing API's entry (not in TypeScript's DOM types) */
(function () {
  // { phone, panelKey, startsFolded, showSetup }: web/page/layout.js's, written here by scripts/build-site.mjs.
  var rules = __LAYOUT_RULES__;
  // [[tag, { attribute: value }], ...]: the elements that start the live page, from index.html's <head>.
  var start = __PAGE_START__;
  var root = document.documentElement;

  /**
   * Puts the preloads in <head> now and the scripts once the HTML is parsed (a module added to the
   * document runs as soon as it is loaded); a module is fetched and compiled meanwhile
   * (modulepreload).
   */
  function startPage() {
    var add = function (tag, attrs) {
      var el = document.createElement(tag);
      for (var name in attrs) el.setAttribute(name, attrs[name]);
      document.head.appendChild(el);
    };
    var parsing = document.readyState === 'loading';
    var scripts = [];
    for (var i = 0; i < start.length; i++) {
      if (start[i][0] !== 'script') add(start[i][0], start[i][1]);
      else {
        scripts.push(start[i][1]);
        if (parsing) add('link', { rel: 'modulepreload', href: start[i][1].src });
      }
    }
    var run = function () {
      for (var j = 0; j < scripts.length; j++) add('script', scripts[j]);
    };
    if (parsing) document.addEventListener('DOMContentLoaded', run);
    else run();
  }

  var app = document.getElementById('app');
  if (!app) {
    var differs =
      location.hash.length > 1 || // a link's state (or a student's exercise)
      location.search.length > 1 || // ?embed, ?hide, ?lock, ?present, ?lesson, ... change the page
      window.parent !== window; // a frame: its host may reopen it with the reader's edits
    if (differs) startPage();
    else root.setAttribute('data-first-screen', 'prerendered');
    return;
  }
  if (root.getAttribute('data-first-screen') !== 'prerendered') {
    // Started in <head>: the live page draws its own markup ("Loading…") until the engine is there.
    app.replaceChildren(/** @type {HTMLTemplateElement} */ (document.getElementById('app-pristine')).content.cloneNode(true));
    app.removeAttribute('data-snapshot');
    app.removeAttribute('inert');
    return;
  }
  app.setAttribute('data-snapshot', 'shown');
  var panel = null;
  try {
    panel = sessionStorage.getItem(rules.panelKey);
  } catch (e) {
    /* storage blocked: the default for the screen */
  }
  if (rules.startsFolded(panel, window.matchMedia(rules.phone).matches)) rules.showSetup(document, false);
  performance.mark('ae:first-steps');
  // When the first steps were on screen: the paint of the first step's first number, which
  // build-site marked elementtiming="ae:first-steps" (Element Timing). Chromium does not always
  // report it; then the task after the next frame, an upper bound (it can wait behind the page's
  // script, run in between), replaced by Element Timing's time if that comes later.
  var PAINTED = 'ae:first-steps-painted';
  var exact = false;
  var types = (window.PerformanceObserver && PerformanceObserver.supportedEntryTypes) || [];
  if (types.indexOf('element') >= 0) {
    new PerformanceObserver(function (list, observer) {
      var entries = list.getEntries();
      for (var i = 0; i < entries.length; i++) {
        if (/** @type {ElementTiming} */ (entries[i]).identifier !== 'ae:first-steps') continue;
        observer.disconnect();
        exact = true;
        performance.clearMarks(PAINTED);
        performance.mark(PAINTED, {
          startTime: /** @type {ElementTiming} */ (entries[i]).renderTime || /** @type {ElementTiming} */ (entries[i]).loadTime,
        });
        return;
      }
    }).observe({ type: 'element', buffered: true });
  }
  var started = false;
  var startOnce = function () {
    if (started) return;
    started = true;
    startPage();
  };
  requestAnimationFrame(function () {
    var channel = new MessageChannel();
    channel.port1.onmessage = function () {
      if (!exact) performance.mark(PAINTED);
      startOnce();
    };
    channel.port2.postMessage(null);
  });
  // A tab opened in the background draws no frames: the page starts anyway.
  setTimeout(startOnce, 1000);
})();
