// `attention-explorer/widget`: the explorer as an anywidget module (Jupyter, Colab, VS Code,
// marimo, and MyST's {anywidget} directive all load one ES module whose default export has
// render({ model, el }) and initialize({ model })).
//
// The model's keys are the contract:
//   problem  the problem (an object, or its JSON text). The widget shows it; the reader's edits are
//            written back with model.set + model.save_changes; a change from the host redraws.
//   trace    set by the widget: the trace of the current problem, JSON-safe (-inf as "-inf", as
//            toJSON writes it), or null while the problem does not compute.
// Optional keys, read once per view: steps, inputs, editable (default "all"), heads, decimals:
// the <attention-explorer> attributes of the same names.
//
// Load it by URL (a CDN or any server): its .wasm and modules are found beside it.
import { AttentionExplorerElement } from './component.js';
import { toJSON } from './json.js';

const ATTRIBUTES = ['steps', 'inputs', 'editable', 'heads', 'decimals'];

/** The model's problem as an object (a host may send JSON text). */
function problemOf(model) {
  const problem = model.get('problem');
  if (typeof problem === 'string') return problem.trim() ? JSON.parse(problem) : null;
  return problem ?? null;
}

const sameProblem = (a, b) => JSON.stringify(toJSON(a)) === JSON.stringify(toJSON(b));

function writeTrace(model, trace) {
  model.set('trace', trace ? toJSON(trace) : null);
  model.save_changes();
}

export default {
  initialize() {},

  render({ model, el }) {
    const explorer = document.createElement('attention-explorer');
    for (const name of ATTRIBUTES) {
      const value = model.get(name) ?? (name === 'editable' ? 'all' : null);
      if (value !== null && value !== undefined) explorer.setAttribute(name, Array.isArray(value) ? value.join(',') : String(value));
    }
    const note = document.createElement('p');
    note.setAttribute('role', 'alert');
    note.hidden = true;
    note.style.color = '#b3261e';
    /** Shows the model's problem; false when it is not JSON (said in the view). */
    const show = () => {
      let problem;
      try {
        problem = problemOf(model);
      } catch (error) {
        note.textContent = `The widget's problem is not JSON: ${error.message}`;
        note.hidden = false;
        return false;
      }
      note.hidden = true;
      if (problem) explorer.problem = problem;
      return true;
    };
    show(); // before it is attached, so the element starts from this problem

    const onReady = (e) => writeTrace(model, e.detail.trace);
    const onEdit = (e) => {
      model.set('problem', e.detail.problem);
      writeTrace(model, e.detail.trace);
    };
    const onHostChange = () => {
      let problem = null;
      try {
        problem = problemOf(model);
      } catch {
        /* show() says so */
      }
      if (problem && explorer.problem && sameProblem(problem, explorer.problem)) return; // our own edit
      // Once the engine is loaded the element recomputes at once (trace null if the problem does
      // not compute); before that, its "ready" event writes the trace.
      if (show()) writeTrace(model, explorer.trace);
    };
    explorer.addEventListener('ready', onReady);
    explorer.addEventListener('change', onEdit);
    model.on('change:problem', onHostChange);
    el.append(note, explorer);
    return () => {
      model.off('change:problem', onHostChange);
      note.remove();
      explorer.remove();
    };
  },
};

export { AttentionExplorerElement };
