#!/usr/bin/env bash
# The formatters: prettier for the JavaScript (.prettierrc.json; .prettierignore leaves out what is
# built, vendored or data), clang-format-14 for the C++ (.clang-format). Files are those git tracks.
#   scripts/format.sh           format them in place
#   scripts/format.sh --check   fail, naming the files, if any is not formatted (run by npm test)
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t js < <(git ls-files '*.js' '*.mjs')
mapfile -t cpp < <(git ls-files 'cpp/*.cpp' 'cpp/*.h' 'tests/cpp/*.cpp' 'tests/cpp/*.h' 'tests/fuzz/*.cpp' 'tests/fuzz/*.h' 'bench/*.cpp')
if [ "${1:-}" = "--check" ]; then
  npx prettier --check --log-level warn "${js[@]}"
  clang-format-14 --dry-run --Werror "${cpp[@]}"
else
  npx prettier --write --log-level warn "${js[@]}"
  clang-format-14 -i "${cpp[@]}"
fi
