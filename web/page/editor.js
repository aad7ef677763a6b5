// One input matrix: a spreadsheet-like grid, a text box for pasting any format the core parser
// reads (with the format it was read as under it), its dimensions, and a "random" fill from
// numpy's seeded stream. The editor keeps the text as its value; parsing and validation are the
// engine's (update.js reports errors back here). A grid cell holds one number (engine.parseCell:
// `1,5` is 1.5, never two numbers); a table pasted into a cell fills the grid from that cell.
import { fmt, matrixToText } from './format.js';
import { html, setHtml } from 'attention-explorer/html';
import { numpyLine } from 'attention-explorer';
import { errorWords } from 'attention-explorer/i18n';
import { t } from './language.js';

const GRID_LIMIT = 2500; // cells; beyond this the grid would be slow to type in: text only

// Cell texts the engine read as a number, by input ("-inf" is one only in the additive mask): the
// position only goes into a message, so a keystroke asks the engine about the typed cell and not
// again about the grid's other cells (2,048 calls into wasm, ~10 ms, at 256 tokens × 8).
const numberCells = new Set();
const NUMBER_CELLS_MAX = 100_000;

let uid = 0;

/**
 * @typedef {object} EditorOptions
 * @property {string} name            input name (X, W_Q, ...)
 * @property {import('attention-explorer/html').Html} title  the title, e.g. html`W<sub>Q</sub>`
 * @property {import('attention-explorer/html').Html | null} [description]  a line under the title
 * @property {boolean} vector         a bias: one row
 * @property {import('attention-explorer').Engine} engine
 * @property {() => number} decimals
 * @property {() => {rows?: string[], cols?: string[], rowAxis?: string, colAxis?: string}} labels
 * @property {(name: string, value: {text: string, numpy?: string}) => void} onChange
 */

/**
 * The template's elements that are more than an HTMLElement, by the selector `q` finds them with.
 * @typedef {{
 *   '.dim-rows': HTMLInputElement, '.dim-cols': HTMLInputElement, '.rnd-seed': HTMLInputElement,
 *   '.rnd-loc': HTMLInputElement, '.rnd-scale': HTMLInputElement, '.rnd-low': HTMLInputElement,
 *   '.rnd-high': HTMLInputElement, '.rnd-kind': HTMLSelectElement, 'textarea': HTMLTextAreaElement,
 * }} EditorElements
 */

export class MatrixEditor {
  /** @param {EditorOptions} o */
  constructor(o) {
    // The options' fields, one by one (was Object.assign(this, o): the same fields, in the same
    // order, which the type check can see).
    this.name = o.name;
    this.title = o.title;
    this.description = o.description;
    this.vector = o.vector;
    this.engine = o.engine;
    this.decimals = o.decimals;
    this.labels = o.labels;
    this.onChange = o.onChange;
    this.id = `ed${++uid}-${o.name}`;
    this.text = '';
    this.numpy = '';
    this.cells = [['0']];
    this.localError = null;
    this.badCell = null; // [row, col] of the cell localError is about
    this.mode = 'grid';
    this.el = document.createElement('section');
    this.el.className = 'editor';
    this.el.dataset.input = o.name;
    this.el.setAttribute('aria-labelledby', `${this.id}-title`);
    setHtml(
      this.el,
      html`
      <div class="editor-head">
        <h3 id="${this.id}-title">${o.title}</h3>
        <span class="shape" aria-live="off"></span>
        <div class="tabs" role="group" aria-label="${t('explorer.editor.editAs', { name: o.name })}">
          <button type="button" class="tab" data-tab="grid" aria-pressed="true">${t('explorer.editor.grid')}</button>
          <button type="button" class="tab" data-tab="text" aria-pressed="false">${t('explorer.editor.text')}</button>
        </div>
      </div>
      ${o.description && html`<p class="editor-desc">${o.description}</p>`}
      <div class="dims">
        ${
          !o.vector &&
          html`<label>${t('explorer.editor.rows')} <input type="number" class="dim-rows" min="1" max="4096" step="1" aria-label="${t('explorer.editor.rowsLabel', { name: o.name })}"></label>
        <span aria-hidden="true">×</span>`
        }
        <label>${t(o.vector ? 'explorer.editor.length' : 'explorer.editor.cols')} <input type="number" class="dim-cols" min="1" max="4096" step="1" aria-label="${t(o.vector ? 'explorer.editor.lengthLabel' : 'explorer.editor.colsLabel', { name: o.name })}"></label>
        <details class="random">
          <summary>${t('explorer.editor.random')}</summary>
          <div class="random-form">
            <label>${t('explorer.editor.kind')} <select class="rnd-kind">
              <option value="randn">randn</option><option value="normal">normal</option>
              <option value="rand">rand</option><option value="randint">randint</option></select></label>
            <label>seed <input type="number" class="rnd-seed" value="0" min="0" max="4294967295" step="1"></label>
            <label class="rnd-normal" hidden>loc <input type="number" class="rnd-loc" value="0" step="any"></label>
            <label class="rnd-normal" hidden>scale <input type="number" class="rnd-scale" value="1" step="any" min="0"></label>
            <label class="rnd-int" hidden>low <input type="number" class="rnd-low" value="0" step="1"></label>
            <label class="rnd-int" hidden>high <input type="number" class="rnd-high" value="3" step="1"></label>
            <button type="button" class="rnd-fill">${t('explorer.editor.fill', { name: o.name })}</button>
          </div>
        </details>
      </div>
      <div class="grid-wrap"></div>
      <div class="text-wrap" hidden>
        <label class="visually-hidden" for="${this.id}-text">${t('explorer.editor.asText', { name: o.name })}</label>
        <textarea id="${this.id}-text" rows="5" spellcheck="false" autocomplete="off"
          placeholder="${t('explorer.editor.placeholder')}"></textarea>
        <p class="read-as" hidden></p>
      </div>
      <p class="numpy" hidden><code></code></p>
      <p class="error" role="alert" id="${this.id}-error" hidden></p>`,
    );
    /** @type {<K extends string>(sel: K) => K extends keyof EditorElements ? EditorElements[K] : HTMLElement} */
    this.q = (sel) => /** @type {any} */ (this.el.querySelector(sel));
    this.gridWrap = this.q('.grid-wrap');
    this.textarea = this.q('textarea');
    this.bindEvents();
  }

