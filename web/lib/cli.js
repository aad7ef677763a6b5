#!/usr/bin/env node
// attention-explorer: attention with every step from the command line.
//   attention-explorer run [--table] [--digits N] [FILE|-]   problem(s) JSON -> trace(s)
//   attention-explorer decode [--table] [--digits N] [FILE|-] token by token with a KV cache
//   attention-explorer tiles --block-q N --block-k N [--table] [--digits N] [FILE|-]   FlashAttention's tiles
//   attention-explorer recurrent [--chunk N] [--table] [--digits N] [FILE|-]   linear attention's recurrent form
//   attention-explorer gradients [--table] [--digits N] [FILE|-]   run with the backward pass
//   attention-explorer preset [ID]                            a ready-made problem as JSON
//   attention-explorer train [--preset NAME] [--print-config] [--weights OUT] [FILE|-]   train a model
//   attention-explorer model [FILE|-]                         a model's loss, logits and gradients
// --lang xx: the tables of run, gradients, decode, tiles and recurrent (their words: step captions,
// heads, facts, headings, row labels, warnings), the messages about the input and preset's titles in a
// catalogue's language (web/lib/locales, cli.*), and train's and model's errors about the
// configuration (the core's error.config-*, error.model-*); English, byte for byte as before, by
// default. JSON output is the same in any; usage messages stay English.
// Exit status: 0 success, 1 bad input (message names the problem and field), 2 bad usage.
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

import { exactNumber, fixedNumber } from './format.js';
import { LANGUAGES, english, errorWords, exampleWords, loadTranslator, stepFormula, stepTitle, warningsIn } from './i18n.js';
import { findPreset, loadAttention, presetProblem, presets, stringify, version } from './node.js';

const USAGE = `usage: attention-explorer run [--table] [--digits N] [--lang CODE] [FILE|-]
       attention-explorer decode [--table] [--digits N] [--lang CODE] [FILE|-]
       attention-explorer tiles --block-q N --block-k N [--table] [--digits N] [--lang CODE] [FILE|-]
       attention-explorer recurrent [--chunk N] [--table] [--digits N] [--lang CODE] [FILE|-]
       attention-explorer gradients [--table] [--digits N] [--lang CODE] [FILE|-]
       attention-explorer preset [--lang CODE] [ID]
       attention-explorer train [--preset NAME] [--print-config] [--weights OUT] [--lang CODE] [FILE|-]
       attention-explorer model [--lang CODE] [FILE|-]
       attention-explorer --help | --version`;

