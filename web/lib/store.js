// A store for a page's state: one immutable state object, changed only by actions (pure functions
// state -> state, testable in Node), read by views that subscribe to the part they draw. However
// many actions run between two frames, each view redraws at most once per frame, and only when
// its part changed. Why not a signals library: a page here has one state object that is also its
// link (serialised whole), and a handful of views; forty lines give that without a dependency.

/** Object.is, or for two arrays (a view's tuple of parts) Object.is of each element. */
function same(a, b) {
  if (Object.is(a, b)) return true;
  return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
}

/**
 * @template S
 * @param {S} initial
 * @param {{ schedule?: (redraw: () => void) => void }} [settings] when redraws run: the next
 *   animation frame by default (Node tests pass a synchronous or microtask scheduler)
 */
export function createStore(initial, { schedule } = {}) {
  let state = initial;
  let scheduled = false;
  /** @type {Set<{ select: (s: S) => any, draw: (part: any, s: S) => void, last: any }>} each view's part is of its own type */
  const views = new Set();
  const frame = schedule ?? ((redraw) => (globalThis.requestAnimationFrame ?? ((f) => setTimeout(f, 16)))(redraw));

  const redraw = () => {
    scheduled = false;
    for (const view of views) {
      const part = view.select(state);
      if (same(part, view.last)) continue;
      view.last = part;
      view.draw(part, state);
    }
  };

  return Object.freeze({
    /** The current state. */
    get: () => state,
    /**
     * Runs `action(state, ...args)`; a new state object schedules one redraw. Returns the state.
     * @param {(state: S, ...args: any[]) => S} action
     * @param {...any} args the action's own arguments
     */
    dispatch(action, ...args) {
      const next = action(state, ...args);
      if (next !== state) {
        state = next;
        if (!scheduled) {
          scheduled = true;
          frame(redraw);
        }
      }
      return state;
    },
    /**
     * Runs a pending redraw now rather than at the next frame: for a handler that moves the focus
     * or scrolls to what its action draws, or a page's first drawing. A no-op when none is pending.
     */
    flush() {
      if (scheduled) redraw();
    },
    /**
     * Draws `draw(select(state), state)` now and whenever the selected part changes (compared with
     * Object.is, element by element when it is an array: actions replace what they change).
     * Returns a function that unsubscribes.
     * @template P
     * @param {(s: S) => P} select
     * @param {(part: P, s: S) => void} draw
     */
    subscribe(select, draw) {
      const view = { select, draw, last: select(state) };
      views.add(view);
      draw(view.last, state);
      return () => views.delete(view);
    },
  });
}
