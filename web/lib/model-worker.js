// The Worker entry of the model (package export `attention-explorer/model-worker`): training runs
// here, off the page's main thread, so a long train() never freezes the page. Start it with
//   new Worker(new URL('attention-explorer/model-worker', import.meta.url), { type: 'module' })
// and talk to it through connectModelWorker(worker) (model-client.js), which gives the same
// methods as engine.model() returning promises. One model per Worker; `create` replaces it.
//
// Messages in: { id, method, args }; out: { id, result } or { id, error } (the Error's message).
import createModelModule from './attention-model.js';
import { browserUrl, fetchBytes, loadModule } from './load.js';
import { createModel, modelCatalogue } from './model.js';

let loading = null;
let model = null;

function moduleFor(wasmUrl) {
  loading ??= (async () => {
    const url = browserUrl(wasmUrl, new URL('./attention-model.wasm', import.meta.url));
    const [module] = await loadModule(createModelModule, () => fetchBytes(url), url.href);
    return module;
  })();
  return loading;
}

const METHODS = ['train', 'evaluate', 'headScores', 'headProblem', 'weights', 'gradients', 'predict'];

async function answer(method, args) {
  if (method === 'load') {
    await moduleFor(args[0]?.wasmUrl);
    return true;
  }
  const module = await moduleFor();
  if (method === 'catalogue') return modelCatalogue(module);
  if (method === 'create') {
    model?.dispose();
    model = null;
    model = createModel(module, args[0], args[1]);
    return { config: model.config, example: model.example, step: model.step };
  }
  if (method === 'step') return model?.step ?? 0;
  if (!METHODS.includes(method))
    throw new Error(`the model worker has no method '${method}' (it has load, catalogue, create, step, ${METHODS.join(', ')})`);
  if (model === null) throw new Error(`${method}: no model yet (send create first)`);
  return model[method](...args);
}

self.addEventListener('message', async (event) => {
  const { id, method, args = [] } = event.data ?? {};
  try {
    self.postMessage({ id, result: await answer(method, args) });
  } catch (error) {
    // The core's message id and values survive postMessage: the page says them in its language.
    self.postMessage({ id, error: error?.message ?? String(error), message_id: error?.message_id, values: error?.values });
  }
});