  bindEvents() {
    /** @type {NodeListOf<HTMLElement>} */ (this.el.querySelectorAll('.tab')).forEach((b) =>
      b.addEventListener('click', () => this.setMode(b.dataset.tab)),
    );
    this.textarea.addEventListener('input', () => {
      this.text = this.textarea.value;
      this.numpy = '';
      this.localError = null;
      this.badCell = null;
      this.showNumpy();
      this.onChange(this.name, { text: this.text });
    });
    const resize = () => {
      const r = this.vector ? 1 : Number(this.q('.dim-rows').value);
      const c = Number(this.q('.dim-cols').value);
      if (!(Number.isInteger(r) && r >= 1 && r <= 4096 && Number.isInteger(c) && c >= 1 && c <= 4096)) return;
      const cells = [];
      for (let i = 0; i < r; i++) {
        const row = [];
        for (let j = 0; j < c; j++) row.push(this.cells[i]?.[j] ?? '0');
        cells.push(row);
      }
      this.cells = cells;
      this.numpy = '';
      this.commitCells(true);
    };
    this.q('.dim-cols').addEventListener('change', resize);
    if (!this.vector) this.q('.dim-rows').addEventListener('change', resize);
    const kind = this.q('.rnd-kind');
    kind.addEventListener('change', () => {
      /** @type {NodeListOf<HTMLElement>} */ (this.el.querySelectorAll('.rnd-normal')).forEach((e) => {
        e.hidden = kind.value !== 'normal';
      });
      /** @type {NodeListOf<HTMLElement>} */ (this.el.querySelectorAll('.rnd-int')).forEach((e) => {
        e.hidden = kind.value !== 'randint';
      });
    });
    this.q('.rnd-fill').addEventListener('click', () => this.fillRandom());

    // Grid: delegated events. The grid is one tab stop (roving tabindex: the last focused cell
    // keeps tabindex 0). A focused cell shows its number as the grid does, selected, so typing
    // replaces it; Enter, F2 or a second click edits the full number, shown in full first.
    this.gridWrap.addEventListener('focusin', (e) => {
      /** @type {HTMLInputElement | null} */
      const inp = /** @type {HTMLElement} */ (e.target).closest('input.cell');
      if (!inp) return;
      this.setActive(Number(inp.dataset.r), Number(inp.dataset.c));
      this.editing = false;
      inp.select();
    });
    this.gridWrap.addEventListener('focusout', (e) => {
      /** @type {HTMLInputElement | null} */
      const inp = /** @type {HTMLElement} */ (e.target).closest('input.cell');
      if (inp) inp.value = this.display(this.cells[inp.dataset.r][inp.dataset.c]);
      this.editing = false;
    });
    this.gridWrap.addEventListener('mousedown', (e) => {
      /** @type {HTMLInputElement | null} */
      const inp = /** @type {HTMLElement} */ (e.target).closest('input.cell');
      this.clickToEdit = Boolean(inp && inp === document.activeElement && !this.editing);
    });
    this.gridWrap.addEventListener('click', (e) => {
      /** @type {HTMLInputElement | null} */
      const inp = /** @type {HTMLElement} */ (e.target).closest('input.cell');
      if (inp && this.clickToEdit) this.edit(inp);
      this.clickToEdit = false;
    });
    this.gridWrap.addEventListener('input', (e) => {
      /** @type {HTMLInputElement | null} */
      const inp = /** @type {HTMLElement} */ (e.target).closest('input.cell');
      if (!inp) return;
      this.editing = true;
      this.cells[inp.dataset.r][inp.dataset.c] = inp.value.trim();
      this.numpy = '';
      this.commitCells(false);
    });
    this.gridWrap.addEventListener('keydown', (e) => this.onGridKey(e));
    this.gridWrap.addEventListener('paste', (e) => this.onGridPaste(e));
  }

