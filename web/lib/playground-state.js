// The playground's state and the actions that change it: pure functions (state, ...) -> state,
// so every rule here is tested in Node (tests/js/playground.test.mjs). The numbers come from the
// model (engine.model in a Worker); nothing here computes any.
import {
  PLAYGROUND_CHOICES,
  PLAYGROUND_LESSON_FORMAT,
  PLAYGROUND_LIMITS,
  check,
  playgroundChangesSchema,
  playgroundLessonSchema,
  playgroundStepSchema,
} from './formats.js';
import { english } from './i18n.js';

// The words a learner reads come from the catalogues (web/lib/locales, i18n.js): what this module
// writes into the state is a message ({ id, values }) with its English `text` beside it (the API's
// and the CLI's language); the views format the message in the learner's language.
const said = (id, values) => ({ id, values });

/** What a head's score must pass to be announced (message milestone.<score>: "layer 2 head 1 became an induction head"). */
export const MILESTONES = [
  { score: 'induction', threshold: 0.4 },
  { score: 'previous_token', threshold: 0.5 },
  { score: 'first_token', threshold: 0.5 },
];

/** The model fields a learner may change, with their choices or bounds (words: field.<key>.label and .hint in the catalogue). */
const L = PLAYGROUND_LIMITS;
export const FIELDS = [
  { key: 'layers', ...L.layers },
  { key: 'heads', ...L.heads },
  { key: 'd_model', ...L.d_model, step: 4 },
  { key: 'positions', choices: PLAYGROUND_CHOICES.positions },
  { key: 'mlp', ...L.mlp, step: 16 },
  { key: 'norm', choices: PLAYGROUND_CHOICES.norm },
];

/** The training fields: learning rate, seed and steps. */
export const TRAINING_FIELDS = [
  { key: 'lr', ...L.lr },
  { key: 'seed', ...L.seed },
  { key: 'steps', ...L.steps },
];

/**
 * A fresh state for a preset of the catalogue (its configuration, question and reveal).
 * @returns {import('./playground.js').PlaygroundState}
 */
export function initialState(catalogue, presetName, overrides = {}, lesson = null) {
  const preset = catalogue.presets.find((p) => p.name === presetName) ?? catalogue.presets[0];
  const config = mergeConfig(preset.config, overrides);
  // The questions asked before training: a lesson's, else the preset's own.
  const questions = lesson?.questions ?? (preset.reveal ? [{ text: preset.question, ...preset.reveal }] : []);
  return {
    catalogue,
    preset: preset.name,
    config,
    status: 'idle', // idle | playing | paused | done | replaying | error
    error: null,
    step: 0,
    target: null, // a step a link asked for: training runs to it, then pauses
    losses: [],
    evals: [],
    scores: null,
    milestones: [],
    probe: preset.example ? preset.example.tokens.slice() : [],
    prediction: null,
    ablated: [],
    ablatedEval: null, // { loss, accuracy, ablated }: the probe with the heads in `ablated` switched off
    selected: null,
    questions,
    answers: questions.map(() => null), // the learner's predictions, one per question
    revealed: questions.map(() => null), // what the run showed, one per question
    lesson: lesson ? { title: lesson.title ?? '', intro: lesson.intro ?? '', changes: lesson.changes ?? {} } : null,
    notice: null, // a message that is not an error (a link's damaged part left out)
  };
}

/** A configuration with `overrides` ({ model: {...}, optimizer: {...}, seed, steps, task }) laid over it. */
export function mergeConfig(config, overrides = {}) {
  const model = { ...config.model, ...overrides.model };
  // New heads or width: d_head and kv_heads follow them again (the model's defaults), as when
  // the fields are changed by hand.
  if (overrides.model && ('heads' in overrides.model || 'd_model' in overrides.model)) {
    if (!('d_head' in overrides.model)) delete model.d_head;
    if (!('kv_heads' in overrides.model)) model.kv_heads = model.heads;
  }
  return { ...config, ...overrides, model, optimizer: { ...config.optimizer, ...overrides.optimizer } };
}

/** The preset whose configuration this is, or null. */
export function presetOf(state) {
  return state.catalogue.presets.find((p) => p.name === state.preset) ?? null;
}

// ---- actions ------------------------------------------------------------------------------------

/** A preset chosen: its configuration, a fresh run. */
export function choosePreset(state, name) {
  return initialState(state.catalogue, name);
}

