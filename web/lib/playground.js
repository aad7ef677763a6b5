// The attention playground: train a small transformer in a Worker and watch its heads form, switch
// heads off, and open any head in the explorer. One store (store.js) holds the state; the actions
// are playground-state.js's pure functions; each view below mounts on its own element, subscribes
// to the part it draws and dispatches actions; the trainer is an effect subscribed like a view.
// Used by the page (web/page/playground.html) and by the <attention-playground> element.
// Every word comes from the catalogue of the learner's language (i18n.js): each view gets `t`.
// Curves, heatmaps and token sequences stay left to right in a right-to-left language (dir="ltr").
import { colourLut } from './colours.js';
import { connectModelWorker } from './model-client.js';
import { errorWords, loadTranslator, negotiate } from './i18n.js';
import {
  FIELDS,
  TRAINING_FIELDS,
  answered,
  choiceMessage,
  choosePreset,
  failed,
  initialState,
  loaded,
  measured,
  pause,
  play,
  presetOf,
  readLink,
  replayTo,
  restart,
  setModelField,
  setProbe,
  setTrainingField,
  parseProbe,
  toggleAblation,
  trained,
} from './playground-state.js';
import { check, playgroundWeightsSchema } from './formats.js';
import { PLAYGROUND_CSS } from './playground-css.js';
import { createStore } from './store.js';

export { lessonOf, linkOf, openLesson, readLink, readPlaygroundLesson } from './playground-state.js';
export { LANGUAGES, dirOf, loadTranslator, negotiate } from './i18n.js';

/** An element with attributes (on* are listeners) and children (strings become text: never HTML). */
/** A core error's message id and values (for errorWords in the page's language), or null. */
const saidOf = (error) => (error?.message_id ? { message_id: error.message_id, values: error.values } : null);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  node.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

const percent = (x) => (x === null || x === undefined || Number.isNaN(x) ? '–' : `${Math.round(x * 100)}%`);
const fixed = (x, d = 3) => (x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(d));

/** Token names: a text task's characters (a space shown as ␣), else the token numbers. */
function tokenNames(state) {
  const alphabet = presetExample(state)?.alphabet;
  return alphabet ? (t) => (alphabet[t] === ' ' ? '␣' : alphabet[t]) : (t) => String(t);
}
const presetExample = (state) => presetOf(state)?.example ?? null;

// ---- views ----------------------------------------------------------------------------------------

/** A preset's words (title, description, question) from the catalogue; the core's English for a preset it does not know. */
const presetWords = (t, preset, part, fallback) => (t.has(`preset.${preset}.${part}`) ? t(`preset.${preset}.${part}`) : fallback);

function lessonView(root, store, t) {
  const select = el('select', { id: 'pg-preset', onchange: (e) => store.dispatch(choosePreset, e.target.value) });
  const description = el('p', { class: 'pg-hint' });
  const example = el('div', { class: 'pg-tokens', dir: 'ltr', 'aria-label': t('task.example') });
  root.append(el('label', { for: 'pg-preset', class: 'pg-label' }, t('task.label')), select, description, example);
  store.subscribe(
    (s) => s.preset,
    (name, s) => {
      select.replaceChildren(
        ...s.catalogue.presets.map((p) =>
          el('option', { value: p.name, selected: p.name === name }, presetWords(t, p.name, 'title', p.name)),
        ),
      );
      const preset = presetOf(s);
      description.textContent = presetWords(t, preset.name, 'description', preset.description);
      const names = tokenNames(s);
      example.replaceChildren(
        ...(preset.example?.tokens ?? []).map((token, i) =>
          el(
            'span',
            {
              class: 'pg-token',
              title:
                preset.example.targets[i] >= 0 ? t('task.predictNext', { token: names(preset.example.targets[i]) }) : t('task.noTarget'),
            },
            names(token),
          ),
        ),
      );
    },
  );
}

