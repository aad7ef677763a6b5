// A model that trains (cpp/model.h), wrapped from the model module (attention-model.wasm, built
// from cpp/bindings_model.cpp). Used by engine.model() and by the Worker entry (model-worker.js).
// Configurations, weights and results are the JSON of docs/model.md; no maths happens here.
import { inputError } from './input.js';
import { english } from './i18n.js';
import { unwrap } from './load.js';

// Frees a model's memory in the module when its wrapper is collected without dispose().
const collected =
  typeof FinalizationRegistry === 'function' ? new FinalizationRegistry(({ module, id }) => module._modelDispose(id)) : null;

const asJson = (value, what) => {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw inputError(`${what} cannot be written as JSON: ${error.message}`);
  }
};

/** The `ablate` setting of evaluate and predict as JSON text ("" when absent). */
function ablateText(settings, method) {
  if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) {
    throw inputError(`${method} takes { ablate }, got ${JSON.stringify(settings)}`);
  }
  for (const key of Object.keys(settings)) {
    if (key !== 'ablate') throw inputError(`${method}: unknown setting '${key}' (it takes { ablate })`);
  }
  return settings.ablate === undefined ? '' : asJson(settings.ablate, 'ablate');
}

function checkHead(name, n) {
  if (!Number.isInteger(n)) throw inputError(`${name} must be a whole number from 1, got ${JSON.stringify(n)}`);
}

/**
 * A model made in `module` from `config` (an object or JSON text: { model, task, optimizer,
 * steps, batch, seed, eval_every }) and, when given, its weights (docs/model.md).
 * @param {import('./glue.js').GlueModule} module
 * @param {object | string} config
 * @param {{ weights?: unknown }} [options]
 */
export function createModel(module, config, options = {}) {
  if (config === null || (typeof config !== 'object' && typeof config !== 'string')) {
    throw inputError(`model takes a configuration object ({ model, task, optimizer, ... }), got ${JSON.stringify(config)}`);
  }
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw inputError(`model takes a configuration and { weights }, got ${JSON.stringify(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'weights') throw inputError(`model: unknown setting '${key}' (it takes { weights })`);
  }
  const weights = options.weights === undefined ? '' : asJson(options.weights, 'weights');
  const made = JSON.parse(unwrap(module._modelCreate(asJson(config, 'the configuration'), weights), english));
  const { id } = made;
  let disposed = false;
  const call = (name, ...args) => {
    if (disposed) {
      // The same message as the module's (bindings_model.cpp): an id errorWords says in any language.
      throw Object.assign(new Error(String(english('error.model-disposed'))), { message_id: 'error.model-disposed', values: {} });
    }
    // The core's errors (message ids) get their English message; errorWords says them in any language.
    return unwrap(module[name](id, ...args), english);
  };
  const json = (name, ...args) => JSON.parse(call(name, ...args));
  const tokensText = (tokens) => asJson(tokens, 'tokens');
  const model = {
    /** The configuration with every default written out (a file `train` accepts). */
    config: made.config,
    /** The task's description and one example sequence with its targets (null without a task). */
    example: made.example,
    /** Optimiser steps taken so far. */
    get step() {
      return call('_modelStep');
    },
    /** `steps` training steps; the training loss of each (a plain array). */
    train(steps = 1) {
      if (!Number.isInteger(steps) || steps < 0) throw inputError(`train: steps must be a whole number ≥ 0, got ${JSON.stringify(steps)}`);
      return Array.from(call('_modelTrain', steps));
    },
    /** { step, loss, accuracy, predictions } on the task's fixed probe batch; ablate: [[layer, head], ...] off. */
    evaluate(settings = {}) {
      return json('_modelEvaluate', ablateText(settings, 'evaluate'));
    },
    /** Per layer × head: previous_token, induction, duplicate_token, first_token, ablated_loss. */
    headScores() {
      return json('_modelHeadScores');
    },
    /** A problem for engine.run: that head (layers and heads from 1) on these tokens. */
    headProblem(layer, head, tokens) {
      checkHead('layer', layer);
      checkHead('head', head);
      return json('_modelHeadProblem', layer, head, tokensText(tokens));
    },
    /** The weights under the contract's keys (E, P, layers[l].W_Q, ..., U). */
    weights() {
      return json('_modelWeights');
    },
    /** { loss, logits, gradients } of a sequence or a batch; targets default to the next token. */
    gradients(tokens, targets) {
      return json('_modelGradients', tokensText(tokens), targets === undefined ? '' : asJson(targets, 'targets'));
    },
    /** One sequence: { tokens, logits, predictions, attention[layer][head] }; ablate: [[layer, head], ...]. */
    predict(tokens, settings = {}) {
      return json('_modelPredict', tokensText(tokens), ablateText(settings, 'predict'));
    },
    /** Frees the model's memory in the module now (it is freed when collected otherwise). */
    dispose() {
      if (disposed) return;
      disposed = true;
      collected?.unregister(model);
      module._modelDispose(id);
    },
  };
  collected?.register(model, { module, id }, model);
  return Object.freeze(model);
}

/** The tasks ({ name, description }) and presets ({ name, description, question, config, example }). */
export function modelCatalogue(module) {
  return JSON.parse(unwrap(module._modelCatalogue(), english));
}