/** A model field changed (layers, heads, ...): a fresh run of the new configuration. */
export function setModelField(state, key, value) {
  return restart({ ...state, config: mergeConfig(state.config, { model: { [key]: value } }) });
}

/** lr, seed or steps changed. */
export function setTrainingField(state, key, value) {
  if (key === 'lr') return restart({ ...state, config: { ...state.config, optimizer: { ...state.config.optimizer, lr: value } } });
  return restart({ ...state, config: { ...state.config, [key]: value } });
}

/** The same configuration from step 0 (Reset). */
export function restart(state) {
  return {
    ...state,
    status: 'idle',
    error: null,
    notice: null,
    step: 0,
    target: null,
    losses: [],
    evals: [],
    scores: null,
    milestones: [],
    prediction: null,
    ablated: [],
    ablatedEval: null,
    revealed: state.questions.map(() => null),
    scoreHistory: [],
  };
}

export const play = (state) => (state.status === 'error' || state.step >= state.config.steps ? state : { ...state, status: 'playing' });
export const pause = (state) => (state.status === 'playing' || state.status === 'replaying' ? { ...state, status: 'paused' } : state);

/** A link's step: train to it, then pause (the progress bar shows the way). */
export const replayTo = (state, step) => ({
  ...state,
  target: Math.min(step, state.config.steps),
  status: step > 0 ? 'replaying' : state.status,
});

/** Weights loaded from a file: that configuration at that step, paused, the curves from there. */
export function loaded(state, config, step) {
  return { ...restart({ ...state, config }), step, status: 'paused' };
}

/**
 * The model could not be made or trained: the message (English), the core's message id and values
 * when it has them (errorSaid: the view says it in its language), and the run stops.
 */
export const failed = (state, message, said = null) => ({ ...state, status: 'error', error: message, errorSaid: said });

/** Training losses of the steps just taken. */
export function trained(state, losses, step) {
  let status = state.status;
  if (state.target !== null && step >= state.target) status = 'paused';
  else if (step >= state.config.steps) status = 'done';
  return { ...state, losses: state.losses.concat(losses), step, status, target: status === 'paused' ? null : state.target };
}

/**
 * New measurements at `step`: the evaluation, every head's scores, the probe's prediction (and with
 * heads switched off, their evaluation). Heads whose score first passes a milestone are announced;
 * the preset's question is answered when the run reveals it.
 */
export function measured(state, { step, evaluation, scores, prediction, ablatedEval = null }) {
  const milestones = state.milestones.slice();
  for (const s of scores ?? []) {
    for (const m of MILESTONES) {
      if (s[m.score] < m.threshold) continue;
      if (milestones.some((x) => x.layer === s.layer && x.head === s.head && x.score === m.score)) continue;
      const message = said(`milestone.${m.score}`, { layer: s.layer, head: s.head, step });
      milestones.push({ step, layer: s.layer, head: s.head, score: m.score, text: english.message(message), message });
    }
  }
  const evals =
    state.evals.length && state.evals[state.evals.length - 1].step === step ? state.evals : state.evals.concat([{ step, ...evaluation }]);
  const scoreHistory =
    scores && state.questions.some((q) => q.score) ? (state.scoreHistory ?? []).concat([{ step, scores }]) : state.scoreHistory;
  const next = { ...state, evals, scores, prediction, ablatedEval, milestones, scoreHistory };
  return { ...next, revealed: state.questions.map((q, i) => state.revealed[i] ?? reveal(next, q)) };
}

/**
 * What the run has shown about question `r` ({ choose, score, threshold } or { choose: 'yes_no', accuracy }),
 * or null while it is open: { answer, text, message } (text: English; message: for the views).
 */
export function reveal(state, r) {
  const shown = (answer, id, values) => ({ answer, text: english(id, values), message: said(id, values) });
  if (r.choose === 'yes_no') {
    const best = Math.max(0, ...state.evals.map((e) => e.accuracy ?? 0));
    if (best > r.accuracy) {
      const at = state.evals.find((e) => (e.accuracy ?? 0) > r.accuracy).step;
      return shown('yes', 'reveal.yes', { percent: Math.round(r.accuracy * 100), step: at });
    }
    if (state.step >= state.config.steps) return shown('no', 'reveal.no', { steps: state.step, percent: Math.round(best * 100) });
    return null;
  }
  const first = firstPassing(state, r);
  if (!first) {
    if (state.step >= state.config.steps) return shown('none', 'reveal.none', { threshold: r.threshold, steps: state.step });
    return null;
  }
  const answer = r.choose === 'layer' ? `layer ${first.layer}` : `layer ${first.layer} head ${first.head}`;
  return shown(answer, 'reveal.found', { answer: choiceMessage(answer), event: first.message });
}