function questionView(root, store, t) {
  const intro = el('div', { class: 'pg-lesson' });
  const box = el('div', { class: 'pg-questions' });
  root.append(intro, box);
  store.subscribe(
    (s) => s.lesson,
    (lesson) => {
      intro.replaceChildren(...(lesson ? [lesson.title && el('h2', {}, lesson.title), lesson.intro && el('p', {}, lesson.intro)] : []));
    },
  );
  store.subscribe(
    (s) => [s.questions, s.answers, s.revealed, s.step > 0, s.config.model.layers, s.config.model.heads],
    (_, s) => {
      const { layers, heads } = s.config.model;
      const preset = presetOf(s);
      box.replaceChildren(
        ...s.questions.map((q, index) => {
          let choices;
          if (q.choose === 'yes_no') choices = ['yes', 'no'];
          else if (q.choose === 'layer') choices = Array.from({ length: layers }, (_, l) => `layer ${l + 1}`);
          else choices = Array.from({ length: layers * heads }, (_, i) => `layer ${Math.floor(i / heads) + 1} head ${(i % heads) + 1}`);
          const answer = s.answers[index];
          const revealed = s.revealed[index];
          const id = `pg-question-${index}`;
          const buttons = choices.map((c) =>
            el(
              'button',
              {
                type: 'button',
                'aria-pressed': String(answer === c),
                disabled: revealed !== null || s.step > 0,
                onclick: () => store.dispatch(answered, index, c),
              },
              t.message(choiceMessage(c)),
            ),
          );
          let outcome;
          if (revealed) {
            const said = revealed.message ? t.message(revealed.message) : revealed.text;
            const words =
              answer === null
                ? said
                : answer === revealed.answer
                  ? t('question.right', { outcome: said })
                  : t('question.wrong', { answer: choiceMessage(answer), outcome: said });
            outcome = el('p', { class: 'pg-revealed' }, words);
          } else if (answer) outcome = el('p', { class: 'pg-hint' }, t('question.yourPrediction', { answer: choiceMessage(answer) }));
          else outcome = el('p', { class: 'pg-hint' }, t('question.predictFirst'));
          // The preset's own question as the core words it: the catalogue's; a lesson's: as written.
          const text = preset && q.text === preset.question ? presetWords(t, preset.name, 'question', q.text) : q.text;
          return el(
            'div',
            { class: 'pg-question', role: 'group', 'aria-labelledby': id },
            el('p', { id, class: 'pg-question-text' }, text),
            el('div', { class: 'pg-choices' }, buttons),
            outcome,
          );
        }),
      );
    },
  );
}

function fieldsView(root, store, t) {
  const inputs = new Map();
  const field = (f, read, write) => {
    const id = `pg-${f.key}`;
    const input = f.choices
      ? el(
          'select',
          { id },
          f.choices.map((c) => el('option', { value: c }, t(`option.${f.key}.${c}`))),
        )
      : el('input', { id, type: 'number', min: f.min, max: f.max, step: f.step ?? (f.key === 'lr' ? 'any' : 1), inputmode: 'decimal' });
    input.addEventListener('change', () => {
      const value = f.choices ? input.value : Number(input.value);
      if (!f.choices && !(Number.isFinite(value) && value >= f.min && value <= f.max)) {
        input.setCustomValidity(t('fields.invalid', { label: t(`field.${f.key}.label`), min: f.min, max: f.max }));
        input.reportValidity();
        return;
      }
      input.setCustomValidity('');
      store.dispatch(write, f.key, value);
    });
    inputs.set(f.key, { input, read });
    return el(
      'div',
      { class: 'pg-field' },
      el('label', { for: id }, t(`field.${f.key}.label`)),
      input,
      el('p', { class: 'pg-hint', id: `${id}-hint` }, t(`field.${f.key}.hint`)),
    );
  };
  const model = FIELDS.map((f) => field(f, (s) => s.config.model[f.key], setModelField));
  const training = TRAINING_FIELDS.map((f) =>
    field(f, (s) => (f.key === 'lr' ? s.config.optimizer.lr : s.config[f.key]), setTrainingField),
  );
  for (const { input } of inputs.values()) input.setAttribute('aria-describedby', `${input.id}-hint`);
  // Open beside the heads on a wide screen; folded on a phone, where it would push them far down.
  const wide = globalThis.matchMedia?.('(min-width: 761px)').matches ?? true;
  root.append(
    el(
      'details',
      { class: 'pg-fields', open: wide },
      el('summary', {}, t('fields.summary')),
      el('div', { class: 'pg-grid' }, model, training),
    ),
  );
  store.subscribe(
    (s) => s.config,
    (_, s) => {
      for (const { input, read } of inputs.values()) if (document.activeElement !== input) input.value = String(read(s));
    },
  );
}

