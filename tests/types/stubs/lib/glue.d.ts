// What web/lib uses of an Emscripten glue module (scripts/build.sh writes the glue into dist/).
// Its exports are embind functions and `_`-prefixed C exports named by the wire table
// (cpp/wire.h), which web/lib looks up by name and checks at load time (load.js wireTable), so
// they are typed only as callable here.

/** The settings web/lib/load.js passes to the factory. */
export interface GlueSettings {
  instantiateWasm(imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void): object;
  onAbort(what: unknown): void;
}

/** An instantiated module: memory views (present when the glue exports them) and its functions. */
export interface GlueModule {
  HEAPU8?: Uint8Array;
  HEAPF64?: Float64Array;
  [name: string]: any;
}

export type GlueFactory = (settings: GlueSettings) => Promise<GlueModule>;
