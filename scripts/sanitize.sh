#!/usr/bin/env bash
# Builds the native Catch2 suite (the same CMake target as `npm test`) with AddressSanitizer,
# LeakSanitizer and UBSan into build-asan/, and runs it. Any sanitizer report fails the run:
# every check is fatal (-fno-sanitize-recover=all, halt_on_error), and the log is searched for
# reports as well. Debug build type: Eigen's own bounds assertions stay on, and libstdc++'s
# assertions (_GLIBCXX_ASSERTIONS: empty std::optional, vector bounds) are enabled too.
#
#   scripts/sanitize.sh            build and run the whole suite
#   scripts/sanitize.sh "[tag]"    build and run part of it (Catch2 test spec)
set -euo pipefail
cd "$(dirname "$0")/.."

CXX="${SANITIZE_CXX:-g++}"
flags="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all -D_GLIBCXX_ASSERTIONS"

echo "== configuring build-asan ($CXX, $flags)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
echo "== building build-asan/attn_tests"
cmake --build build-asan -j2 --target attn_tests

export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
log=build-asan/attn_tests.log
echo "== running build-asan/attn_tests under ASan/LSan/UBSan"
status=0
build-asan/attn_tests "$@" >"$log" 2>&1 || status=$?
tail -4 "$log"
if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: (Address|Undefined|Leak)' "$log"; then
  echo "!! sanitizer report (full log: $log):" >&2
  grep -E -A12 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$log" | head -60 >&2
  exit 1
fi
if [ "$status" != 0 ]; then
  echo "!! the suite failed under the sanitizers (exit $status); log: $log" >&2
  exit "$status"
fi
echo "ok: native suite clean under ASan/LSan/UBSan"