const HELP = `${USAGE}

Commands:
  run [FILE|-]   Read a problem (a JSON object) or an array of problems from FILE, or from
                 standard input when FILE is "-" or absent, and print the trace of each as JSON:
                 every step (Q, K, V, scores, scaled, ..., weights, output) with its shape.
                 Non-finite numbers are written "inf", "-inf", "nan".
  decode [FILE|-]
                 Read problem(s) as run does and print each decoded token by token as JSON: at
                 step t token t's query attends to the KV cache of tokens 0..t-1 plus its own key
                 and value; per step the new row of scores and weights of each head, the output
                 row, cache_rows, the multiply-adds with the cache and without (flops_cached,
                 flops_full) and the difference from row t of causal attention.
  tiles --block-q N --block-k N [FILE|-]
                 Read problem(s) as run does and print FlashAttention-2's tiles as JSON: per
                 head, query blocks of --block-q rows (outer loop) and key blocks of --block-k
                 keys (inner loop), each tile's scores, running max, rescaling factor, running sum and partial
                 output before and after, the output, how close it is to run's, and the bytes
                 moved between HBM and SRAM (bytes_standard, bytes_flash).
  recurrent [--chunk N] [FILE|-]
                 Read causal linear attention problem(s) (options.attention "linear",
                 options.causal true) and print the recurrent form as JSON: per head and token the
                 state S = sum of decayed phi(k) v^T and z = sum of decayed phi(k), the output row
                 phi(q)^T S / phi(q)^T z and its difference from run's; with --chunk N the chunked
                 form (inside each chunk in parallel, plus the state carried in: intra, inter).
                 "costs": each form's multiply-adds and state size beside softmax attention's.
  gradients [FILE|-]
                 As run, with the backward pass: the trace's steps, then the gradient of the
                 loss L = sum of O * dO with respect to every step back to the inputs (dA, dS,
                 ..., dQ, dK, dV, dW_Q, ...), and "loss". A problem may carry "dO", a matrix
                 shaped like the output; without it dO is all ones.
  preset [ID]    Print a ready-made problem as JSON (the seed examples); without ID, list them.
                 e.g.  attention-explorer preset 000 | attention-explorer run --table

  train [FILE|-]  Train a small transformer (docs/model.md) from a configuration (FILE or standard
                 input): { "model": {...}, "task": ..., "optimizer": {...}, "steps", "batch",
                 "seed", "eval_every" }. Prints JSON lines: first {"config": ...} with every default
                 written out (a file train accepts), then every eval_every steps (and at step 0
                 and the end) {"step", "loss" (the mean training loss since the last line),
                 "eval_loss", "accuracy" (on the task's fixed probe batch), "heads": per layer and
                 head (from 1) the previous_token, induction, duplicate_token and first_token
                 scores and ablated_loss}. A progress bar goes to stderr when it is a terminal.
  model [FILE|-]  Read { "model", "weights", "tokens", "targets" } (targets optional: the next
                 token; -1 for no loss) and print { "loss", "logits", "gradients" }, the gradients
                 shaped like the weights under the same keys.

Options for train:
  --preset NAME  Train a preset instead of FILE (list below).
  --print-config Print the configuration (a preset's, or FILE's with defaults) and exit.
  --weights OUT  Write { "model", "weights" } to OUT when training ends.

Model JSON: %MODEL%
Tasks:
%TASKS%
Presets (attention-explorer train --preset NAME):
%PRESETS%

Options for run, decode, tiles, recurrent and gradients:
  --table        Print aligned tables instead of JSON, each row after its label (q1, k1 cached,
                 ...): run and gradients each step (name, head,
                 shape, title and formula above it); decode each token (its new rows of scores
                 and weights, one per head, its output, the multiply-adds); tiles each tile (its
                 scores, per query m, rescale and l before and after, the partial output before
                 and after), then the output and the bytes moved; recurrent each token or chunk
                 (S, z, the output rows), then each form's cost.
  --digits N     Decimals in tables (default 4).
  --lang CODE    The language of the tables' words (step captions, heads, facts, headings, row
                 labels, warnings), of the messages about the input, of train's and model's errors
                 and of preset's titles (${Object.keys(LANGUAGES).join(', ')}; default en). Numbers keep the
                 decimal point and minus sign of code; formulas and JSON stay as they are.

Options for recurrent:
  --chunk N      Tokens per chunk (a positive integer): the chunked form; without it, token by token.

Options for tiles (both required):
  --block-q N    Queries per block (a positive integer; larger than the sequence: one block).
  --block-k N    Keys per block.

Problem JSON: { "Q": [[...]], "K": [[...]], "V": [[...]] } or { "X": ..., "W_Q": ..., "W_K": ...,
"W_V": ..., "options": { ... } }; every key and what it holds:
%KEYS%
A matrix may also be text numpy prints.

Exit status: 0 success, 1 bad input (stderr names the problem and the field), 2 bad usage.`;

/** The problem JSON's keys (from the wire table): inputs of one kind on one line, options one a line. */
function keysHelp(keys) {
  const lines = [];
  for (const { key, expected } of keys) {
    const last = lines[lines.length - 1];
    if (!key.includes('.') && last && !last.key.includes('.') && last.expected === expected) last.key += `, ${key}`;
    else lines.push({ key, expected });
  }
  const width = Math.max(...lines.filter((l) => l.key.includes('.')).map((l) => l.key.length));
  return lines.map(({ key, expected }) => (key.includes('.') ? `  ${key.padEnd(width)}  ${expected}` : `  ${key}: ${expected}`)).join('\n');
}

class UsageError extends Error {}

/** @type {import('node:util').ParseArgsOptionsConfig} */
const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
  table: { type: 'boolean' },
  digits: { type: 'string' },
  'block-q': { type: 'string' },
  'block-k': { type: 'string' },
  chunk: { type: 'string' },
  preset: { type: 'string' },
  'print-config': { type: 'boolean' },
  weights: { type: 'string' },
  lang: { type: 'string' },
};

