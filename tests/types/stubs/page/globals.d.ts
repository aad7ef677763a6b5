// What the page's scripts put on window: KaTeX's script (web/page/math.js loads it on demand).
interface Window {
  katex?: typeof import('katex').default;
}
