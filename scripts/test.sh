#!/usr/bin/env bash
# `npm test`: setup, the Catch2 suite natively and as wasm under Node, the package's JS tests, and
# the page's browser tests when they exist. Stops at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

echo "== native build and ctest"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
ctest --test-dir build --output-on-failure --no-tests=error -j2

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
fi