// The commands that read problems, and the engine method each runs.
const PROBLEM_COMMANDS = {
  run: (engine, problem) => engine.run(problem),
  decode: (engine, problem) => engine.decode(problem),
  tiles: (engine, problem, args) => engine.tiles(problem, args.blocks),
  recurrent: (engine, problem, args) => engine.recurrent(problem, args.chunk === null ? undefined : { chunk: args.chunk }),
  gradients: (engine, problem) => engine.gradients(problem),
};

/** The command line as { help } | { version } | { command, table, digits, blocks, file, id }. */
function parseCommandLine(argv) {
  let values, positionals;
  try {
    ({ values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true }));
  } catch (error) {
    if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
      throw new UsageError(`unknown option ${/'([^']*)'/.exec(error.message)?.[1] ?? ''}`);
    // e.g. "option '--digits <value>' argument missing"
    // "--digits -3": parseArgs takes -3 for an option ("argument is ambiguous"); say what --digits takes.
    if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && /ambiguous/.test(error.message)) {
      const name = /'--(\w[\w-]*)'/.exec(error.message)?.[1];
      const value = argv[argv.indexOf(`--${name}`) + 1];
      if (name === 'digits') throw new UsageError(`--digits takes an integer from 0 to 17, got ${value}`);
      throw new UsageError(
        `--${name} takes a value, got ${value} (an option's value that starts with a dash is written --${name}=${value})`,
      );
    }
    if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
      throw new UsageError(error.message.replace(/^Option/, 'option').replace(/\n/g, ' '));
    throw error;
  }
  if (values.help) return { help: true };
  if (values.version) return { version: true };
  const args = {
    command: positionals[0] ?? null,
    table: Boolean(values.table),
    digits: 4,
    blocks: null,
    chunk: null,
    file: null,
    id: null,
    preset: values.preset ?? null,
    printConfig: Boolean(values['print-config']),
    weights: values.weights ?? null,
    lang: 'en',
  };
  if (values.lang !== undefined) {
    // A code of a catalogue, exactly as the page's ?lang= names it.
    if (!Object.hasOwn(LANGUAGES, values.lang))
      throw new UsageError(`--lang takes one of ${Object.keys(LANGUAGES).join(', ')}, got ${values.lang.trim() || 'nothing'}`);
    args.lang = values.lang;
  }
  if (values.digits !== undefined) {
    const n = Number(values.digits);
    if (values.digits.trim() === '' || !Number.isInteger(n) || n < 0 || n > 17)
      throw new UsageError(`--digits takes an integer from 0 to 17, got ${values.digits.trim() || 'nothing'}`);
    args.digits = n;
  }
  const rest = positionals.slice(1);
  if (args.command === null) throw new UsageError('no command given');
  const blocks = ['block-q', 'block-k'].filter((name) => values[name] !== undefined);
  if (args.command !== 'tiles' && blocks.length) throw new UsageError(`--${blocks[0]} is an option of tiles`);
  if (values.chunk !== undefined) {
    if (args.command !== 'recurrent') throw new UsageError('--chunk is an option of recurrent');
    if (!/^\s*\d+\s*$/.test(values.chunk) || Number(values.chunk) < 1)
      throw new UsageError(`--chunk takes a positive integer, got ${values.chunk.trim() || 'nothing'}`);
    args.chunk = Number(values.chunk);
  }
  if (args.command === 'preset') {
    const misplaced = ['table', 'digits'].find((name) => values[name] !== undefined);
    if (misplaced) throw new UsageError(`--${misplaced} is an option of run, decode, tiles and gradients`);
  }
  const trainOnly = ['preset', 'print-config', 'weights'].find((name) => values[name] !== undefined);
  if (trainOnly && args.command !== 'train') throw new UsageError(`--${trainOnly} is an option of train`);
  if (args.command === 'train' || args.command === 'model') {
    const misplaced = ['table', 'digits'].find((name) => values[name] !== undefined);
    if (misplaced) throw new UsageError(`--${misplaced} is an option of run, decode, tiles and gradients`);
    if (rest.length > 1) throw new UsageError(`${args.command} takes one FILE, got ${rest.length}`);
    if (args.preset !== null && rest.length) throw new UsageError('train takes FILE or --preset NAME, not both');
    args.file = rest[0] ?? '-';
    return args;
  }
  if (args.command === 'tiles') {
    const size = (name) => {
      const text = values[name];
      if (text === undefined) throw new UsageError('tiles needs --block-q N and --block-k N');
      if (!/^\s*\d+\s*$/.test(text) || Number(text) < 1)
        throw new UsageError(`--${name} takes a positive integer, got ${text.trim() || 'nothing'}`);
      return Number(text);
    };
    args.blocks = { block_q: size('block-q'), block_k: size('block-k') };
  }
  if (PROBLEM_COMMANDS[args.command]) {
    if (rest.length > 1) throw new UsageError(`${args.command} takes one FILE, got ${rest.length}`);
    args.file = rest[0] ?? '-';
  } else if (args.command === 'preset') {
    if (rest.length > 1) throw new UsageError(`preset takes one ID, got ${rest.length}`);
    args.id = rest[0] ?? null;
  } else {
    throw new UsageError(`unknown command '${args.command}'`);
  }
  return args;
}