/** A choice's words ('yes', 'no', 'layer 2', 'layer 2 head 1': the answers' values) as a message. */
export function choiceMessage(choice) {
  const [, layer, head] = /^layer (\d+)(?: head (\d+))?$/.exec(choice) ?? [];
  if (head) return said('choice.head', { layer: Number(layer), head: Number(head) });
  if (layer) return said('choice.layer', { layer: Number(layer) });
  return said(`choice.${choice}`);
}

/** The first head (in the order measured) whose `r.score` passed `r.threshold`, as a milestone. */
function firstPassing(state, r) {
  const known = MILESTONES.find((m) => m.score === r.score && m.threshold === r.threshold);
  if (known) return state.milestones.find((m) => m.score === r.score) ?? null;
  // A lesson's own threshold: looked for in every measurement since the question was asked.
  for (const e of state.scoreHistory ?? []) {
    const s = e.scores.find((x) => x[r.score] >= r.threshold);
    if (s)
      return {
        step: e.step,
        layer: s.layer,
        head: s.head,
        message: said('milestone.passed', {
          layer: s.layer,
          head: s.head,
          score: said(`score.${r.score}`),
          threshold: r.threshold,
          step: e.step,
        }),
      };
  }
  return null;
}

/** The learner's prediction for question `index` before training (a layer, a head, yes or no). */
export const answered = (state, index, choice) => ({ ...state, answers: state.answers.map((a, i) => (i === index ? choice : a)) });

/**
 * A playground lesson file's text: { lesson } checked against its schema (formats.js), or
 * { error, message } naming the field: `error` in English, `message` the same as a message for
 * any language. `where` names the file or address in the message.
 * @type {typeof import('./playground.js').readPlaygroundLesson}
 */
/** { error, message }: a message ({ id, values }) and its English. */
const refused = (id, values) => ({ error: english(id, values), message: said(id, values) });

export function readPlaygroundLesson(text, catalogue, where = 'the lesson') {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return refused('lesson.not-json', { where, error: error.message });
  }
  const checked = check(playgroundLessonSchema, parsed);
  if (checked.error) return refused('lesson.invalid', { where, reason: checked.message });
  if (!catalogue.presets.some((p) => p.name === checked.value.preset)) {
    return refused('playground.lesson.preset', {
      where,
      preset: JSON.stringify(checked.value.preset),
      presets: catalogue.presets.map((p) => p.name).join(', '),
    });
  }
  return { lesson: checked.value };
}

/**
 * A lesson file: this state's preset, its changes from it, its questions and the lesson's words.
 * @type {typeof import('./playground.js').lessonOf}
 */
export function lessonOf(state, { title, intro } = {}) {
  const params = new URLSearchParams(linkOf(state).slice(1));
  return {
    format: PLAYGROUND_LESSON_FORMAT,
    version: 1,
    title: title ?? state.lesson?.title ?? '',
    intro: intro ?? state.lesson?.intro ?? '',
    preset: state.preset,
    changes: params.has('c') ? JSON.parse(params.get('c')) : {},
    questions: state.questions,
  };
}

/**
 * A lesson opened: its preset and changes from step 0, its questions asked.
 * @type {typeof import('./playground.js').openLesson}
 */
export const openLesson = (state, lesson) => initialState(state.catalogue, lesson.preset, lesson.changes ?? {}, lesson);

/** A head clicked: switched off (ablated) or back on. */
export function toggleAblation(state, layer, head) {
  const on = state.ablated.some(([l, h]) => l === layer && h === head);
  const ablated = on ? state.ablated.filter(([l, h]) => !(l === layer && h === head)) : state.ablated.concat([[layer, head]]);
  return { ...state, ablated, ablatedEval: ablated.length ? state.ablatedEval : null };
}

export const selectHead = (state, layer, head) => ({ ...state, selected: layer === null ? null : { layer, head } });

/** The probe sequence edited (checked against the vocabulary and the context by the caller). */
export const setProbe = (state, tokens) => ({ ...state, probe: tokens, prediction: null });

