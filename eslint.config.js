// eslint over web/ (run by scripts/test.sh): a few rules that catch real mistakes, and
// import-x/no-cycle, which keeps the page's modules a graph without cycles (views are leaves: they
// import the store, the actions and formatting, never another view or the page's loop).
import js from '@eslint/js';
import globals from 'globals';
import { importX } from 'eslint-plugin-import-x';

export default [
  { ignores: ['web/page/vendor/**'] },
  {
    files: ['web/**/*.js'],
    languageOptions: {
      // 2025: import attributes (web/lib/i18n.js imports its JSON catalogues `with { type: 'json' }`).
      ecmaVersion: 2025,
      sourceType: 'module',
      globals: { ...globals.browser, ...globals.worker },
    },
    plugins: { 'import-x': importX },
    rules: {
      ...js.configs.recommended.rules,
      'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none' }],
      // A message rewritten for a reader (the CLI's, a lesson file's) need not carry the original.
      'preserve-caught-error': 'off',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-self-import': 'error',
      'import-x/named': 'error',
      // Markup is written with web/lib/html.js's html`` (values escaped by default) and setHtml,
      // never as a string put together by hand: an unescaped value there is an injection.
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "AssignmentExpression[left.property.name=/^(innerHTML|outerHTML)$/]:matches([operator='+='], [right.type='TemplateLiteral'], [right.type='BinaryExpression'], [right.type='Literal'][right.value=/./])",
          message: "Build markup with html`...` from 'attention-explorer/html' and write it with setHtml(el, html`...`), not a string.",
        },
        {
          selector:
            "CallExpression[callee.property.name='insertAdjacentHTML'] > :matches(TemplateLiteral, BinaryExpression, Literal).arguments:nth-child(2)",
          message: "Build markup with html`...` from 'attention-explorer/html' and pass String(html`...`), not a string.",
        },
      ],
    },
  },
  {
    // Placeholders that scripts/build-site.mjs replaces with the layout rules and the page's start.
    files: ['web/page/first-screen.js'],
    languageOptions: { sourceType: 'script', globals: { __LAYOUT_RULES__: 'readonly', __PAGE_START__: 'readonly' } },
  },
  {
    // The CLI and the Node entry points.
    files: ['web/lib/cli.js', 'web/lib/node.js', 'web/lib/fast-node.js', 'web/lib/load-node.js'],
    languageOptions: { globals: { ...globals.node } },
  },
];
