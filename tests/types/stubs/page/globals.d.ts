// What the page's scripts put on window: KaTeX's script (web/page/math.js loads it on demand).
interface Window {
  katex?: typeof import('katex').default;
}

// Placeholders in web/page/first-screen.js that scripts/build-site.mjs replaces with the layout
// rules (web/page/layout.js's) and the elements that start the live page.
declare const __LAYOUT_RULES__: {
  phone: string;
  panelKey: string;
  startsFolded: typeof import('../../../../web/page/layout.js').startsFolded;
  showSetup: typeof import('../../../../web/page/layout.js').showSetup;
};
declare const __PAGE_START__: Array<[string, Record<string, string>]>;
