#!/usr/bin/env bash
# Tenth session, second device call: the --energy busy fraction from a launch-free chunk.
# GPU tests [energy] and [timing]; old (build-old) vs new (build-gpu) alternating: encoder-decoder
# pipeline --energy (2 rounds), vecadd 2^24 and augment b256 --energy (1 round); the full pipeline
# --batch 32 --energy with the new binary; the host-overhead probe with the GPU held. $OUT/busy.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
o=${OUT:-/tmp/out}/busy
device_start busy "$o"

log "gpu tests"
gpu_tests "$o/gpu-tests.txt" "[energy],[timing]"

run_pair() { # TAG ARGS...
  local tag=$1
  shift
  for which in old new; do
    local b
    b=$(binary "$which")
    log "$tag $which"
    timeout 200 "$b" "$@" --energy --no-verify -q --format json --output "$o/$tag-$which.json" \
      >/dev/null 2>"$o/$tag-$which.err"
  done
}
for r in 1 2; do
  run_pair "encdec-$r" pipeline --scenario encoder-decoder --batch 32 --mode serial,streams,graph
done
run_pair vecadd vecadd --n 2^24
run_pair augment augment --batch 256 --impl fused

log "pipeline full new"
timeout 200 "$bin" pipeline --batch 32 --mode serial,streams,graph --energy --no-verify \
  --format json --output "$o/pipeline-full-new.json" >"$o/pipeline-full-new.txt" 2>&1

log probe
nvcc -O2 -std=c++17 -arch=sm_90 docs/results/h200-2026-12-02-host/probe/host_overhead_probe.cu \
  -lcublas -lcublasLt -o /tmp/host_probe >"$o/probe-build.txt" 2>&1
timeout 120 /tmp/host_probe >"$o/probe-held.txt" 2>&1
log done
tar -C "${OUT:-/tmp/out}" -cJf "${OUT:-/tmp/out}/busy.tar.xz" busy && rm -rf "$o"
