#!/usr/bin/env node
// Per-function size report of a wasm module built with --profiling-funcs (names kept):
//   node bench/wasm_sizes.mjs build-size/attention.wasm [top=40]
// Groups by a name prefix too, so "which part of the core costs the download" has an answer.
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
const bytes = readFileSync(file);
let pos = 0;
const u32 = () => {
  let r = 0,
    s = 0,
    b;
  do {
    b = bytes[pos++];
    r |= (b & 0x7f) << s;
    s += 7;
  } while (b & 0x80);
  return r >>> 0;
};
const str = () => {
  const n = u32();
  const t = bytes.toString('utf8', pos, pos + n);
  pos += n;
  return t;
};

pos = 8;
let imported = 0;
const bodies = [];
const names = new Map();
const sections = [];
while (pos < bytes.length) {
  const id = bytes[pos++];
  const size = u32();
  const end = pos + size;
  if (id === 0) {
    const name = str();
    sections.push([`custom:${name}`, size]);
    if (name === 'name') {
      while (pos < end) {
        const sub = bytes[pos++];
        const len = u32();
        const subEnd = pos + len;
        if (sub === 1) {
          const n = u32();
          for (let i = 0; i < n; i++) {
            const idx = u32();
            names.set(idx, str());
          }
        }
        pos = subEnd;
      }
    }
  } else {
    sections.push([
      ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'element', 'code', 'data', 'datacount'][
        id
      ] ?? id,
      size,
    ]);
    if (id === 2) {
      const n = u32();
      for (let i = 0; i < n; i++) {
        str();
        str();
        const kind = bytes[pos++];
        if (kind === 0) {
          u32();
          imported++;
        } else if (kind === 1) {
          pos++;
          const f = bytes[pos++];
          u32();
          if (f & 1) u32();
        } else if (kind === 2) {
          const f = bytes[pos++];
          u32();
          if (f & 1) u32();
        } else if (kind === 3) {
          pos += 2;
        } else pos++;
      }
    } else if (id === 10) {
      const n = u32();
      for (let i = 0; i < n; i++) {
        const len = u32();
        bodies.push({ index: imported + i, size: len });
        pos += len;
      }
    }
  }
  pos = end;
}
for (const b of bodies) b.name = names.get(b.index) ?? `f${b.index}`;
bodies.sort((a, b) => b.size - a.size);
console.log('sections:');
for (const [n, s] of sections) console.log(`  ${String(s).padStart(8)}  ${n}`);
const total = bodies.reduce((a, b) => a + b.size, 0);
console.log(`\n${bodies.length} functions, ${total} bytes of code; largest:`);
for (const b of bodies.slice(0, Number(topArg ?? 40))) console.log(`  ${String(b.size).padStart(7)}  ${b.name.slice(0, 150)}`);
const groups = new Map();
const groupOf = (n) =>
  /embind|emscripten::|_EmBind|EmVal|__embind/.test(n)
    ? 'embind'
    : /Eigen/.test(n)
      ? 'Eigen'
      : /^attn::|attn::/.test(n)
        ? 'attn'
        : /std::|__cxx|__cxa|basic_string|__1::/.test(n)
          ? 'libc++/abi'
          : /^(dl|mem|str|printf|snprintf|vfprintf|fmt_|pop_arg|__)/.test(n)
            ? 'libc'
            : 'other';
for (const b of bodies) groups.set(groupOf(b.name), (groups.get(groupOf(b.name)) ?? 0) + b.size);
console.log('\nby group:');
for (const [g, s] of [...groups].sort((a, b) => b[1] - a[1])) console.log(`  ${String(s).padStart(8)}  ${g}`);
