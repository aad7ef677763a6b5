// web/page/vendor/katex/katex.mjs is KaTeX's own module, copied in by the build (scripts/build-site.mjs):
// the same types as the katex package.
export { default } from 'katex';