function buttonsView(root, store, trainer, t) {
  const playButton = el(
    'button',
    { type: 'button', class: 'pg-primary', onclick: () => store.dispatch(store.get().status === 'playing' ? pause : play) },
    t('button.play'),
  );
  const stepButton = el('button', { type: 'button', onclick: () => trainer.step() }, t('button.step'));
  const resetButton = el('button', { type: 'button', onclick: () => store.dispatch(restart) }, t('button.reset'));
  const progress = el('progress', { class: 'pg-progress', max: 1, value: 0, hidden: true, 'aria-label': t('button.progress') });
  root.append(el('div', { class: 'pg-buttons' }, playButton, stepButton, resetButton), progress);
  store.subscribe(
    (s) => [s.status, s.target, s.step],
    (_, s) => {
      const label = t(s.status === 'playing' || s.status === 'replaying' ? 'button.pause' : 'button.play');
      if (playButton.textContent !== label) playButton.textContent = label; // a new text node, laid out again
      playButton.disabled = s.status === 'error' || s.step >= s.config.steps;
      stepButton.disabled = s.status === 'playing' || s.status === 'replaying' || s.status === 'error' || s.step >= s.config.steps;
      progress.hidden = s.status !== 'replaying';
      if (s.target) {
        progress.max = s.target;
        progress.value = s.step;
      }
    },
  );
}

/** #playground-status: the step, loss and accuracy (data-* for tests); milestones are announced. */
function statusView(root, store, t) {
  const line = el('p', { id: 'playground-status', class: 'pg-status' });
  const live = el('p', { class: 'pg-live', 'aria-live': 'polite' });
  const error = el('p', { class: 'pg-error', role: 'alert', hidden: true });
  root.append(line, live, error);
  store.subscribe(
    (s) => [s.step, s.evals, s.status],
    (_, s) => {
      const last = s.evals[s.evals.length - 1];
      const loss = s.losses.length ? s.losses[s.losses.length - 1] : null;
      line.dataset.step = String(s.step);
      line.dataset.loss = loss === null ? '' : String(loss);
      line.dataset.accuracy = last?.accuracy === undefined || last.accuracy === null ? '' : String(last.accuracy);
      line.dataset.status = s.status;
      line.textContent = t('status.line', {
        step: s.step,
        steps: s.config.steps,
        loss: fixed(loss),
        probeLoss: fixed(last?.loss),
        accuracy: percent(last?.accuracy),
      });
    },
  );
  store.subscribe(
    (s) => s.milestones,
    (_, s) => {
      const m = s.milestones[s.milestones.length - 1];
      const event = m ? t('live.milestone', { event: m.message }) : '';
      live.textContent = `${event.slice(0, 1).toLocaleUpperCase(t.lang)}${event.slice(1)}`;
    },
  );
  store.subscribe(
    (s) => [s.error, s.notice],
    (_, s) => {
      const message = s.error !== null && s.error !== undefined ? errorWords({ message: s.error, ...s.errorSaid }, t) : s.notice;
      error.hidden = !message;
      error.textContent = message ?? '';
    },
  );
}

/** The loss (left scale) and the probe accuracy (right, 0–1) against the step. */
function curvesView(root, store, t) {
  const canvas = el('canvas', { class: 'pg-curves', dir: 'ltr', role: 'img', 'aria-label': t('curves.label') });
  root.append(
    el('h2', {}, t('curves.heading')),
    canvas,
    el(
      'p',
      { class: 'pg-legend' },
      el('span', { class: 'pg-key pg-key-loss' }),
      t('curves.loss'),
      ' ',
      el('span', { class: 'pg-key pg-key-accuracy' }),
      t('curves.accuracy'),
    ),
  );
  const draw = (s) => {
    const ratio = globalThis.devicePixelRatio || 1;
    const width = canvas.clientWidth || 320,
      height = canvas.clientHeight || 160;
    // A canvas given its size, even the same, gets a new bitmap: only when it changed.
    if (canvas.width !== Math.round(width * ratio)) canvas.width = Math.round(width * ratio);
    if (canvas.height !== Math.round(height * ratio)) canvas.height = Math.round(height * ratio);
    const c = canvas.getContext('2d');
    c.setTransform(ratio, 0, 0, ratio, 0, 0);
    c.clearRect(0, 0, width, height);
    const pad = 6,
      steps = Math.max(1, s.config.steps);
    const x = (step) => pad + ((width - 2 * pad) * step) / steps;
    const top = Math.max(1e-9, ...s.losses.slice(0, 50), ...s.evals.map((e) => e.loss).filter(Number.isFinite));
    const yLoss = (v) => height - pad - ((height - 2 * pad) * Math.min(v, top)) / top;
    const yAcc = (v) => height - pad - (height - 2 * pad) * v;
    c.lineWidth = 1.5;
    c.strokeStyle = '#2563eb';
    c.beginPath();
    // One point per pixel column: the mean of the steps it covers.
    const per = Math.max(1, Math.floor(s.losses.length / (width - 2 * pad)));
    for (let i = 0; i < s.losses.length; i += per) {
      const chunk = s.losses.slice(i, i + per);
      const v = chunk.reduce((a, b) => a + b, 0) / chunk.length;
      if (i === 0) c.moveTo(x(i + 1), yLoss(v));
      else c.lineTo(x(i + chunk.length), yLoss(v));
    }
    c.stroke();
    c.strokeStyle = '#c2410c';
    c.beginPath();
    s.evals.forEach((e, i) => (i === 0 ? c.moveTo(x(e.step), yAcc(e.accuracy ?? 0)) : c.lineTo(x(e.step), yAcc(e.accuracy ?? 0))));
    c.stroke();
    for (const m of s.milestones) {
      c.fillStyle = '#15803d';
      c.fillRect(x(m.step) - 1, pad, 2, height - 2 * pad);
    }
  };
  store.subscribe(
    (s) => [s.losses, s.evals, s.milestones, s.config.steps],
    (_, s) => draw(s),
  );
  new ResizeObserver(() => draw(store.get())).observe(canvas);
}

