#!/usr/bin/env bash
# `npm start`: setup, build the package, then build the static site (scripts/build-site.mjs) and
# serve it (scripts/serve.mjs), printing its URL. `npm run dev` serves the sources instead.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/build.sh
exec node scripts/serve.mjs "$@"
