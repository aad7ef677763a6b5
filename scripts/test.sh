#!/usr/bin/env bash
# `npm test`, as CI runs it (.ci/run): setup, then every suite, stopping at the first failure: the
# Catch2 suite natively, under sanitizers and as wasm under Node, short fuzzing runs, the package's
# JS tests and the browser tests. One part at a time: npm run test:cpp | test:js | test:browser.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

echo "== native build and ctest"
npm run --silent test:cpp

echo "== the native suite under AddressSanitizer and UBSan, then each fuzzer for a short run"
bash scripts/sanitize.sh
bash scripts/fuzz.sh short

echo "== the same Catch2 suite as wasm under Node"
npm run --silent test:wasm

echo "== the formatters: prettier (JS) and clang-format-14 (C++) leave every tracked file as it is (scripts/format.sh)"
npm run --silent format:check

echo "== eslint over web/: a few rules, and no import cycle (eslint.config.js)"
npm run --silent lint

echo "== tsc over web/ and tests/types: JSDoc checked, the hand-written .d.ts held to the JS (tsconfig.json)"
npm run --silent typecheck

echo "== JS tests (node --test)"
npm run --silent test:js

echo "== browser tests (node --test, Chromium)"
npm run --silent test:browser