  /**
   * A table, list or tensor pasted into a cell fills the grid from that cell, growing it as
   * needed (as spreadsheets do). A lone word (`1,5`, `-inf`) goes into the cell as typed.
   */
  onGridPaste(e) {
    /** @type {HTMLInputElement | null} */
    const inp = /** @type {HTMLElement} */ (e.target).closest('input.cell');
    const text = e.clipboardData?.getData('text/plain') ?? '';
    if (!inp || !/[\s[\]{}();]/.test(text.trim())) return;
    let block;
    try {
      block = this.engine.parseMatrixDetailed(text, this.name).values;
    } catch {
      return; // pasted as it is: the cell then shows what is wrong with it
    }
    e.preventDefault();
    const r0 = this.vector ? 0 : Number(inp.dataset.r);
    const c0 = Number(inp.dataset.c);
    const rows = this.vector ? [block.flat()] : block;
    const height = Math.max(this.cells.length, r0 + rows.length);
    const width = Math.max(this.cells[0].length, c0 + rows[0].length);
    this.cells = Array.from({ length: height }, (_, i) =>
      Array.from({ length: width }, (_, j) => {
        const pasted = rows[i - r0]?.[j - c0];
        return pasted === undefined ? (this.cells[i]?.[j] ?? '0') : matrixToText([pasted]);
      }),
    );
    this.numpy = '';
    this.commitCells(true);
  }

  onGridKey(e) {
    /** @type {HTMLInputElement | null} */
    const inp = /** @type {HTMLElement} */ (e.target).closest('input.cell');
    if (!inp || e.altKey || e.ctrlKey || e.metaKey) return;
    let r = Number(inp.dataset.r),
      c = Number(inp.dataset.c);
    const editing = this.editing;
    const atStart = inp.selectionStart === 0 && inp.selectionEnd === 0;
    const atEnd = inp.selectionStart === inp.value.length && inp.selectionEnd === inp.value.length;
    const all = inp.selectionStart === 0 && inp.selectionEnd === inp.value.length;
    switch (e.key) {
      case 'F2':
        e.preventDefault();
        this.edit(inp);
        return;
      case 'Escape':
        if (!editing) return;
        e.preventDefault();
        this.editing = false;
        inp.value = this.display(this.cells[r][c]);
        inp.select();
        return;
      case 'ArrowUp':
        r--;
        break;
      case 'ArrowDown':
        r++;
        break;
      case 'Enter':
        if (!editing) {
          e.preventDefault();
          this.edit(inp);
          return;
        }
        r += e.shiftKey ? -1 : 1;
        break;
      case 'ArrowLeft':
        if (editing && !(atStart || all)) return;
        c--;
        break;
      case 'ArrowRight':
        if (editing && !(atEnd || all)) return;
        c++;
        break;
      case 'Home':
        if (editing) return;
        c = 0;
        break;
      case 'End':
        if (editing) return;
        c = this.cells[0].length - 1;
        break;
      default:
        return;
    }
    const rows = this.cells.length,
      cols = this.cells[0].length;
    if (r < 0 || c < 0 || r >= rows || c >= cols) {
      e.preventDefault();
      return;
    }
    e.preventDefault();
    this.focusCell(r, c);
  }

  /** Edits a cell: its full number, the caret at its end. */
  edit(inp) {
    this.editing = true;
    inp.value = this.cells[inp.dataset.r][inp.dataset.c];
    inp.setSelectionRange(inp.value.length, inp.value.length);
  }