/** Every layer × head: its weights on the probe as a heatmap (0–1), its score badges, switch off, open. */
function headsView(root, store, trainer, t) {
  // Left to right in every language: layer 1 head 1 first, as the heatmaps' own rows and columns.
  const grid = el('div', { class: 'pg-heads', dir: 'ltr', role: 'list' });
  const ablation = el('p', { class: 'pg-ablation', 'aria-live': 'polite' });
  root.append(el('h2', {}, t('heads.heading')), el('p', { class: 'pg-hint' }, t('heads.hint')), grid, ablation);
  const cards = new Map();
  const card = (layer, head) => {
    const canvas = el('canvas', { class: 'pg-map', dir: 'ltr', width: 1, height: 1 });
    const badges = el('p', { class: 'pg-badges' });
    const off = el('button', { type: 'button', class: 'pg-off', onclick: () => store.dispatch(toggleAblation, layer, head) });
    const open = el(
      'button',
      { type: 'button', hidden: !trainer.canOpen, onclick: () => trainer.openInExplorer(layer, head) },
      t('head.open'),
    );
    // The card's words in the learner's direction; its map stays left to right (the canvas's dir).
    const node = el(
      'div',
      { class: 'pg-head', dir: t.dir, role: 'listitem', dataset: { layer, head } },
      el('h3', {}, t('head.title', { layer, head })),
      canvas,
      badges,
      el('div', { class: 'pg-head-buttons' }, off, open),
    );
    cards.set(`${layer}.${head}`, { node, canvas, badges, off, open });
    return node;
  };
  store.subscribe(
    (s) => `${s.config.model.layers}x${s.config.model.heads}`,
    (_, s) => {
      cards.clear();
      const { layers, heads } = s.config.model;
      grid.style.setProperty('--heads', heads);
      grid.replaceChildren(...Array.from({ length: layers * heads }, (_, i) => card(Math.floor(i / heads) + 1, (i % heads) + 1)));
    },
  );
  store.subscribe(
    (s) => [s.prediction, s.scores, s.ablated, s.status],
    (_, s) => {
      const lut = colourLut([[0, 1]], 'probability');
      for (const [key, c] of cards) {
        const [layer, head] = key.split('.').map(Number);
        const weights = s.prediction?.attention?.[layer - 1]?.[head - 1];
        if (weights) {
          const n = weights.length;
          c.canvas.width = n;
          c.canvas.height = n;
          const ctx = c.canvas.getContext('2d');
          const image = ctx.createImageData(n, n);
          for (let i = 0; i < n; i++) {
            for (let j = 0; j < n; j++) {
              const k = lut.index(weights[i][j]);
              const o = (i * n + j) * 4;
              if (k < 0) continue;
              image.data[o] = lut.lut[k * 3];
              image.data[o + 1] = lut.lut[k * 3 + 1];
              image.data[o + 2] = lut.lut[k * 3 + 2];
              image.data[o + 3] = 255;
            }
          }
          ctx.putImageData(image, 0, 0);
        }
        const score = s.scores?.find((x) => x.layer === layer && x.head === head);
        c.badges.replaceChildren(
          ...(score
            ? [
                ['badge.previous', score.previous_token],
                ['badge.induction', score.induction],
                ['badge.first', score.first_token],
              ].map(([id, v]) =>
                el(
                  'span',
                  { class: `pg-badge${v >= 0.4 ? ' pg-badge-on' : ''}`, title: t('badge.title', { name: t(id) }) },
                  t('badge.text', { name: t(id), value: fixed(v, 2) }),
                ),
              )
            : []),
        );
        const isOff = s.ablated.some(([l, h]) => l === layer && h === head);
        c.node.classList.toggle('pg-head-off', isOff);
        c.off.textContent = t(isOff ? 'head.switchOn' : 'head.switchOff');
        c.off.setAttribute('aria-pressed', String(isOff));
        c.open.disabled = s.status === 'playing' || s.status === 'replaying';
        c.open.title = c.open.disabled ? t('head.pauseFirst') : t('head.openTitle', { layer, head });
      }
    },
  );
  store.subscribe(
    (s) => [s.ablatedEval, s.ablated, s.evals],
    (_, s) => {
      const last = s.evals[s.evals.length - 1];
      // Until the heads now switched off are measured, nothing (not another switch's numbers).
      if (!s.ablated.length || s.ablatedEval?.ablated !== s.ablated || !last) return (ablation.textContent = '');
      const heads = t.list(s.ablated.map(([layer, head]) => t('choice.head', { layer, head })));
      ablation.textContent = t('ablation.line', {
        heads,
        loss: fixed(s.ablatedEval.loss),
        lossOn: fixed(last.loss),
        accuracy: percent(s.ablatedEval.accuracy),
        accuracyOn: percent(last.accuracy),
      });
    },
  );
}

