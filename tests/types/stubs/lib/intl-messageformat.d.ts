// dist/intl-messageformat.js: the npm package's module, copied by scripts/vendor-formatjs.mjs.
export { IntlMessageFormat } from 'intl-messageformat';