async function readInput(file, command, what = 'a problem', t = english) {
  if (file !== '-') {
    try {
      return { text: await readFile(file, 'utf8'), name: file };
    } catch (error) {
      throw new Error(t('cli.cannot-read', { file, missing: error.code === 'ENOENT' ? 'yes' : 'no', error: error.message }));
    }
  }
  if (process.stdin.isTTY) throw new UsageError(`${command} reads ${what} from standard input: pipe one in or give FILE`);
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return { text: Buffer.concat(chunks).toString('utf8'), name: t('cli.stdin') };
}

/** A matrix as right-aligned columns, each row after its label (left-aligned) when `labels` are given. */
function table(rows, digits, labels = null) {
  const cells = rows.map((row) => row.map((v) => fixedNumber(v, digits)));
  const widths = cells[0].map((_, j) => Math.max(...cells.map((row) => row[j].length)));
  const labelWidth = labels ? Math.max(...labels.map((l) => l.length)) : 0;
  return cells
    .map((row, i) => '  ' + (labels ? `${labels[i].padEnd(labelWidth)}  ` : '') + row.map((c, j) => c.padStart(widths[j])).join('  '))
    .join('\n');
}

/**
 * A step's row labels: q1.. for queries, k1.. for keys (with a KV cache, "cached" or "new", and a
 * step of the new keys only numbered after the cache), the RoPE position for positions, f1.. for
 * features (layout "columns"). Queries after a cache say their position (counted from 0, as RoPE).
 */
function rowLabels(step, trace, t = english) {
  const { meta } = trace;
  const axis = step.axes?.[0];
  const n = step.shape[0];
  const newKeys = trace.steps.find((s) => s.id === 'K')?.shape[0];
  const cached = trace.steps.some((s) => s.id === 'K_cache') && newKeys !== undefined ? meta.keys - newKeys : 0;
  return Array.from({ length: n }, (_, i) => {
    if (axis === 'queries') return cached ? t('cli.row.query-at', { n: String(i + 1), position: String(cached + i) }) : `q${i + 1}`;
    if (axis === 'keys') {
      if (!cached) return `k${i + 1}`;
      if (n === meta.keys) return t('cli.row.key', { n: String(i + 1), cached: i < cached ? 'yes' : 'no' });
      return t('cli.row.key', { n: String(cached + i + 1), cached: 'no' });
    }
    if (axis === 'positions') return t('cli.row.position', { position: String(meta.rope_positions?.[i] ?? i) });
    if (axis === 'features') return `f${i + 1}`;
    return `${i + 1}`;
  });
}