/** The probe sequence (editable) and the model's prediction of each next token. */
function probeView(root, store, t) {
  const input = el('input', { id: 'pg-probe', type: 'text', dir: 'ltr', spellcheck: 'false', autocomplete: 'off' });
  const error = el('p', { class: 'pg-error', role: 'alert', hidden: true });
  const row = el('div', { class: 'pg-predictions', dir: 'ltr', role: 'table', 'aria-label': t('probe.table') });
  root.append(el('h2', {}, t('probe.heading')), el('label', { for: 'pg-probe', class: 'pg-label' }, t('probe.label')), input, error, row);
  input.addEventListener('change', () => {
    const s = store.get();
    const alphabet = presetExample(s)?.alphabet;
    const r = parseProbe(input.value, { vocab: s.config.model.vocab, context: s.config.model.context, alphabet });
    error.hidden = !r.error;
    error.textContent = r.message ? t.message(r.message) : '';
    if (r.tokens) store.dispatch(setProbe, r.tokens);
  });
  store.subscribe(
    (s) => s.probe,
    (probe, s) => {
      if (document.activeElement === input) return;
      const alphabet = presetExample(s)?.alphabet;
      input.value = alphabet ? probe.map((token) => alphabet[token]).join('') : probe.join(' ');
    },
  );
  store.subscribe(
    (s) => s.prediction,
    (prediction, s) => {
      const names = tokenNames(s);
      const example = presetExample(s);
      const sameAsExample = example && example.tokens.length === s.probe.length && example.tokens.every((token, i) => token === s.probe[i]);
      row.replaceChildren(
        ...s.probe.map((token, i) => {
          const predicted = prediction?.predictions?.[i];
          const target = sameAsExample ? example.targets[i] : i + 1 < s.probe.length ? s.probe[i + 1] : -1;
          const verdict = predicted === undefined || target < 0 ? '' : predicted === target ? ' pg-right' : ' pg-wrong';
          return el(
            'div',
            { class: `pg-cell${verdict}`, role: 'row' },
            el('span', { class: 'pg-token', role: 'cell' }, names(token)),
            el(
              'span',
              { class: 'pg-next', role: 'cell', title: target >= 0 ? t('probe.expected', { token: names(target) }) : t('probe.nothing') },
              predicted === undefined ? '·' : names(predicted),
            ),
          );
        }),
      );
    },
  );
}

// ---- the trainer: an effect between the store and the Worker ------------------------------------

