#!/usr/bin/env bash
# Performance regression gate for CI against a stored baseline (docs/ci.md):
#   scripts/ci-regression.sh BASELINE [OUT_DIR]
# BASELINE is a folder of result files (several runs of the config with the baseline build, e.g.
# baselines/h200/run-1.json ... run-5.json) or one result file. Runs the config RUNS times
# (separate processes: the noise between processes is what a verdict must account for), writes
# OUT_DIR/run-N.json (default: ci-out; together a candidate baseline), run.md (the first run as a
# markdown table), compare.md, compare.json and junit.xml, and exits with:
#   0 no regression; 1 a verification failure, or a gated slowdown whose whole interval lies
#   beyond the threshold; 2 bad input or too little of the baseline compared; 3 CUDA error;
#   77 no usable GPU; 130 interrupted.
# Environment: GPUBENCH (binary, default: gpubench on PATH, else build/app/gpubench),
#              RUNS (default 5), THRESHOLD (default 5%: GPU rows), CLOCK (default all: both
#              clocks judged; gpu or host judges one), GATE (default unset: compare's default, GPU
#              rows that are not host-bound; host, host-bound or all gates those rows too),
#              HOST_THRESHOLD and HOST_BOUND_THRESHOLD (their thresholds; setting one gates its
#              rows), CONFIG (default configs/ci-smoke.json).
# scripts/ab-gate.sh is the better gate when both builds are at hand: it interleaves them.
set -uo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 BASELINE(.json|/) [OUT_DIR]" >&2
  exit 2
fi
baseline=$1
out_dir=${2:-ci-out}
root=$(cd "$(dirname "$0")/.." && pwd)
config=${CONFIG:-$root/configs/ci-smoke.json}
threshold=${THRESHOLD:-5%}
runs=${RUNS:-5}
gpubench=${GPUBENCH:-$(command -v gpubench || echo "$root/build/app/gpubench")}

base_files=()
if [[ -d $baseline ]]; then
  shopt -s nullglob
  base_files=("$baseline"/*.json)
  shopt -u nullglob
elif [[ -r $baseline ]]; then
  base_files=("$baseline")
fi
if [[ ${#base_files[@]} -eq 0 ]]; then
  echo "ci-regression: cannot read the baseline: no result files at $baseline" >&2
  exit 2
fi
if ! [[ $runs =~ ^[0-9]+$ ]] || ((runs < 1)); then
  echo "ci-regression: RUNS=$runs is not a positive integer" >&2
  exit 2
fi
mkdir -p "$out_dir" || exit 2
rm -f "$out_dir"/run-*.json

verification_failed=0
for ((r = 1; r <= runs; r++)); do
  format_args=(-q)
  [[ $r -eq 1 ]] && format_args=(--format md)
  if [[ $r -eq 1 ]]; then
    "$gpubench" run "$config" --output "$out_dir/run-$r.json" "${format_args[@]}" >"$out_dir/run.md"
  else
    "$gpubench" run "$config" --output "$out_dir/run-$r.json" "${format_args[@]}" >/dev/null
  fi
  run_status=$?
  if [[ $run_status -eq 1 ]]; then
    verification_failed=1
  elif [[ $run_status -ne 0 ]]; then
    echo "ci-regression: run $r failed (exit $run_status); nothing to compare" >&2
    exit $run_status
  fi
done
cat "$out_dir/run.md"

# compare's defaults: only GPU-clock rows that are not host-bound are gated; CPU-reference
# timings on a shared runner drift by 10-20% between identical runs (measured on an H200 host),
# so host-clock and host-bound rows are shown, marked not gated, unless GATE asks for them.
gate_args=()
[[ ${CLOCK:-all} != all ]] && gate_args+=(--clock "$CLOCK")
[[ -n ${GATE:-} ]] && gate_args+=(--gate "$GATE")
[[ -n ${HOST_THRESHOLD:-} ]] && gate_args+=(--host-threshold "$HOST_THRESHOLD")
[[ -n ${HOST_BOUND_THRESHOLD:-} ]] && gate_args+=(--host-bound-threshold "$HOST_BOUND_THRESHOLD")
"$gpubench" compare --base "${base_files[@]}" --new "$out_dir"/run-*.json \
  --threshold "$threshold" "${gate_args[@]}" --format md \
  --output "$out_dir/compare.json" --junit "$out_dir/junit.xml" | tee "$out_dir/compare.md"
compare_status=${PIPESTATUS[0]}

if [[ $compare_status -ne 0 ]]; then
  echo "ci-regression: compare exited $compare_status (1: a slowdown beyond $threshold; 2: bad" \
    "input or too little compared)" >&2
  exit $compare_status
fi
if [[ $verification_failed -ne 0 ]]; then
  echo "ci-regression: verification failed in a run (see run.md)" >&2
  exit 1
fi
exit 0
