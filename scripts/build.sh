#!/usr/bin/env bash
# `npm run build`: builds the npm package into dist/ (the wasm module from CMakeLists.txt under
# emcmake, plus the JS entry points, types and CLI from web/lib). Runs no tests.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f build-wasm/build.ninja ]; then
  # The emulator flag replaces emcmake's default, which Node 20 rejects (TOOLCHAIN.md quirk 2).
  emcmake cmake -S . -B build-wasm -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node
fi
cmake --build build-wasm --target attention_wasm attention_fast_wasm -j2

rm -rf dist
mkdir -p dist
cp build-wasm/attention.js build-wasm/attention.wasm build-wasm/attention-fast.js build-wasm/attention-fast.wasm dist/
cp web/lib/*.js web/lib/*.d.ts dist/
chmod +x dist/cli.js
echo "build: dist/ ready: $(cd dist && ls | tr '\n' ' ')"