function createTrainer(store, remote, { explorerUrl, linkFor, lang }) {
  let generation = 0; // bumps when the configuration changes: replies for an older model are dropped
  let busy = false;
  // When the last measurement and the last head scores were taken, and what each took (ms).
  let lastMeasure = 0;
  let lastScores = 0;
  let measureCost = 0;
  let measuring = 0; // measurements in flight
  let scoresCost = 0;
  let scoresAccuracy = NaN; // the probe's accuracy when the head scores were taken
  let chunk = 5;

  const configKey = (s) => JSON.stringify(s.config);
  let madeFor = null;

  async function ensureModel() {
    const s = store.get();
    if (madeFor === configKey(s)) return true;
    const mine = ++generation;
    try {
      await remote.create(s.config);
    } catch (error) {
      if (mine === generation) store.dispatch(failed, error.message, saidOf(error));
      return false;
    }
    if (mine !== generation) return false;
    madeFor = configKey(s);
    return true;
  }

  /**
   * The model measured at this step: the probe's evaluation and prediction (the accuracy curve, the
   * heads' maps, the predictions) and, unless `scores` is false (the last ones then stay), every
   * head's scores (the badges and milestones; with the induction preset 25 of the ~36 ms). The
   * scores are taken anyway when the accuracy moved by more than 0.05 since the last ones: heads
   * form while it does, and a milestone is dated by the step its scores were taken at.
   */
  async function measure(options = {}) {
    measuring++;
    try {
      await measureOnce(options);
    } finally {
      measuring--;
    }
  }
  async function measureOnce({ scores: withScores = true } = {}) {
    const started = performance.now();
    const mine = generation;
    const s = store.get();
    const [evaluation, prediction] = await Promise.all([
      remote.evaluate(),
      remote.predict(s.probe, s.ablated.length ? { ablate: s.ablated } : undefined),
    ]);
    const ablatedEval = s.ablated.length ? await remote.evaluate({ ablate: s.ablated }) : null;
    const evaluated = performance.now();
    const fresh = withScores || Math.abs(evaluation.accuracy - scoresAccuracy) > 0.05;
    const scores = fresh ? await remote.headScores() : store.get().scores;
    if (mine !== generation) return;
    store.dispatch(measured, {
      step: store.get().step,
      evaluation: { loss: evaluation.loss, accuracy: evaluation.accuracy },
      scores,
      prediction,
      ablatedEval: ablatedEval && { loss: ablatedEval.loss, accuracy: ablatedEval.accuracy, ablated: s.ablated },
    });
    lastMeasure = performance.now();
    measureCost = evaluated - started;
    if (fresh) {
      lastScores = lastMeasure;
      scoresCost = lastMeasure - evaluated;
      scoresAccuracy = evaluation.accuracy;
    }
    // The probe or the heads switched off changed while this measurement ran (it skipped
    // measuring them, see below): measure what is on screen now.
    const now = store.get();
    if (now.probe !== s.probe || now.ablated !== s.ablated) await measureOnce({ scores: withScores });
  }

  async function run() {
    if (busy) return;
    busy = true;
    try {
      if (!(await ensureModel())) return;
      await measure();
      for (;;) {
        const s = store.get();
        if (s.status !== 'playing' && s.status !== 'replaying') break;
        const mine = generation;
        const limit = s.target ?? s.config.steps;
        const n = Math.max(1, Math.min(chunk, limit - s.step));
        const started = performance.now();
        const losses = await remote.train(n);
        if (mine !== generation) break;
        // Chunks of about 100 ms of the Worker's time: the step, loss and curves are drawn about ten
        // times a second. (Chunks of 40 ms drew 25 times a second, and the page's threads drawing
        // took about 30% of a core, which the Worker lost on a busy 2-core machine:
        // bench/playground.mjs.)
        const took = performance.now() - started;
        chunk = Math.max(1, Math.min(500, Math.round(n * (100 / Math.max(1, took)))));
        store.dispatch(trained, losses, s.step + losses.length);
        const now = store.get();
        // Measuring costs the Worker's time: all of it every 300 ms took 9-16% (bench/playground.mjs).
        // While training: the evaluation and prediction every 300 ms, the head scores every second
        // (and while the accuracy moves), each less often when it would take more than 3% of the
        // Worker's time (the evaluation at least once a second); all of it at every stop. (A link
        // retraining to its step measured everything after every chunk of steps: half its time.)
        const t = performance.now();
        if (now.status !== 'playing' && now.status !== 'replaying') await measure();
        else if (t - lastMeasure > Math.max(300, Math.min(1000, 32 * measureCost)))
          await measure({ scores: t - lastScores > Math.max(1000, 32 * scoresCost) });
      }
    } catch (error) {
      store.dispatch(failed, error.message, saidOf(error));
    } finally {
      busy = false;
      // What happened meanwhile: a new configuration (its model is not made yet), or Play.
      const s = store.get();
      const stale = madeFor !== configKey(s) && s.status !== 'error';
      if (stale || ((s.status === 'playing' || s.status === 'replaying') && madeFor === configKey(s))) queueMicrotask(run);
    }
  }

  // Subscribed like a view: a new configuration makes a new model; Play starts the loop; a new
  // probe or ablation is measured again.
  store.subscribe(
    (s) => s.config,
    (_, s) => {
      if (madeFor === configKey(s)) return; // loadWeights made this model already
      madeFor = null;
      generation++;
      void run();
    },
  );
  store.subscribe(
    (s) => s.step === 0 && s.losses.length === 0 && s.status === 'idle',
    (fresh) => {
      if (fresh && madeFor !== null) {
        madeFor = null; // Reset: the same configuration from its first weights
        generation++;
        void run();
      }
    },
  );
  store.subscribe(
    (s) => s.status,
    (status) => {
      if (status === 'playing' || status === 'replaying') void run();
    },
  );
  store.subscribe(
    (s) => [s.probe, s.ablated],
    () => {
      // While training or measuring, the measurement in flight measures these again when it ends.
      if (!busy && !measuring && madeFor !== null) void measure().catch((error) => store.dispatch(failed, error.message, saidOf(error)));
    },
  );

  return {
    canOpen: Boolean(explorerUrl),
    async step() {
      if (busy) return;
      busy = true;
      try {
        if (!(await ensureModel())) return;
        const s = store.get();
        const losses = await remote.train(1);
        store.dispatch(trained, losses, s.step + 1);
        await measure();
      } catch (error) {
        store.dispatch(failed, error.message, saidOf(error));
      } finally {
        busy = false;
      }
    },
    /** { model, weights, config, step }: a file `train`'s --weights reader and loadWeights accept. */
    async saveWeights() {
      const s = store.get();
      return { model: s.config.model, weights: await remote.weights(), config: s.config, step: s.step };
    },
    /** A saved file (or { model, weights } from the CLI): the model at those weights, paused. */
    async loadWeights(given) {
      const checked = check(playgroundWeightsSchema, given);
      // The schema's reason: English, and its message for any language (i18n.js errorWords).
      if (checked.error) throw Object.assign(new Error(checked.error), { message_id: checked.message.id, values: checked.message.values });
      const file = checked.value;
      const s = store.get();
      const config = file.config && typeof file.config === 'object' ? file.config : { ...s.config, model: file.model ?? s.config.model };
      const step = Number.isInteger(file.step) && file.step >= 0 ? file.step : 0;
      const mine = ++generation;
      const made = await remote.create(config, { weights: file.weights });
      if (mine !== generation) return;
      madeFor = JSON.stringify(made.config);
      store.dispatch(loaded, made.config, step);
      await measure();
    },
    /** Opens the head on the probe in the explorer (a new tab), with a link back to this step. */
    async openInExplorer(layer, head) {
      const s = store.get();
      const problem = await remote.headProblem(layer, head, s.probe);
      const { encodeStateString, problemToState } = await import('./share.js');
      const names = tokenNames(s);
      const labels = s.probe.map(names);
      const state = problemToState(problem, { tokens: { q: labels, k: labels } });
      const back = linkFor(s);
      // The explorer in the learner's language too (?lang=; English needs none).
      const language = lang && lang !== 'en' ? `&lang=${encodeURIComponent(lang)}` : '';
      const url = `${explorerUrl}?from=playground${language}${back ? `&back=${encodeURIComponent(back)}` : ''}#${await encodeStateString(state)}`;
      globalThis.open?.(url, '_blank', 'noopener');
      return url;
    },
  };
}

