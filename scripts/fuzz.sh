#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (CMake preset "fuzz": clang++-14 with AddressSanitizer
# and UBSan, into build-fuzz/), then runs each for a bounded time; then the link decoder's target,
# tests/fuzz/fuzz_link.mjs (JavaScript: fast-check damage of links and lesson files, on the built
# package, so the package is built first).
#
#   scripts/fuzz.sh short            ~20 s per target (part of `npm test`)
#   scripts/fuzz.sh long [SECONDS]   SECONDS per target, default 300 (`npm run fuzz`)
#   scripts/fuzz.sh build            build only
#
# Each target starts from the committed seed corpus (tests/fuzz/corpus/<target>, read only) plus
# what earlier runs found (build-fuzz/corpus-<target>, kept between runs). A finding (crash,
# sanitizer report, violated invariant, timeout, out of memory) stops the script with a non-zero
# status; the input is saved as build-fuzz/artifacts/<target>-crash-* and can be replayed with
#   build-fuzz/<target> build-fuzz/artifacts/<file>     (or build-fuzz/replay <file> for fuzz_run)
#   node tests/fuzz/fuzz_link.mjs --replay build-fuzz/artifacts/fuzz_link-*
# Needs clang-14 and libclang-rt-14-dev (Debian); scripts/setup.sh installs them.
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-short}"
case "$mode" in
  short) seconds=20 ;;
  long) seconds="${2:-300}" ;;
  build) seconds=0 ;;
  *) echo "usage: $0 short | long [SECONDS] | build" >&2; exit 2 ;;
esac

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
out=build-fuzz
mkdir -p "$out/artifacts"
[ "$seconds" = 0 ] && exit 0

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

run() {  # run <target> <max_len> [extra libFuzzer flags]
  local target="$1" max_len="$2"; shift 2
  local work="$out/corpus-$target" log="$out/$target.log"
  mkdir -p "$work"
  echo "== fuzzing $target for ${seconds} s"
  local status=0
  nice -n 10 "$out/$target" "$work" "tests/fuzz/corpus/$target" \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2560 \
    -artifact_prefix="$out/artifacts/$target-" -print_final_stats=1 "$@" >"$log" 2>&1 || status=$?
  local execs
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  local corpus
  corpus=$(grep -Eo 'corp: [0-9]+/[0-9a-zA-Z]+' "$log" | tail -1 || true)
  if [ "$status" != 0 ]; then
    echo "!! $target: FINDING (exit $status) after ${execs:-?} executions; log: $log" >&2
    grep -E '\*\*\* fuzz_|ERROR: |runtime error|SUMMARY|Test unit written' "$log" | head -20 >&2 || true
    return "$status"
  fi
  echo "ok $target: ${execs:-?} executions in ${seconds} s, ${corpus:-corpus ?}, no findings"
  echo "$(date -u +%FT%TZ) $target ${seconds}s execs=${execs:-?} ${corpus:-}" >>"$out/history.txt"
}

run fuzz_parse 4096 -dict=tests/fuzz/parse.dict
run fuzz_run 2048
run fuzz_wire 8192

# The link decoder is JavaScript, out of libFuzzer's reach: its own target, on dist/.
bash scripts/build.sh >/dev/null
echo "== fuzzing fuzz_link for ${seconds} s"
log="$out/fuzz_link.log"
if ! nice -n 10 node tests/fuzz/fuzz_link.mjs "$seconds" 2>&1 | tee "$log"; then
  echo "!! fuzz_link: FINDING; log: $log" >&2
  exit 1
fi
echo "$(date -u +%FT%TZ) fuzz_link ${seconds}s $(grep -Eo '[0-9]+ inputs' "$log" | head -1)" >>"$out/history.txt"
