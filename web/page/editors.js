// The input editors' registry: name -> MatrixEditor (editor.js), kept (with their values) while
// inputs come and go. Its own module, not a view's: inputs.js and controls.js lay the editors out
// and fill it; the loop (update.js) reads their half-typed cells' errors and writes the errors
// and "read as" lines into them without importing a view.

/** @type {Map<string, import('./editor.js').MatrixEditor>} */
export const editors = new Map();