function traceTables(trace, digits, t = english) {
  const out = [];
  for (const step of trace.steps) {
    // Heads are counted from 1 here, as the page and the sentences count them; JSON keeps the index.
    // Numbers are passed in as text (the code's), so that no language formats them.
    out.push(
      t('cli.step', {
        id: step.id,
        head: step.head === null ? 'none' : String(step.head + 1),
        shape: `${step.shape[0]}x${step.shape[1]}`,
        title: stepTitle(step, t),
        formula: stepFormula(step, t).text,
      }),
    );
    out.push(table(step.data, digits, rowLabels(step, trace, t)), '');
  }
  const m = trace.meta;
  out.push(
    t('cli.meta', {
      scale: fixedNumber(m.scale, 8),
      d_k: String(m.d_k),
      d_v: String(m.d_v),
      heads: String(m.heads),
      kv_heads: String(m.kv_heads),
      queries: String(m.queries),
      keys: String(m.keys),
      layout: m.layout,
      precision: m.precision,
    }),
  );
  for (const f of trace.facts) {
    out.push(
      t('cli.variance', {
        head: String(f.head + 1),
        scores: fixedNumber(f.scores_variance, 8),
        scaled: fixedNumber(f.scaled_variance, 8),
      }),
    );
  }
  if (trace.loss !== undefined) out.push(t('cli.loss', { loss: fixedNumber(trace.loss, 8) }));
  out.push(...warningLines(trace, t));
  return out.join('\n');
}

/** A result's warnings, a line each, in `t`'s language. */
const warningLines = (result, t) => warningsIn(result, t).map((warning) => t('cli.warning', { warning }));

/** engine.decode's result, token by token: the new rows (one per head), the output, the work. */
function decodeTables(decoding, digits, t = english) {
  const out = [];
  for (const s of decoding.steps) {
    out.push(
      t('cli.decode.token', {
        token: String(s.t + 1),
        rows: s.cache_rows,
        count: String(s.cache_rows),
        cached: String(s.t),
        withCache: String(s.flops_cached),
        without: String(s.flops_full),
        difference: exactNumber(s.difference),
      }),
    );
    const heads = s.scores.map((_, h) => t('cli.head', { head: String(h + 1) }));
    out.push(t('cli.decode.scores'), table(s.scores, digits, heads));
    out.push(t('cli.decode.weights'), table(s.weights, digits, heads));
    out.push(t('cli.output'), table([s.output], digits), '');
  }
  out.push(t('cli.decode.total', { withCache: String(decoding.flops_cached), without: String(decoding.flops_full) }));
  out.push(...warningLines(decoding, t));
  return out.join('\n');
}

/** engine.tiles' result, tile by tile in the order visited, then the output and the bytes moved. */
function tilesTables(tiles, digits, t = english) {
  const out = [];
  const range = ([a, b], id) => t(id, { several: b - a === 1 ? 'no' : 'yes', from: String(a + 1), to: String(b) });
  tiles.tiles.forEach((tile, i) => {
    const where = t('cli.tiles.tile', {
      tile: String(i + 1),
      tiles: String(tiles.tiles.length),
      head: String(tile.head + 1),
      qBlock: String(tile.q_block + 1),
      queries: range(tile.queries, 'cli.tiles.queries'),
      kBlock: String(tile.k_block + 1),
      keys: range(tile.keys, 'cli.tiles.keys'),
    });
    if (tile.skipped) {
      out.push(t('cli.tiles.skipped', { tile: where }), '');
      return;
    }
    out.push(where, t('cli.tiles.scores'), table(tile.scores, digits));
    out.push(
      t('cli.tiles.perQuery'),
      table(
        tile.m_before.map((_, q) => [tile.m_before[q], tile.m_after[q], tile.rescale[q], tile.l_before[q], tile.l_after[q]]),
        digits,
      ),
    );
    out.push(t('cli.tiles.partialBefore'), table(tile.partial_before, digits));
    out.push(t('cli.tiles.partialAfter'), table(tile.partial_after, digits), '');
  });
  out.push(t('cli.output'), table(tiles.output, digits), '');
  out.push(
    t('cli.tiles.summary', {
      block_q: String(tiles.block_q),
      block_k: String(tiles.block_k),
      visited: String(tiles.visited),
      skipped: String(tiles.skipped),
      difference: exactNumber(tiles.max_difference),
    }),
  );
  out.push(
    t('cli.tiles.bytes', {
      element: String(tiles.element_bytes),
      standard: String(tiles.bytes_standard),
      flash: String(tiles.bytes_flash),
    }),
  );
  out.push(...warningLines(tiles, t));
  return out.join('\n');
}

