// The embedding examples page: a module file (no inline script), so it runs under a strict CSP.
import { AttentionExplorerElement } from 'attention-explorer/component';
import { encodeStateString, problemToState } from 'attention-explorer/share';
import 'attention-explorer/playground'; // defines <attention-playground>
import katex from './vendor/katex/katex.mjs';

// Optional: typeset the elements' formulas (as MathML). Without this they are plain text.
AttentionExplorerElement.katex = katex;

const log = document.getElementById('ex-json-log');
/** @type {import('attention-explorer/component').AttentionExplorerElement} */ (document.getElementById('ex-json')).addEventListener(
  'change',
  (e) => {
    const out = e.detail.trace.output.map((row) => row.map((v) => v.toFixed(3)).join(' ')).join(' | ');
    log.textContent = `change: Q = ${JSON.stringify(e.detail.problem.Q)}; output = ${out}`;
  },
);

// Example 3 gets a state string made from a problem here, as the explorer's "Copy link" makes one.
const state = problemToState(
  {
    Q: [
      [1, 0, 1],
      [0, 1, 1],
      [1, 1, 0],
    ],
    K: [
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ],
    V: [
      [1, 0],
      [0, 1],
      [1, 1],
    ],
    options: { causal: true },
  },
  { tokens: { q: ['I', 'like', 'tea'] } },
);
const encoded = await encodeStateString(state);
document.getElementById('ex-state-code').textContent = `<attention-explorer state="${encoded}" steps="weights"></attention-explorer>`;
document.getElementById('ex-state').setAttribute('state', encoded);

// Example 4: the explorer itself, embedded.
const src = new URL(
  'index.html?embed=1&hide=scores,scaled&lock=inputs#' + (await encodeStateString({ preset: '000-causal' })),
  location.href,
);
const iframe = /** @type {HTMLIFrameElement} */ (document.getElementById('ex-iframe'));
iframe.src = src.href;
document.getElementById('ex-iframe-code').textContent =
  `<iframe src="${src.href.replace(/&/g, '&amp;')}" width="100%" height="640" name="attention-explorer" frameborder="0" scrolling="auto" allowfullscreen></iframe>`;

// The frame posts its content height (docs/embedding.md, "The frame sizes itself"): follow it.
addEventListener('message', (event) => {
  const data = event.data;
  if (!data || data.type !== 'attention-explorer:resize' || !(data.height > 0)) return;
  for (const frame of document.querySelectorAll('iframe')) {
    if (frame.contentWindow === event.source) frame.style.height = `${Math.ceil(data.height)}px`;
  }
});
document.body.dataset.ready = 'true';
