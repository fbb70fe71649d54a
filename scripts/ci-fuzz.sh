#!/usr/bin/env bash
# Fuzzing for CI (docs/reliability.md): builds the libFuzzer targets of tests/fuzz with clang
# (ASan + UBSan), replays every regression input (tests/fuzz/regressions/TARGET/, inputs that once
# crashed), then fuzzes each target for a bounded time from its seed corpus
# (tests/fuzz/corpus/TARGET/; the inputs are structure-aware, tests/fuzz/expand.hpp, and seeds
# reach nesting past 100,000 levels and inputs past 1 MB). Any crash, sanitizer finding, leak or
# timeout fails the script; the input that caused it is kept in BUILD_DIR/artifacts/.
#   scripts/ci-fuzz.sh [BUILD_DIR]     (default build-fuzz)
# Environment: FUZZ_SECONDS per target (default 60), FUZZ_TARGETS (default: all four),
#              CLANG_CXX (default clang++-14, else clang++), JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${1:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-sizes run_file result_file reference_file}
jobs=${JOBS:-2}
cxx=${CLANG_CXX:-$(command -v clang++-14 || command -v clang++)}
export PATH=/usr/local/cuda/bin:$PATH

start=$SECONDS
# A unity build, warnings left to the test build, as in scripts/ci-sanitize.sh (it says why).
cmake -S tests/fuzz -B "$build" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES:-90}" -DCMAKE_UNITY_BUILD=ON \
  -DGPUBENCH_WERROR=OFF >/dev/null
cmake --build "$build" -j"$jobs" --target $(printf '%s_fuzz ' $targets)
echo "ci-fuzz: built in $((SECONDS - start)) s"

export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p "$build/artifacts"
for t in $targets; do
  regressions=$root/tests/fuzz/regressions/$t
  if [[ -d $regressions ]] && compgen -G "$regressions/*" >/dev/null; then
    "$build/${t}_fuzz" -runs=0 "$regressions"/* 2>"$build/$t-regressions.log" ||
      { cat "$build/$t-regressions.log"; echo "ci-fuzz: $t: a regression input fails" >&2; exit 1; }
  fi
done

# The targets fuzz side by side, each for FUZZ_SECONDS of wall time, from a scratch copy of its
# seed corpus (what the fuzzer learns stays out of the source tree).
declare -A pids
for t in $targets; do
  work=$build/corpus-$t
  rm -rf "$work" && mkdir -p "$work" && cp "$root/tests/fuzz/corpus/$t"/* "$work"/
  "$build/${t}_fuzz" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" "$work" >"$build/$t.log" 2>&1 &
  pids[$t]=$!
done
failed=0
summary=()
for t in $targets; do
  if ! wait "${pids[$t]}"; then
    tail -n 60 "$build/$t.log"
    echo "ci-fuzz: $t: crash or sanitizer finding; input kept in $build/artifacts/" >&2
    failed=1
    continue
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/$t.log")
  summary+=("$t: ${runs:-?} executions in ${seconds} s, 0 crashes")
done
[[ $failed -eq 0 ]] || exit 1
printf 'ci-fuzz: %s\n' "${summary[@]}"
echo "ci-fuzz: total $((SECONDS - start)) s"
