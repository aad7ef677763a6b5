// The Emscripten factory of dist/attention-fast.js (tests/types/stubs/lib/glue.d.ts).
import type { GlueFactory } from './glue.js';
declare const createModule: GlueFactory;
export default createModule;
