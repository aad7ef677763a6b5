#!/usr/bin/env bash
# `npm test`: setup, the Catch2 suite natively, under sanitizers and as wasm under Node, short
# fuzzing runs, the package's JS tests and the browser tests. Stops at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

echo "== native build and ctest"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
ctest --test-dir build --output-on-failure --no-tests=error -j2

echo "== the native suite under AddressSanitizer and UBSan, then each fuzzer for a short run"
bash scripts/sanitize.sh
bash scripts/fuzz.sh short

echo "== wasm package, then the same Catch2 suite as wasm under Node"
bash scripts/build.sh
cmake --build build-wasm -j2
ctest --test-dir build-wasm --output-on-failure --no-tests=error -j2

echo "== JS tests (node --test)"
node --test tests/js/*.test.mjs

if [ -f tests/browser/run.mjs ]; then
  echo "== browser tests"
  node tests/browser/run.mjs
  node tests/browser/embed.test.mjs
  node tests/browser/robustness.test.mjs
fi