/**
 * A probe typed as tokens ("3 14 15 9", commas allowed) or, for the text task, as characters of
 * its alphabet. Returns { tokens } or { error, message } naming what is wrong (error: English).
 */
export function parseProbe(text, { vocab, context, alphabet }) {
  const wrong = (id, values) => ({ error: english(id, values), message: said(id, values) });
  let tokens;
  if (alphabet) {
    tokens = [];
    for (const ch of text) {
      const i = alphabet.indexOf(ch);
      if (i < 0) return wrong('probe.notInAlphabet', { character: ch, alphabet: alphabet.join('') });
      tokens.push(i);
    }
  } else {
    const parts = text
      .trim()
      .split(/[\s,]+/)
      .filter(Boolean);
    tokens = parts.map(Number);
    const bad = parts.findIndex((p, i) => !/^\d+$/.test(p) || tokens[i] >= vocab);
    if (bad >= 0) return wrong('probe.notToken', { index: bad + 1, part: parts[bad], max: vocab - 1 });
  }
  if (tokens.length === 0) return wrong('probe.empty');
  if (tokens.length > context) return wrong('probe.tooLong', { count: tokens.length, context });
  return { tokens };
}

// ---- the link: configuration, seed and step ------------------------------------------------------

/**
 * "#p=<preset>&c=<changes as JSON>&step=N": what a link holds (only what differs from the preset).
 * @type {typeof import('./playground.js').linkOf}
 */
export function linkOf(state) {
  const preset = presetOf(state);
  const base = preset.config;
  const changes = {};
  const model = {};
  for (const [k, v] of Object.entries(state.config.model)) if (base.model[k] !== v && k !== 'd_head' && k !== 'kv_heads') model[k] = v;
  if (Object.keys(model).length) changes.model = model;
  if (state.config.optimizer.lr !== base.optimizer.lr) changes.optimizer = { lr: state.config.optimizer.lr };
  for (const k of ['seed', 'steps']) if (state.config[k] !== base[k]) changes[k] = state.config[k];
  const params = new URLSearchParams({ p: state.preset });
  if (Object.keys(changes).length) params.set('c', JSON.stringify(changes));
  if (state.step > 0) params.set('step', String(state.step));
  return `#${params}`;
}

/**
 * Reads a link's hash. Returns { preset, overrides, step, error }: each part (p=, c=, step=) is
 * checked against its schema (formats.js); a damaged part is left out with a message naming the
 * field (`error` in English, and then `message`, the same for any language), and the rest still applies. The configuration is then checked by the model itself.
 * @type {typeof import('./playground.js').readLink}
 */
/** A message of a playground link's reading: playground.link.<name>. */
const linkPart = (name, values = {}) => ({ id: `playground.link.${name}`, values });

export function readLink(hash, catalogue) {
  const out = { preset: catalogue.presets[0].name, overrides: {}, step: 0, error: null };
  const params = new URLSearchParams(String(hash ?? '').replace(/^#/, ''));
  const problems = [];
  const preset = params.get('p');
  if (preset !== null) {
    if (catalogue.presets.some((p) => p.name === preset)) out.preset = preset;
    else
      problems.push(
        linkPart('no-preset', { preset: JSON.stringify(preset.slice(0, 40)), presets: catalogue.presets.map((p) => p.name).join(', ') }),
      );
  }
  const changes = params.get('c');
  if (changes !== null) {
    let parsed;
    try {
      parsed = JSON.parse(changes);
    } catch {
      parsed = undefined;
    }
    const checked = parsed === undefined ? { error: true, message: linkPart('not-json') } : check(playgroundChangesSchema, parsed);
    if (checked.error) problems.push(linkPart('changes', { reason: checked.message }));
    else out.overrides = checked.value;
  }
  const step = params.get('step');
  if (step !== null) {
    const checked = /^\d+$/.test(step)
      ? check(playgroundStepSchema, Number(step))
      : { error: true, message: linkPart('not-whole', { value: JSON.stringify(step.slice(0, 20)) }) };
    if (checked.error) problems.push(linkPart('step', { reason: checked.message }));
    else out.step = checked.value;
  }
  if (problems.length) {
    const all = problems.reduceRight((tail, head) => (tail ? linkPart('join', { head, tail }) : head), null);
    out.message = linkPart('damaged', { problems: all });
    out.error = english.message(out.message);
  }
  return out;
}
