// `@typedef {Satisfies<typeof X, typeof import('./entry.js').X>}` in a JS module: a type-only
// assertion (no code) that its X fits the declaration of X in the entry's hand-written .d.ts.
// For what `@type` cannot annotate: classes and constants (functions carry `@type` themselves).
type Satisfies<T extends U, U> = T;
