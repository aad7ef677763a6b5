// The page's side of the model Worker (model-worker.js): the model's methods as promises.
// Replies come in the order asked, so a page may queue train(10) calls and draw between them.

/**
 * Wraps a Worker running `attention-explorer/model-worker`. Every method returns a promise of
 * what engine.model()'s method returns; a failure rejects with an Error carrying the message (and the
 * core's message_id and values when it has them).
 * @type {typeof import('./index.js').connectModelWorker}
 */
export function connectModelWorker(worker) {
  if (!worker || typeof worker.postMessage !== 'function') {
    throw new Error(`connectModelWorker takes a Worker, got ${worker === null ? 'null' : typeof worker}`);
  }
  let next = 1;
  const pending = new Map();
  const onMessage = (event) => {
    const { id, result, error, message_id: messageId, values } = event.data ?? {};
    const waiting = pending.get(id);
    if (!waiting) return;
    pending.delete(id);
    if (error !== undefined) {
      // The core's message id and values (the English message fills message): errorWords says it in any language.
      waiting.reject(Object.assign(new Error(error), messageId ? { message_id: messageId, values } : {}));
    } else waiting.resolve(result);
  };
  const onError = (event) => {
    const message = `the model worker failed: ${event.message ?? 'it could not be started'}`;
    for (const waiting of pending.values()) waiting.reject(new Error(message));
    pending.clear();
  };
  worker.addEventListener('message', onMessage);
  worker.addEventListener('error', onError);
  const call = (method, ...args) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, method, args });
    });
  return Object.freeze({
    /** Loads the module (from `wasmUrl` when given); other calls load it on first use. */
    load: (settings = {}) => call('load', settings),
    catalogue: () => call('catalogue'),
    /** Makes the Worker's model (replacing any): resolves to { config, example, step }. */
    create: (config, settings) => call('create', config, settings),
    step: () => call('step'),
    train: (steps) => call('train', steps),
    evaluate: (settings) => call('evaluate', ...(settings === undefined ? [] : [settings])),
    headScores: () => call('headScores'),
    headProblem: (layer, head, tokens) => call('headProblem', layer, head, tokens),
    weights: () => call('weights'),
    gradients: (tokens, targets) => call('gradients', tokens, targets),
    predict: (tokens, settings) => call('predict', tokens, ...(settings === undefined ? [] : [settings])),
    /** Stops the Worker; waiting calls reject. */
    terminate() {
      worker.terminate?.();
      onError({ message: 'it was terminated' });
    },
  });
}
