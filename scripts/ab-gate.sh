#!/usr/bin/env bash
# Interleaved A/B regression gate (docs/ci.md): runs two builds alternately on one GPU, ROUNDS
# rounds (A B, then B A, ...), so drift in clocks or temperature falls on both sides, then judges
# B against A with `gpubench compare --base A-runs --new B-runs`.
#   scripts/ab-gate.sh BINARY_A BINARY_B [CONFIG] [OUT_DIR]
# CONFIG defaults to configs/ci-smoke.json, OUT_DIR to ab-out. Writes OUT_DIR/a-N.json,
# OUT_DIR/b-N.json, compare.md, compare.json, junit.xml and exits with compare's code:
#   0 no regression; 1 a gated slowdown whose whole interval lies beyond the threshold, or a
#   verification failure in a run of B; 2 bad input or too little compared; 3 CUDA error;
#   77 no usable GPU; 130 interrupted.
# Environment: ROUNDS (default 5: 5 runs a side, the fewest for a 90% interval that is not just
# the extremes), THRESHOLD (default 5%: GPU rows), CLOCK (default all: both clocks judged; gpu
# or host judges one), GATE (default unset: compare's default, GPU rows that are not host-bound,
# or host-clock rows when the runs have no GPU-clock row, as a CPU-only config; host,
# host-bound or all gates those rows too), HOST_THRESHOLD and HOST_BOUND_THRESHOLD (their
# thresholds; setting one gates its rows), COMPARE_WITH (binary that runs compare; default
# BINARY_B).
set -uo pipefail

if [[ $# -lt 2 || $# -gt 4 ]]; then
  echo "usage: $0 BINARY_A BINARY_B [CONFIG] [OUT_DIR]" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
bin_a=$1
bin_b=$2
config=${3:-$root/configs/ci-smoke.json}
out_dir=${4:-ab-out}
rounds=${ROUNDS:-5}
threshold=${THRESHOLD:-5%}
compare_bin=${COMPARE_WITH:-$bin_b}
for b in "$bin_a" "$bin_b"; do
  if [[ ! -x $b ]]; then
    echo "ab-gate: $b is not an executable" >&2
    exit 2
  fi
done
if ! [[ $rounds =~ ^[0-9]+$ ]] || ((rounds < 1)); then
  echo "ab-gate: ROUNDS=$rounds is not a positive integer" >&2
  exit 2
fi
mkdir -p "$out_dir" || exit 2
rm -f "$out_dir"/a-*.json "$out_dir"/b-*.json

b_failed_verification=0
run_one() { # side round
  local side=$1 round=$2 bin
  [[ $side == a ]] && bin=$bin_a || bin=$bin_b
  "$bin" run "$config" --output "$out_dir/$side-$round.json" -q
  local rc=$?
  if [[ $rc -eq 1 && $side == b ]]; then
    b_failed_verification=1
  elif [[ $rc -ne 0 && $rc -ne 1 ]]; then
    echo "ab-gate: run $round of ${side^^} ($bin) exited $rc" >&2
    exit $rc
  fi
}

start=$(date +%s)
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2 == 1)); then
    run_one a "$r"
    run_one b "$r"
  else
    run_one b "$r"
    run_one a "$r"
  fi
  echo "ab-gate: round $r of $rounds done ($(($(date +%s) - start)) s)" >&2
done

# compare's defaults gate GPU-clock rows that are not host-bound; host-clock and host-bound rows
# are shown, marked not gated, unless GATE asks for them (docs/compare.md).
gate_args=()
# The clock the files support: runs without a GPU-clock row (a CPU-only run file, or --cpu-only in
# the config) have nothing the default gate judges, so their host-clock rows are gated instead.
clock=${CLOCK:-all}
if [[ -z ${GATE:-} && $clock != host ]] && ! grep -q '"clock": *"gpu"' "$out_dir"/a-*.json; then
  if [[ $clock == gpu ]]; then
    echo "ab-gate: CLOCK=gpu, but the runs of A hold no GPU-clock measurement (CPU references" \
      "only); use CLOCK=host or CLOCK=all" >&2
    exit 2
  fi
  echo "ab-gate: the runs hold host-clock measurements only (CPU references): gating those" \
    "(--gate host, threshold ${HOST_THRESHOLD:-25%})" >&2
  gate_args+=(--gate host)
fi
[[ $clock != all ]] && gate_args+=(--clock "$clock")
[[ -n ${GATE:-} ]] && gate_args+=(--gate "$GATE")
[[ -n ${HOST_THRESHOLD:-} ]] && gate_args+=(--host-threshold "$HOST_THRESHOLD")
[[ -n ${HOST_BOUND_THRESHOLD:-} ]] && gate_args+=(--host-bound-threshold "$HOST_BOUND_THRESHOLD")
"$compare_bin" compare --base "$out_dir"/a-*.json --new "$out_dir"/b-*.json \
  --threshold "$threshold" "${gate_args[@]}" --format md \
  --output "$out_dir/compare.json" --junit "$out_dir/junit.xml" | tee "$out_dir/compare.md"
status=${PIPESTATUS[0]}
echo "ab-gate: $rounds rounds and the comparison took $(($(date +%s) - start)) s" >&2
if [[ $status -ne 0 ]]; then
  echo "ab-gate: compare exited $status (1: a slowdown beyond $threshold; 2: bad input or too " \
    "little compared)" >&2
  exit $status
fi
if [[ $b_failed_verification -ne 0 ]]; then
  echo "ab-gate: verification failed in a run of B" >&2
  exit 1
fi
exit 0