  /** The grid's one tab stop moves to cell (r, c). */
  setActive(r, c) {
    this.active = [r, c];
    for (const other of this.gridWrap.querySelectorAll('input.cell[tabindex="0"]')) other.tabIndex = -1;
    const inp = this.gridWrap.querySelector(`input.cell[data-r="${r}"][data-c="${c}"]`);
    if (inp) inp.tabIndex = 0;
  }

  focusCell(r, c) {
    const next = this.gridWrap.querySelector(`input.cell[data-r="${r}"][data-c="${c}"]`);
    if (next) next.focus();
  }

  display(raw) {
    const x = Number(raw);
    if (raw === '' || !Number.isFinite(x) || String(raw).length <= this.decimals() + 3) return raw;
    return fmt(x, this.decimals()).replace(/\u2212/g, '-');
  }

  /** Cells changed in the grid: check each cell, rebuild the text and tell the page. */
  commitCells(rerender) {
    this.localError = null;
    this.badCell = null;
    const rows = this.cells.map((row, i) =>
      row.map((cell, j) => {
        if (this.localError) return cell;
        if (cell === '') {
          this.localError = t('explorer.editor.cell-empty', {
            name: this.name,
            vector: this.vector ? 'yes' : 'no',
            row: String(i + 1),
            column: String(j + 1),
          });
        } else {
          try {
            const key = `${this.name}\u0000${cell}`;
            if (!numberCells.has(key)) {
              this.engine.parseCell(cell, this.name, i + 1, j + 1);
              if (numberCells.size >= NUMBER_CELLS_MAX) numberCells.clear();
              numberCells.add(key);
            }
            // The cell's one decimal comma (all parseCell accepts) as a point: the text's cells
            // are separated by spaces, where `1,5` could read as two numbers.
            return cell.replace(',', '.');
          } catch (err) {
            this.localError = errorWords(err, t); // the parser's message in the page's language
          }
        }
        this.badCell = [i, j];
        return cell;
      }),
    );
    this.text = rows.map((row) => row.join(' ')).join('\n');
    if (rerender) this.renderGrid();
    else this.markBadCell();
    this.showNumpy();
    this.updateDims();
    this.onChange(this.name, { text: this.text });
  }

  /** Set from outside (preset, URL, random): text plus the parsed matrix when it parsed. */
  setValue(text, matrix, numpy) {
    this.text = text;
    this.numpy = numpy ?? '';
    this.localError = null;
    this.badCell = null;
    if (matrix) this.cells = matrix.map((row) => row.map((v) => String(v)));
    if (this.textarea.value !== text) this.textarea.value = text;
    this.renderGrid();
    this.showNumpy();
  }

  /** The text parsed (page side): refresh the grid unless the user is typing in it. */
  setMatrix(matrix) {
    if (this.gridWrap.contains(document.activeElement)) return;
    this.cells = matrix.map((row) => row.map((v) => String(v)));
    if (this.mode === 'grid') this.renderGrid();
    else this.updateDims();
  }

  /** The cell the editor's own error is about, marked invalid (aria-invalid, red outline). */
  markBadCell() {
    for (const inp of this.gridWrap.querySelectorAll('input.cell[aria-invalid]')) inp.removeAttribute('aria-invalid');
    if (!this.badCell) return;
    const [r, c] = this.badCell;
    this.gridWrap.querySelector(`input.cell[data-r="${r}"][data-c="${c}"]`)?.setAttribute('aria-invalid', 'true');
  }

  /** The line under the text box: what its text was read as ('' hides it). */
  showReadAs(text) {
    const p = this.q('.read-as');
    p.hidden = !text;
    if (p.textContent !== text) p.textContent = text; // the same line after most edits: no relayout
  }

  setError(message) {
    const p = this.q('.error');
    p.hidden = !message;
    p.textContent = message ?? '';
    this.el.classList.toggle('has-error', Boolean(message));
    const target = this.mode === 'text' ? this.textarea : null;
    if (target) {
      if (message) target.setAttribute('aria-describedby', `${this.id}-error`);
      else target.removeAttribute('aria-describedby');
      target.setAttribute('aria-invalid', message ? 'true' : 'false');
    }
  }

