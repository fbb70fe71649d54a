#!/usr/bin/env bash
# Fuzzing for CI (docs/reliability.md): builds the libFuzzer targets of tests/fuzz with clang
# (ASan + UBSan), replays every regression input (tests/fuzz/regressions/TARGET/, inputs that once
# crashed), then fuzzes each target for a bounded time from its seed corpus
# (tests/fuzz/corpus/TARGET/). Any crash, sanitizer finding, leak or timeout fails the script;
# the input that caused it is kept in BUILD_DIR/artifacts/.
#   scripts/ci-fuzz.sh [BUILD_DIR]     (default build-fuzz)
# Environment: FUZZ_SECONDS per target (default 60), FUZZ_TARGETS (default: all three),
#              CLANG_CXX (default clang++-14, else clang++), JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${1:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-sizes run_file result_file}
jobs=${JOBS:-2}
cxx=${CLANG_CXX:-$(command -v clang++-14 || command -v clang++)}
export PATH=/usr/local/cuda/bin:$PATH

start=$SECONDS
cmake -S tests/fuzz -B "$build" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES:-90}" >/dev/null
cmake --build "$build" -j"$jobs" --target $(printf '%s_fuzz ' $targets)
echo "ci-fuzz: built in $((SECONDS - start)) s"

export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p "$build/artifacts"
summary=()
for t in $targets; do
  fuzzer=$build/${t}_fuzz
  regressions=$root/tests/fuzz/regressions/$t
  if [[ -d $regressions ]] && compgen -G "$regressions/*" >/dev/null; then
    "$fuzzer" -runs=0 "$regressions"/* 2>"$build/$t-regressions.log" ||
      { cat "$build/$t-regressions.log"; echo "ci-fuzz: $t: a regression input fails" >&2; exit 1; }
  fi
  # A scratch copy of the seed corpus: what the fuzzer learns stays out of the source tree.
  work=$build/corpus-$t
  rm -rf "$work" && mkdir -p "$work" && cp "$root/tests/fuzz/corpus/$t"/* "$work"/
  log=$build/$t.log
  if ! "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" "$work" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "ci-fuzz: $t: crash or sanitizer finding; input kept in $build/artifacts/" >&2
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  summary+=("$t: ${runs:-?} executions in ${seconds} s, 0 crashes")
done
printf 'ci-fuzz: %s\n' "${summary[@]}"
echo "ci-fuzz: total $((SECONDS - start)) s"
