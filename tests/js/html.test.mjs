// The html`` tag (web/lib/html.js, attention-explorer/html) that every innerHTML of the page, the
// web component and the step tables is written with:   node --test tests/js/html.test.mjs   (needs dist/)
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

const { Html, escapeHtml, html, raw, setHtml } = await import(`${dist}html.js`);

test('each of & < > " \' is escaped, in text and in an attribute', () => {
  assert.equal(String(html`<p>${'&'}</p>`), '<p>&amp;</p>');
  assert.equal(String(html`<p>${'<'}</p>`), '<p>&lt;</p>');
  assert.equal(String(html`<p>${'>'}</p>`), '<p>&gt;</p>');
  assert.equal(String(html`<p>${'"'}</p>`), '<p>&quot;</p>');
  assert.equal(String(html`<p>${"'"}</p>`), '<p>&#39;</p>');
  assert.equal(
    String(html`<a title="${'"><script>alert(1)</script>'}">x</a>`),
    '<a title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">x</a>',
  );
  assert.equal(escapeHtml(`Tom & "Jerry's" <b>`), 'Tom &amp; &quot;Jerry&#39;s&quot; &lt;b&gt;');
  // The template's own text is markup, left as written.
  assert.equal(String(html`<b class="x">&amp; 'a'</b>`), `<b class="x">&amp; 'a'</b>`);
});

test('an html`` is an Html whose toString is the markup; numbers, true and 0 are written as text', () => {
  const h = html`<td data-r="${0}">${-1.5}</td>${true}`;
  assert.ok(h instanceof Html);
  assert.equal(h.toString(), '<td data-r="0">-1.5</td>true');
  assert.equal(`${h}`, '<td data-r="0">-1.5</td>true');
  assert.equal(String(html``), '');
  assert.equal(String(html`${'a'}${'b'}`), 'ab');
});

test('an html`` inside another goes in as it is: escaped once, never twice', () => {
  const inner = html`<em>${'a < b'}</em>`;
  assert.equal(String(html`<p>${inner} &amp; ${'c & d'}</p>`), '<p><em>a &lt; b</em> &amp; c &amp; d</p>');
  const deeper = html`<div>${html`<p>${inner}</p>`}</div>`;
  assert.equal(String(deeper), '<div><p><em>a &lt; b</em></p></div>');
});

test('arrays are flattened, each item by the same rules', () => {
  const items = ['x', '<y>', 'z&'];
  assert.equal(String(html`<ul>${items.map((i) => html`<li>${i}</li>`)}</ul>`), '<ul><li>x</li><li>&lt;y&gt;</li><li>z&amp;</li></ul>');
  // Strings in an array are escaped; nested arrays, Html and nothing-values mixed.
  assert.equal(String(html`${['<a>', [html`<b></b>`, ['&', null]], false, undefined, 3]}`), '&lt;a&gt;<b></b>&amp;3');
  assert.equal(String(html`<ul>${[]}</ul>`), '<ul></ul>');
});

test('null, undefined and false insert nothing (so `cond && html`...`` works); "" and 0 are text', () => {
  assert.equal(String(html`<p>${null}|${undefined}|${false}</p>`), '<p>||</p>');
  assert.equal(String(html`<p>${''}|${0}|${NaN}</p>`), '<p>|0|NaN</p>');
  const edited = false;
  assert.equal(String(html`<b>T</b>${edited && html` (edited)`}`), '<b>T</b>');
  assert.equal(String(html`<b>T</b>${!edited && html` (edited)`}`), '<b>T</b> (edited)');
});

test('raw() marks trusted markup: inserted as it is, alone or inside html``', () => {
  const svg = '<path d="M0 0 L1 1"/>';
  assert.ok(raw(svg) instanceof Html);
  assert.equal(String(raw(svg)), svg);
  assert.equal(String(html`<svg>${raw(svg)}</svg>`), '<svg><path d="M0 0 L1 1"/></svg>');
  assert.equal(String(html`<p>${[raw('<i>a</i>'), '<i>b</i>']}</p>`), '<p><i>a</i>&lt;i&gt;b&lt;/i&gt;</p>');
});

test('an Html inside an attribute is inserted as it is (its own values already escaped)', () => {
  const attrs = html`data-key="${'w"1'}" title="${'a&b'}"`;
  assert.equal(String(html`<table ${attrs}></table>`), '<table data-key="w&quot;1" title="a&amp;b"></table>');
  const title = html`${'<Q>'} and K`;
  assert.equal(String(html`<span title="${title}">x</span>`), '<span title="&lt;Q&gt; and K">x</span>');
});

test('only html`` and raw() make an Html; setHtml takes an Html, never a string', () => {
  assert.throws(() => new Html(Symbol('html.js'), '<b>'), { name: 'TypeError', message: /made by html`...` or raw\(markup\)/ });
  const el = { innerHTML: '' };
  setHtml(el, html`<p>${'<x>'}</p>`);
  assert.equal(el.innerHTML, '<p>&lt;x&gt;</p>');
  assert.throws(() => setHtml(el, '<p>x</p>'), { name: 'TypeError', message: /setHtml takes an html`...` template/ });
  assert.equal(el.innerHTML, '<p>&lt;x&gt;</p>', 'unchanged by the refused string');
});
