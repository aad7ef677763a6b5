#!/usr/bin/env bash
# Builds the native Catch2 suite with AddressSanitizer, LeakSanitizer and UBSan (CMake preset
# "asan": build-asan/, Debug with Eigen's and libstdc++'s assertions, every sanitizer check fatal)
# and runs it with ctest: a sanitizer report fails the test case it happens in.
#
#   scripts/sanitize.sh                 build and run the whole suite
#   scripts/sanitize.sh -R 'parse: '    extra arguments go to ctest (here: only the parser's cases)
set -euo pipefail
cd "$(dirname "$0")/.."

cmake --preset asan >/dev/null
cmake --build --preset asan
ctest --preset asan "$@"
echo "ok: native suite clean under ASan/LSan/UBSan"
