// Loading an Emscripten module from bytes, checking that it speaks this JS's wire format, and
// guarding it against crashes; shared by every entry point (index.js and node.js for the whole
// engine; fast-index.js and fast-node.js for the lean fast-only module). Kept free of the engine
// so the lean entry's import graph stays small.

/**
 * The package's version (package.json's).
 * @type {typeof import('./fast-index.js').version}
 */
export const version = '0.1.0';

const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];

// An error a catalogue names (its "error.*" id and values, as the core's and problem.js's errors);
// `english` is its English, said here so that this module loads no catalogue (the lean entry).
function said(english, id, values, options) {
  const error = /** @type {any} */ (new Error(english, options));
  error.message_id = `error.${id}`;
  error.values = values;
  return error;
}

// What an error says, as a value of a message: its message when it has one, else its text.
const reasonOf = (error) => (error?.message_id ? { id: error.message_id, values: error.values } : String(error?.message ?? error));

/**
 * Instantiates the Emscripten factory with bytes from `loadBytes()`; every failure is an Error
 * naming `where` (the URL or path tried). Resolves to [module, reload]: `reload()` instantiates
 * the already compiled bytes again (a fresh module after a crash). `linkImports(imports)`, if
 * given, may change the imports before each instantiation (relaxed.js links its kernels so).
 * (./glue.js: the glue's types, tests/types/stubs/lib/glue.d.ts; the glue itself is built.)
 * @param {import('./glue.js').GlueFactory} createModule
 * @param {() => Promise<ArrayBuffer | ArrayLike<number>>} loadBytes
 * @param {string} where
 * @param {(imports: WebAssembly.Imports) => void} [linkImports]
 * @returns {Promise<[import('./glue.js').GlueModule, () => Promise<import('./glue.js').GlueModule>]>}
 */
export async function loadModule(createModule, loadBytes, where, linkImports) {
  let bytes;
  try {
    bytes = new Uint8Array(await loadBytes());
  } catch (error) {
    const english = `could not load the WebAssembly module from ${where}: ${error.message}`;
    throw said(english, 'wasm-load', { where, reason: reasonOf(error) }, { cause: error });
  }
  if (!WASM_MAGIC.every((b, i) => bytes[i] === b)) {
    const start = new TextDecoder().decode(bytes.subarray(0, 16)).replace(/\s+/g, ' ');
    throw said(
      `${where} is not a WebAssembly module (it starts with ${JSON.stringify(start)}, not "\\0asm"); ` +
        'a server or bundler may be answering with an HTML page: pass { wasmUrl } pointing at the .wasm file',
      'wasm-not-wasm',
      { where, start: JSON.stringify(start) },
    );
  }
  let compiledModule = null; // compiled once; a reload after a crash only instantiates it again
  const load = () =>
    new Promise((resolve, reject) => {
      createModule({
        instantiateWasm(imports, receive) {
          try {
            linkImports?.(imports);
          } catch (error) {
            reject(new Error(`could not link the kernels of the WebAssembly module from ${where}: ${error.message}`, { cause: error }));
            return {};
          }
          WebAssembly.instantiate(compiledModule ?? bytes, imports).then(
            (result) => {
              const instance = result instanceof WebAssembly.Instance ? result : result.instance;
              compiledModule ??= result.module;
              receive(instance, compiledModule);
            },
            (error) =>
              reject(
                said(
                  `could not instantiate the WebAssembly module from ${where}: ${error.message}`,
                  'wasm-instantiate',
                  { where, reason: reasonOf(error) },
                  { cause: error },
                ),
              ),
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

/**
 * An engine's hold on its module, shared by createEngine and createFastEngine. `module()` is the
 * live module, or throws while a crashed one is being replaced. `crashed(where, error, input?)`
 * is called after a WebAssembly.RuntimeError (an "unreachable" trap or an abort, after which the
 * instance stays broken): it drops the module, starts `reload()` for a fresh one and returns the
 * Error to throw, naming the function and, when given, the input.
 */
export function moduleGuard(wasm, reload) {
  let current = wasm;
  let dead = null; // the crash's message while no fresh module is in place
  let reloading = null;
  return {
    module() {
      if (dead === null) return current;
      throw new Error(
        `the attention engine crashed earlier (${dead}) and ${reloading ? 'is still being reloaded: try again in a moment' : 'could not be reloaded: reload the page'}`,
      );
    },
    crashed(where, error, input) {
      const what = error?.message || String(error);
      dead = what;
      /** @type {Error & { reloaded?: Promise<void> }} */
      const out = new Error(
        `the attention engine crashed (${what}) in ${where}()${reload ? ' and was reloaded' : ''}` +
          (input === undefined ? '' : `; the input that caused it: ${input}`),
        { cause: error },
      );
      if (reload) {
        reloading ??= Promise.resolve()
          .then(reload)
          .then(
            (fresh) => {
              current = fresh;
              dead = null;
              reloading = null;
            },
            (failure) => {
              reloading = null;
              dead = `${what}; reloading failed: ${failure.message}`;
            },
          );
        out.reloaded = reloading;
      }
      return out;
    },
  };
}

// ---- the wire table (cpp/wire.h) ------------------------------------------------------------------

/** The wire version this JS speaks (cpp/wire.h kVersion). */
const WIRE_VERSION = 10;

/**
 * The module's wire table from `module[name]()` (_wireLayout: the whole table; _fastWireLayout:
 * the fast path's section), refused unless it is this JS's version.
 */
export function wireTable(module, name) {
  const table = typeof module[name] === 'function' ? module[name]() : undefined;
  if (table?.version !== WIRE_VERSION) {
    const theirs = table === undefined ? 'has no wire table' : `speaks wire format ${table.version}`;
    throw new Error(
      `the WebAssembly module ${theirs} but this JS speaks wire format ${WIRE_VERSION}: ` +
        "the package's JS and .wasm files are from different builds (use the dist/ of one build)",
    );
  }
  return table;
}

/** { name: index } of a list of names: the codes of a code list, or the offsets of a header. */
export function indexOf(names) {
  const out = {};
  names.forEach((name, i) => {
    out[name] = i;
  });
  return out;
}

/**
 * The bindings return an error as an Error object (cpp/wire.h guarded()): thrown here as a new
 * Error with its message. The module's own was made in the minified glue, whose one long line
 * Node prints whole above an uncaught error; its stack holds nothing a reader can use. An error the
 * core names by a message id (`message_id`, `values`: the catalogues' "error.*") gets its words
 * from `words` (the engine passes i18n.js `english`; this module stays free of the catalogues so
 * the lean fast entry's import graph stays small).
 * @param {any} result
 * @param {(id: string, values: Record<string, string>) => unknown} [words]
 */
export function unwrap(result, words) {
  if (!(result instanceof Error)) return result;
  const said = /** @type {any} */ (result);
  // A new Error (a stack in the caller's code), keeping what the core says the error concerns.
  const error = /** @type {any} */ (new Error(said.message_id && words ? String(words(said.message_id, said.values)) : said.message));
  for (const key of ['field', 'fields', 'row', 'column', 'message_id', 'values']) if (said[key] !== undefined) error[key] = said[key];
  throw error;
}