// ---- mounting -------------------------------------------------------------------------------------

/**
 * Mounts the playground on `root` (an element or a shadow root). `worker`: a Worker running
 * attention-explorer/model-worker (default: a new one next to this file). `preset`, `overrides`,
 * `step` (train to it, then pause), `autoplay`. `explorerUrl`: where "Open in the explorer" goes;
 * `linkFor(state)`: the page's link to come back to. `lang`: a catalogue's code (i18n.js LANGUAGES;
 * default: the browser's languages, negotiated). Resolves to { store, remote, trainer, t, destroy }.
 * @type {typeof import('./playground.js').mountPlayground}
 */
export async function mountPlayground(root, options = {}) {
  const worker = options.worker ?? new Worker(new URL('./model-worker.js', import.meta.url), { type: 'module' });
  const remote = connectModelWorker(worker);
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(PLAYGROUND_CSS);
  const host = /** @type {Document | ShadowRoot} */ (root.getRootNode ? root.getRootNode() : document);
  host.adoptedStyleSheets = [...(host.adoptedStyleSheets ?? []), sheet];
  const [catalogue, t] = await Promise.all([
    remote.catalogue(),
    loadTranslator(negotiate(options.lang, globalThis.navigator?.languages ?? [])),
  ]);
  // A link's preset, changes and step (a damaged part is left out, and said so).
  const link = options.link ? readLink(options.link, catalogue) : null;
  const asked = link?.preset ?? options.preset ?? 'induction';
  const known = catalogue.presets.some((p) => p.name === asked);
  const start = initialState(catalogue, asked, link?.overrides ?? options.overrides);
  const notice =
    (link?.message ? t.message(link.message) : null) ??
    (known
      ? null
      : t('playground.noPreset', {
          name: JSON.stringify(String(asked).slice(0, 40)),
          presets: catalogue.presets.map((p) => p.name).join(', '),
          shown: start.preset,
        }));
  const store = createStore(notice ? { ...start, notice } : start);
  const trainer = createTrainer(store, remote, {
    explorerUrl: options.explorerUrl ?? null,
    linkFor: options.linkFor ?? (() => null),
    lang: t.lang,
  });

  // lang and dir on the playground itself: an element in another language's page is right too.
  const frame = el('div', { class: 'pg', lang: t.lang, dir: t.dir });
  const side = el('section', { class: 'pg-side', 'aria-label': t('section.side') });
  const main = el('section', { class: 'pg-main', 'aria-label': t('section.main') });
  const status = el('div', { class: 'pg-statusbar' });
  const curves = el('div', { class: 'pg-panel' });
  const heads = el('div', { class: 'pg-panel' });
  const probe = el('div', { class: 'pg-panel' });
  frame.append(side, main);
  main.append(status, curves, heads, probe);
  root.append(frame);

  lessonView(side, store, t);
  questionView(side, store, t);
  buttonsView(side, store, trainer, t);
  fieldsView(side, store, t);
  statusView(status, store, t);
  curvesView(curves, store, t);
  headsView(heads, store, trainer, t);
  probeView(probe, store, t);

  const step = link?.step ?? options.step;
  if (step > 0) store.dispatch(replayTo, step);
  else if (options.autoplay) store.dispatch(play);
  return {
    store,
    remote,
    trainer,
    t,
    destroy() {
      remote.terminate();
      frame.remove();
    },
  };
}

