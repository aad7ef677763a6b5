// The Emscripten factory of dist/attention.js (tests/types/stubs/lib/module.d.ts).
import type { GlueFactory } from './module.js';
declare const createModule: GlueFactory;
export default createModule;
