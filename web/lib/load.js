// Loading an Emscripten module from bytes, shared by every entry point (index.js and node.js for
// the whole engine; fast-index.js and fast-node.js for the lean fast-only module). Kept free of
// the engine so the lean entry's import graph stays small.

/** The package's version (package.json's). */
export const version = '0.1.0';

const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];

/**
 * Instantiates the Emscripten factory with bytes from `loadBytes()`; every failure is an Error
 * naming `where` (the URL or path tried). Resolves to [module, reload]: `reload()` instantiates
 * the already compiled bytes again (a fresh module after a crash).
 */
export async function loadModule(createModule, loadBytes, where) {
  let bytes;
  try {
    bytes = new Uint8Array(await loadBytes());
  } catch (error) {
    throw new Error(`could not load the WebAssembly module from ${where}: ${error.message}`, { cause: error });
  }
  if (!WASM_MAGIC.every((b, i) => bytes[i] === b)) {
    const start = new TextDecoder().decode(bytes.subarray(0, 16)).replace(/\s+/g, ' ');
    throw new Error(`${where} is not a WebAssembly module (it starts with ${JSON.stringify(start)}, not "\\0asm"); ` +
      'a server or bundler may be answering with an HTML page: pass { wasmUrl } pointing at the .wasm file');
  }
  let compiledModule = null; // compiled once; a reload after a crash only instantiates it again
  const load = () => new Promise((resolve, reject) => {
    createModule({
      instantiateWasm(imports, receive) {
        WebAssembly.instantiate(compiledModule ?? bytes, imports).then(
          (result) => {
            const instance = result instanceof WebAssembly.Instance ? result : result.instance;
            compiledModule ??= result.module;
            receive(instance, compiledModule);
          },
          (error) => reject(new Error(`could not instantiate the WebAssembly module from ${where}: ${error.message}`, { cause: error })),
        );
        return {};
      },
      onAbort(what) {
        reject(new Error(`the WebAssembly module from ${where} aborted: ${what}`));
      },
    }).then(resolve, reject);
  });
  return [await load(), load];
}

/** Browser/bundler: `wasmUrl` against the page (default: `fallback`, next to the package's JS). */
export function browserUrl(wasmUrl, fallback) {
  if (wasmUrl === undefined || wasmUrl === null) return fallback;
  const base = globalThis.document?.baseURI ?? globalThis.location?.href ?? fallback.href;
  return new URL(String(wasmUrl), base);
}

export async function fetchBytes(url) {
  const response = await fetch(url, { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
  return response.arrayBuffer();
}
