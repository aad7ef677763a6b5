#!/usr/bin/env bash
# `npm start`: setup, build, then serve the explorer page (scripts/serve.mjs) or, until the page
# exists, print seed 000's trace as tables with the CLI.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/build.sh
if [ -f scripts/serve.mjs ]; then
  exec node scripts/serve.mjs "$@"
fi
node dist/cli.js run --table examples/seed-000.json