/** engine.recurrent's result, token (or chunk) by token per head, then the output and the forms' costs. */
function recurrentTables(r, digits, t = english) {
  const out = [];
  for (const s of r.steps) {
    const [a, b] = s.tokens;
    out.push(
      t('cli.recurrent.step', {
        head: String(s.head + 1),
        chunk: b - a === 1 ? 'no' : 'yes',
        from: String(a + 1),
        to: String(b),
        difference: exactNumber(s.difference),
      }),
    );
    if (r.chunk) {
      out.push(t('cli.recurrent.intra'), table(s.intra, digits));
      out.push(t('cli.recurrent.inter'), table(s.inter, digits));
    }
    out.push(t('cli.recurrent.state'), table(s.state, digits));
    if (s.z.length) out.push(t('cli.recurrent.z'), table([s.z], digits));
    out.push(t('cli.output'), table(s.output, digits), '');
  }
  out.push(t('cli.output'), table(r.output, digits), '');
  out.push(
    t('cli.recurrent.summary', {
      chunked: r.chunk ? 'yes' : 'no',
      chunk: String(r.chunk ?? ''),
      difference: exactNumber(r.max_difference),
    }),
  );
  for (const c of r.costs) out.push(t('cli.recurrent.cost', { form: c.form, adds: String(c.multiply_adds), state: String(c.state) }));
  out.push(...warningLines(r, t));
  return out.join('\n');
}

/** --table's printer of each command's result. */
const TABLES = { run: traceTables, gradients: traceTables, decode: decodeTables, tiles: tilesTables, recurrent: recurrentTables };

/** run, decode, tiles or gradients: problem(s) in, each one's result out. */
async function compute(args) {
  // The messages (and --table's words) in --lang's language; the core's messages inside as it writes them.
  const t = await loadTranslator(args.lang);
  const { text, name } = await readInput(args.file, args.command, undefined, t);
  let input;
  try {
    input = JSON.parse(text);
  } catch (error) {
    throw new Error(t('cli.not-json', { name, error: error.message }));
  }
  const many = Array.isArray(input);
  const problems = many ? input : [input];
  if (problems.length === 0) throw new Error(t('cli.empty-array', { name, command: args.command }));
  const engine = await loadAttention();
  const method = PROBLEM_COMMANDS[args.command];
  const results = problems.map((problem, i) => {
    try {
      return method(engine, problem, args);
    } catch (error) {
      throw new Error(
        t('cli.problem-error', {
          name,
          n: String(i + 1),
          many: many ? 'yes' : 'no',
          count: String(problems.length),
          error: errorWords(error, t),
        }),
      );
    }
  });
  if (!args.table) {
    process.stdout.write(stringify(many ? results : results[0]) + '\n');
    return;
  }
  const blocks = results.map(
    (trace, i) =>
      (many ? `${t('cli.problem', { n: String(i + 1), count: String(results.length) })}\n\n` : '') +
      TABLES[args.command](trace, args.digits, t),
  );
  process.stdout.write(blocks.join('\n\n') + '\n');
}

async function preset(args) {
  const t = await loadTranslator(args.lang);
  if (args.id === null) {
    // The examples' titles in --lang's language (exampleWords; presets.js's English by default).
    for (const p of presets) process.stdout.write(`${p.id.padEnd(12)} ${exampleWords(p, t).title}\n`);
    return;
  }
  const found = findPreset(args.id);
  if (!found) {
    throw new Error(t('cli.no-preset', { id: args.id, ids: presets.map((p) => p.id).join(', ') }));
  }
  const engine = await loadAttention();
  process.stdout.write(stringify(presetProblem(found, engine).problem) + '\n');
}

/** JSON text read from FILE or stdin, parsed; the message names where it came from (in `t`'s language). */
async function readJson(file, command, what, t = english) {
  const { text, name } = await readInput(file, command, what, t);
  try {
    return { value: JSON.parse(text), name };
  } catch (error) {
    throw new Error(t('cli.not-json', { name, error: error.message }));
  }
}

