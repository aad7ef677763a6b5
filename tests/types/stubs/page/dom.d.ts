// For the type check only: what an element found by a CSS selector is, read from the selector.
// The DOM's own types give the element of a bare tag name ('input') and Element for any other
// selector; here the last compound selector's tag decides ('#steps input:checked' is an
// HTMLInputElement, 'rect[data-q]' an SVGRectElement) and a selector without a tag ('.tab') finds
// an HTMLElement: the page's selectors without a tag find its own HTML elements.
type LastCompound<S extends string> =
  S extends `${string} ${infer R}` ? LastCompound<R> : S extends `${string}>${infer R}` ? LastCompound<R> : S;
type Before<S extends string, C extends string> = S extends `${infer T}${C}${string}` ? T : S;
type TagOf<S extends string> = Before<Before<Before<Before<LastCompound<S>, '.'>, '['>, ':'>, '#'>;
type SelectedElement<S extends string> =
  TagOf<S> extends infer T
    ? T extends keyof HTMLElementTagNameMap ? HTMLElementTagNameMap[T]
    : T extends keyof SVGElementTagNameMap ? SVGElementTagNameMap[T]
    : HTMLElement
    : never;

interface ParentNode {
  querySelector<S extends string>(selectors: S): SelectedElement<S> | null;
  querySelectorAll<S extends string>(selectors: S): NodeListOf<SelectedElement<S>>;
}
interface Element {
  closest<S extends string>(selectors: S): SelectedElement<S> | null;
}
