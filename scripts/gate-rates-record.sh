#!/usr/bin/env bash
# Records, on one GPU, the runs that measure the regression gate's false-alarm and detection
# rates (docs/ci.md), judges them with scripts/gate-rates.sh, and times the interleaved gate.
#   scripts/gate-rates-record.sh OUT_DIR     (GPUBENCH: binary, default build-gpu/app/gpubench)
# 28 runs of configs/ci-smoke.json (~5 s each) and ~230 comparisons: ~4-5 minutes.
set -uo pipefail
out=${1:?usage: $0 OUT_DIR}
bin=${GPUBENCH:-build-gpu/app/gpubench}
cfg=configs/ci-smoke.json
mkdir -p "$out"
log="$out/log.txt"
: >"$log"
t_start=$(date +%s)
say() { echo "$*" | tee -a "$log"; }

runs() { # prefix count [env...]
  local prefix=$1 count=$2
  shift 2
  for ((i = 1; i <= count; i++)); do
    local t0
    t0=$(date +%s%N)
    env "$@" "$bin" run "$cfg" --output "$out/$prefix-$i.json" -q >>"$log" 2>&1
    local rc=$?
    say "$prefix-$i: exit $rc, $((($(date +%s%N) - t0) / 1000000)) ms"
  done
}

# ---- 1. ten runs of one binary (separate processes) ----
runs base 10
# ---- 2. detection: a calibrated 10% and 5% delay on vecadd's end_to_end (test-only knob) ----
runs slow10 8 GPUBENCH_TEST_SLOWDOWN=end_to_end:0.10
runs slow5 6 GPUBENCH_TEST_SLOWDOWN=end_to_end:0.05
# ---- 3. cuBLAS's workspace fixed: does it narrow the spread between processes? ----
runs cublasws 4 CUBLAS_WORKSPACE_CONFIG=:4096:8
say "runs done at $(($(date +%s) - t_start)) s"

# ---- 4. comparisons and rates, the way docs/ci.md recommends (scripts/gate-rates.sh) ----
GPUBENCH=$bin scripts/gate-rates.sh "$out"
say "comparisons done at $(($(date +%s) - t_start)) s"

# ---- 5. the interleaved gate, timed (one binary on both sides: must pass) ----
t0=$(date +%s)
ROUNDS=5 scripts/ab-gate.sh "$bin" "$bin" "$cfg" "$out/ab" >"$out/ab.log" 2>&1
ab_rc=$?
ab_s=$(($(date +%s) - t0))
say "interleaved gate (5 rounds, A = B): exit $ab_rc in $ab_s s (target < 300 s)"

# ---- 6. summary ----
say "== interleaved gate (scripts/ab-gate.sh, 5 rounds, same binary both sides)"
say "  exit $ab_rc (target 0) in $ab_s s (target < 300 s)"
say "total $(($(date +%s) - t_start)) s"
