// The playground's stylesheet, as text: the page and the <attention-playground> element adopt it
// (a constructed stylesheet: no <style> element, so a strict Content-Security-Policy allows it).
export const PLAYGROUND_CSS = `
.pg { --ink: #1f2937; --muted: #4b5563; --line: #d1d5db; --accent: #2563eb; --good: #15803d; --bad: #b91c1c;
  display: grid; grid-template-columns: minmax(16rem, 22rem) minmax(0, 1fr); gap: 1rem; color: var(--ink);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; box-sizing: border-box; max-width: 100%; }
.pg *, .pg *::before, .pg *::after { box-sizing: border-box; }
.pg h2 { font-size: 1rem; margin: 0 0 .4rem; }
.pg h3 { font-size: .85rem; margin: 0 0 .3rem; font-weight: 600; }
.pg-side { display: flex; flex-direction: column; gap: .6rem; min-width: 0; }
.pg-main { display: flex; flex-direction: column; gap: .8rem; min-width: 0; }
.pg-panel { border: 1px solid var(--line); border-radius: 8px; padding: .7rem; min-width: 0; }
.pg-label { font-weight: 600; display: block; }
.pg select, .pg input { font: inherit; padding: .3rem .4rem; border: 1px solid #9ca3af; border-radius: 6px; max-width: 100%; min-height: 2.2rem; }
.pg button { font: inherit; padding: .35rem .8rem; border: 1px solid #9ca3af; border-radius: 6px; background: #f9fafb; color: var(--ink); cursor: pointer; min-height: 2.2rem; }
.pg button:disabled { opacity: .55; cursor: default; }
.pg button[aria-pressed="true"] { background: #dbeafe; border-color: var(--accent); }
.pg :focus-visible { outline: 3px solid #f59e0b; outline-offset: 1px; }
.pg-primary { background: var(--accent) !important; color: #fff !important; border-color: var(--accent) !important; }
.pg-hint { color: var(--muted); font-size: .85rem; margin: .15rem 0 0; }
.pg-tokens { display: flex; flex-wrap: wrap; gap: 3px; }
.pg-token { display: inline-block; min-width: 1.6rem; text-align: center; padding: 1px 4px; border: 1px solid var(--line);
  border-radius: 4px; background: #f3f4f6; font: 13px/1.4 ui-monospace, monospace; }
.pg-questions { display: flex; flex-direction: column; gap: .5rem; }
.pg-lesson h2 { margin: 0; } .pg-lesson p { margin: .2rem 0 0; }
.pg-question { border-inline-start: 4px solid #f59e0b; background: #fffbeb; padding: .5rem .7rem; border-radius: 4px; }
.pg-question-text { font-weight: 600; margin: 0 0 .4rem; }
.pg-choices { display: flex; flex-wrap: wrap; gap: .3rem; }
.pg-revealed { margin: .4rem 0 0; font-weight: 600; }
.pg-buttons { display: flex; gap: .4rem; flex-wrap: wrap; }
.pg-progress { width: 100%; }
.pg-fields summary { font-weight: 600; cursor: pointer; }
.pg-grid { display: grid; grid-template-columns: 1fr; gap: .5rem; margin-top: .4rem; }
.pg-field label { font-weight: 600; font-size: .9rem; display: block; }
.pg-field input, .pg-field select { width: 100%; }
.pg-statusbar { position: sticky; top: 0; z-index: 1; background: #fff; border-bottom: 1px solid var(--line); padding: .3rem 0; }
.pg-status { margin: 0; font: 14px/1.4 ui-monospace, monospace; overflow-wrap: anywhere; }
.pg-live { margin: .2rem 0 0; color: var(--good); font-weight: 600; min-height: 1.2em; }
.pg-error { color: var(--bad); margin: .3rem 0 0; }
.pg-curves { width: 100%; height: 160px; display: block; }
.pg-legend { font-size: .85rem; color: var(--muted); margin: .3rem 0 0; }
.pg-key { display: inline-block; width: 1rem; height: 3px; vertical-align: middle; margin-block: 0; margin-inline: .6rem .3rem; }
.pg-key-loss { background: #2563eb; } .pg-key-accuracy { background: #c2410c; }
.pg-heads { display: grid; grid-template-columns: repeat(var(--heads, 2), minmax(9rem, 1fr)); gap: .6rem; }
.pg-head { border: 1px solid var(--line); border-radius: 6px; padding: .5rem; min-width: 0; }
.pg-head-off { opacity: .5; border-style: dashed; }
.pg-map { width: 100%; max-width: 18rem; aspect-ratio: 1; image-rendering: pixelated; border: 1px solid var(--line); display: block; background: #fff; }
.pg-badges { display: flex; flex-wrap: wrap; gap: 3px; margin: .3rem 0; }
.pg-badge { font-size: .75rem; padding: 0 .35rem; border-radius: 999px; background: #f3f4f6; border: 1px solid var(--line); }
.pg-badge-on { background: #dcfce7; border-color: var(--good); font-weight: 600; }
.pg-head-buttons { display: flex; flex-wrap: wrap; gap: .3rem; }
.pg-head-buttons button { font-size: .8rem; padding: .2rem .5rem; }
.pg-ablation { margin: .4rem 0 0; }
.pg-predictions { display: flex; flex-wrap: wrap; gap: 3px; margin-top: .4rem; }
.pg-cell { display: flex; flex-direction: column; align-items: center; gap: 1px; }
.pg-next { font: 12px/1.3 ui-monospace, monospace; min-width: 1.6rem; text-align: center; border-radius: 3px; }
.pg-right .pg-next { background: #dcfce7; color: #14532d; }
.pg-wrong .pg-next { background: #fee2e2; color: #7f1d1d; }
#pg-probe { width: 100%; font-family: ui-monospace, monospace; }
@media (max-width: 760px) {
  .pg { grid-template-columns: minmax(0, 1fr); }
  /* Heads as a swipeable row: each layer's heads side by side, scrolled sideways inside the panel. */
  .pg-heads { grid-template-columns: none; grid-auto-flow: column; grid-auto-columns: minmax(10rem, 70%);
    overflow-x: auto; scroll-snap-type: x mandatory; }
  .pg-head { scroll-snap-align: start; }
}
`;
