#!/usr/bin/env bash
# `npm run build`: builds the npm package into dist/ (the wasm modules from CMakeLists.txt with the
# CMake preset "wasm", plus the JS entry points, types and CLI from web/lib). Runs no tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# CMakePresets.json's "wasm" preset, configured every time so that changed flags apply.
cmake --preset wasm >/dev/null
cmake --build --preset wasm --target attention_wasm attention_walkthroughs_wasm attention_fast_wasm

rm -rf dist
mkdir -p dist
cp build-wasm/attention.js build-wasm/attention.wasm build-wasm/attention-walkthroughs.js \
  build-wasm/attention-walkthroughs.wasm build-wasm/attention-fast.js build-wasm/attention-fast.wasm dist/
cp web/lib/*.js web/lib/*.d.ts dist/
chmod +x dist/cli.js
echo "build: dist/ ready: $(cd dist && ls | tr '\n' ' ')"