/** <attention-playground task="induction" autoplay lang="fr">: the playground in any page (lang: else the browser's). */
// (An empty class where there is no DOM, e.g. Node importing the package: typed as the DOM's.)
const Base = globalThis.HTMLElement ?? /** @type {typeof HTMLElement} */ (/** @type {unknown} */ (class {}));
/** @typedef {Satisfies<typeof AttentionPlayground, typeof import('./playground.js').AttentionPlayground>} DeclaredPlayground playground.d.ts's class is this one */
export class AttentionPlayground extends Base {
  async connectedCallback() {
    if (this.mounted) return;
    this.mounted = true;
    const shadow = this.attachShadow({ mode: 'open' });
    const container = document.createElement('div');
    shadow.append(container);
    try {
      this.playground = await mountPlayground(container, {
        preset: this.getAttribute('task') ?? 'induction',
        autoplay: this.hasAttribute('autoplay'),
        // Where the explorer page is: without it, heads are not opened from the element.
        explorerUrl: this.getAttribute('explorer'),
        lang: this.getAttribute('lang'),
      });
    } catch (error) {
      // The core's messages stay English (issue 33: the core's errors become message ids later).
      const t = await loadTranslator(negotiate(this.getAttribute('lang'), globalThis.navigator?.languages ?? []));
      container.textContent = t('playground.couldNotStart', { message: error.message });
    }
  }

  disconnectedCallback() {
    this.playground?.destroy();
    this.playground = null;
    this.mounted = false;
  }
}

if (globalThis.customElements && !customElements.get('attention-playground'))
  customElements.define('attention-playground', AttentionPlayground);