/** A bar on stderr, drawn only when stderr is a terminal. */
function progressBar(total) {
  if (!process.stderr.isTTY || total === 0) return { update() {}, done() {} };
  const width = 30;
  return {
    update(step, loss) {
      const filled = Math.round((width * step) / total);
      process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] step ${step}/${total} loss ${fixedNumber(loss, 4)} `);
    },
    done() {
      process.stderr.write('\n');
    },
  };
}

async function train(args) {
  // The core's configuration errors in --lang's language (errorWords; English by default).
  const t = await loadTranslator(args.lang);
  const engine = await loadAttention({ walkthroughs: false });
  let config;
  if (args.preset !== null) {
    const found = engine.modelCatalogue().presets.find((p) => p.name === args.preset);
    if (!found) {
      const presets = engine
        .modelCatalogue()
        .presets.map((p) => p.name)
        .join(', ');
      throw new Error(t('error.config-unknown-preset', { name: args.preset, presets }));
    }
    config = found.config;
  } else {
    const { value, name } = await readJson(args.file, 'train', 'a configuration', t);
    config = value;
    try {
      engine.model(config).dispose();
    } catch (error) {
      throw new Error(t('cli.in-file', { name, error: errorWords(error, t) }));
    }
  }
  const model = engine.model(config);
  const line = (value) => process.stdout.write(stringify(value, 0) + '\n');
  if (args.printConfig) {
    process.stdout.write(stringify(model.config) + '\n');
    return;
  }
  const { steps, eval_every: every } = model.config;
  line({ config: model.config });
  const report = (losses) => {
    const { step, loss, accuracy } = model.evaluate();
    const mean = losses.length ? losses.reduce((a, b) => a + b, 0) / losses.length : null;
    line({ step, loss: mean, eval_loss: loss, accuracy, heads: model.headScores() });
  };
  report([]);
  const bar = progressBar(steps);
  let losses = [];
  try {
    while (model.step < steps) {
      // Chunks small enough for the bar, reports every eval_every steps (0: only at the end).
      const untilReport = every > 0 ? every - (model.step % every) : steps - model.step;
      const chunk = Math.min(untilReport, steps - model.step, Math.max(1, Math.ceil(steps / 100)));
      losses = losses.concat(model.train(chunk));
      bar.update(model.step, losses[losses.length - 1]);
      if ((every > 0 && model.step % every === 0) || model.step === steps) {
        report(losses);
        losses = [];
      }
    }
  } finally {
    bar.done();
  }
  if (args.weights !== null) {
    await writeFile(args.weights, stringify({ model: model.config.model, weights: model.weights() }) + '\n');
  }
}

async function evaluateModel(args) {
  const t = await loadTranslator(args.lang);
  const { value, name } = await readJson(args.file, 'model', 'a model', t);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(t('cli.model.not-object', { name }));
  }
  for (const key of Object.keys(value)) {
    if (!['model', 'weights', 'tokens', 'targets'].includes(key)) throw new Error(t('cli.model.unknown-key', { name, key }));
  }
  for (const key of ['model', 'weights', 'tokens']) {
    if (value[key] === undefined) throw new Error(t('cli.model.missing', { name, key }));
  }
  const engine = await loadAttention({ walkthroughs: false });
  try {
    const model = engine.model({ model: value.model }, { weights: value.weights });
    process.stdout.write(stringify(model.gradients(value.tokens, value.targets)) + '\n');
  } catch (error) {
    throw new Error(t('cli.in-file', { name, error: errorWords(error, t) }));
  }
}

async function main(argv) {
  let args;
  try {
    args = parseCommandLine(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`attention-explorer: ${error.message}\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    const engine = await loadAttention();
    const { tasks, presets: modelPresets } = engine.modelCatalogue();
    const list = (items, key) => items.map((item) => `  ${item.name.padEnd(18)} ${item[key]}`).join('\n');
    process.stdout.write(
      HELP.replace('%KEYS%', keysHelp(engine.problemKeys))
        .replace(
          '%MODEL%',
          'vocab, context, d_model, layers [1], heads [1], d_head [d_model/heads], kv_heads [heads],\n' +
            '  positions ("learned" | "sinusoidal" | "rope" | "none") [learned], mlp [0], activation ("relu" | "gelu") [gelu],\n' +
            '  norm ("none" | "layernorm" | "rmsnorm") [none], bias [false], tied [false], precision [float32]',
        )
        .replace('%TASKS%', list(tasks, 'description'))
        .replace('%PRESETS%', list(modelPresets, 'description')) + '\n',
    );
    return 0;
  }
  if (args.version) {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  try {
    const commands = { preset, train, model: evaluateModel };
    await (commands[args.command] ?? compute)(args);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`attention-explorer: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`attention-explorer: ${error.message}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
