// The native side of the benchmarks (bench/bench_native.cpp): built with g++ -O3 -march=native
// into build-bench/ when a source is newer than the binary, and run for JSON lines.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BUILD = join(ROOT, 'build-bench');

export function sh(command, args, options = {}) {
  console.error(`$ ${command} ${args.join(' ')}`);
  execFileSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], cwd: ROOT, ...options });
}

export function buildNative() {
  const exe = join(BUILD, 'bench_native');
  const sources = ['bench/bench_native.cpp', 'cpp/fast_attention.cpp', 'cpp/attention.cpp', 'cpp/validate.cpp', 'cpp/steps.cpp'];
  const headers = ['cpp/fast_attention.h', 'cpp/attention.h', 'cpp/normalized.h', 'cpp/steps.h', 'cpp/matrix.h'];
  const newest = Math.max(...[...sources, ...headers].map((f) => statSync(join(ROOT, f)).mtimeMs));
  if (!existsSync(exe) || statSync(exe).mtimeMs < newest) {
    mkdirSync(BUILD, { recursive: true });
    sh('g++', ['-std=c++17', '-O3', '-march=native', '-DNDEBUG', '-isystem', '/usr/include/eigen3', '-Icpp', ...sources, '-o', exe]);
  }
  return exe;
}

export function runNative(exe, args) {
  const out = spawnSync(exe, args, { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (out.status !== 0) throw new Error(`bench_native failed: ${out.stderr}`);
  return out.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}