  setMode(mode) {
    this.mode = mode;
    /** @type {NodeListOf<HTMLElement>} */ (this.el.querySelectorAll('.tab')).forEach((b) =>
      b.setAttribute('aria-pressed', String(b.dataset.tab === mode)),
    );
    this.q('.text-wrap').hidden = mode !== 'text';
    this.gridWrap.hidden = mode !== 'grid';
    if (mode === 'text') {
      if (this.textarea.value !== this.text) this.textarea.value = this.text;
    } else {
      this.renderGrid();
    }
  }

  showNumpy() {
    const p = this.q('.numpy');
    p.hidden = !this.numpy;
    p.querySelector('code').textContent = this.numpy;
  }

  updateDims() {
    const rows = this.cells.length,
      cols = this.cells[0]?.length ?? 0;
    if (!this.vector) {
      const r = this.q('.dim-rows');
      if (document.activeElement !== r) r.value = String(rows);
    }
    const c = this.q('.dim-cols');
    if (document.activeElement !== c) c.value = String(this.vector ? rows * cols : cols);
    const shape = this.vector ? `${rows * cols}` : `${rows} × ${cols}`;
    if (this.q('.shape').textContent !== shape) this.q('.shape').textContent = shape;
  }

  renderGrid() {
    if (this.vector && this.cells.length > 1) this.cells = [this.cells.flat()];
    this.updateDims();
    if (this.mode !== 'grid') return;
    const rows = this.cells.length,
      cols = this.cells[0].length;
    if (rows * cols > GRID_LIMIT) {
      setHtml(this.gridWrap, html`<p class="hint">${t('explorer.editor.tooLarge', { rows: String(rows), cols: String(cols) })}</p>`);
      return;
    }
    const lab = this.labels?.() ?? {};
    const colLabel = (j) => lab.cols?.[j] ?? String(j + 1);
    const rowLabel = (i) => lab.rows?.[i] ?? String(i + 1);
    const name = this.name;
    const [ar, ac] = this.active ?? [0, 0];
    const active = [Math.min(ar, rows - 1), Math.min(ac, cols - 1)];
    const head = Array.from({ length: cols }, (_, j) => html`<th scope="col">${colLabel(j)}</th>`);
    const body = Array.from(
      { length: rows },
      (_, i) =>
        html`<tr><th scope="row">${this.vector ? '' : rowLabel(i)}</th>${Array.from(
          { length: cols },
          (_, j, cell = this.cells[i][j]) =>
            html`<td><input class="cell" type="text" inputmode="decimal" autocomplete="off" spellcheck="false" data-r="${i}" data-c="${j}" tabindex="${i === active[0] && j === active[1] ? 0 : -1}" value="${this.display(cell)}" aria-label="${t('explorer.editor.cell', { name, row: String(i + 1), rowLabel: rowLabel(i), col: String(j + 1), colLabel: colLabel(j) })}"></td>`,
        )}</tr>`,
    );
    const grid = html`<table class="grid"><caption class="visually-hidden">${t('explorer.editor.caption', { name, rows: String(rows), cols: String(cols) })}</caption><thead><tr><th scope="col"><span class="visually-hidden">${t('explorer.editor.row')}</span></th>${head}</tr></thead><tbody>${body}</tbody></table>`;
    setHtml(this.gridWrap, grid);
    this.markBadCell();
  }

  fillRandom() {
    // The select's options are the kinds.
    const kind = /** @type {import('attention-explorer').Draw['kind']} */ (this.q('.rnd-kind').value);
    const seed = Number(this.q('.rnd-seed').value);
    const rows = this.vector ? 1 : Number(this.q('.dim-rows').value);
    const cols = Number(this.q('.dim-cols').value);
    /** @type {import('attention-explorer').Draw} */
    const draw = { kind, shape: [rows, cols] };
    if (kind === 'normal') {
      draw.loc = Number(this.q('.rnd-loc').value);
      draw.scale = Number(this.q('.rnd-scale').value);
    }
    if (kind === 'randint') {
      draw.low = Number(this.q('.rnd-low').value);
      draw.high = Number(this.q('.rnd-high').value);
    }
    let m;
    try {
      if (!(Number.isInteger(seed) && seed >= 0 && seed <= 4294967295))
        throw new Error(t('explorer.editor.seedRange', { max: '4294967295' }));
      [m] = this.engine.random(seed, [draw]);
    } catch (err) {
      this.setError(`${this.name}: ${err.message}`);
      return;
    }
    const vector = this.vector ? m.flat() : null;
    const text = vector ? vector.join(' ') : m.map((row) => row.join(' ')).join('\n');
    this.setValue(text, vector ? [vector] : m, numpyLine(this.name, seed, draw));
    this.onChange(this.name, { text: this.text, numpy: this.numpy });
  }
}
