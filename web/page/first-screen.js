// The prerendered first screen (scripts/build-site.mjs): #app holds the default example as the
// page first draws it at 1440 × 900, computed by the engine when the site was built, and
// <template id="app-pristine"> the page's own markup. This classic script runs right after them,
// while the document is parsed (a module would run too late: after the first paint), and keeps
// the snapshot only when the live page will show the same thing; otherwise it puts the pristine
// markup back before anything is painted (style.css hides #app[data-snapshot="pending"] until
// then). main.js swaps the pristine markup in when the engine is ready (takeOver).
// Not inline: the site runs under a strict Content-Security-Policy (script-src 'self').
(function () {
  // { phone, panelKey }: web/page/layout.js's values, written here by scripts/build-site.mjs.
  var rules = __LAYOUT_RULES__;
  var app = document.getElementById('app');
  var pristine = document.getElementById('app-pristine');
  if (!app || !pristine || app.getAttribute('data-snapshot') !== 'pending') return;
  var panel = null;
  try {
    panel = sessionStorage.getItem(rules.panelKey);
  } catch (e) { /* storage blocked: the default for the screen */ }
  var differs =
    location.hash.length > 1 ||       // a link's state (or a student's exercise)
    location.search.length > 1 ||     // ?embed, ?hide, ?lock, ?present, ?lesson, ... change the page
    window.parent !== window ||       // a frame: its host may reopen it with the reader's edits
    window.matchMedia(rules.phone).matches || // the problem panel starts folded on a phone
    panel === 'folded';               // and the reader folded it in this tab
  if (differs) {
    app.replaceChildren(pristine.content.cloneNode(true));
    app.removeAttribute('data-snapshot');
    app.removeAttribute('inert');
    return;
  }
  app.setAttribute('data-snapshot', 'shown');
  performance.mark('ae:first-steps');
  // When the first steps were on screen: the paint of the first step's first number, which
  // build-site marked elementtiming="ae:first-steps" (Element Timing). A mark in the task after
  // the next frame, as main.js's drawn() sets it, would wait here behind whatever was queued
  // first (the page's whole script, parsed and run). Without Element Timing, that mark.
  var types = (window.PerformanceObserver && PerformanceObserver.supportedEntryTypes) || [];
  if (types.indexOf('element') >= 0) {
    new PerformanceObserver(function (list, observer) {
      var entries = list.getEntries();
      for (var i = 0; i < entries.length; i++) {
        if (entries[i].identifier !== 'ae:first-steps') continue;
        observer.disconnect();
        performance.mark('ae:first-steps-painted', { startTime: entries[i].renderTime || entries[i].loadTime });
        return;
      }
    }).observe({ type: 'element', buffered: true });
    return;
  }
  requestAnimationFrame(function () {
    var channel = new MessageChannel();
    channel.port1.onmessage = function () { performance.mark('ae:first-steps-painted'); };
    channel.port2.postMessage(null);
  });
})();
