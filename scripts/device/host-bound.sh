#!/usr/bin/env bash
# Tenth session, third device call: every GPU test; the CLI tests of the commands the session
# touched; old (build-old, d400ade) vs new (build-gpu) alternating, vecadd 1Mi and 2^28 (2 rounds)
# and the encoder-decoder pipeline (1 round), tables and JSON: host_bound only where samples are
# timed with their launches, the '^' mark, and the figures unchanged. Writes $OUT/hb.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
o=${OUT:-/tmp/out}/hb
device_start hb "$o"

log "gpu tests"
gpu_tests "$o/gpu-tests.txt"
log "cli tests"
cli_tests "$o/cli-tests.txt" test_pipeline test_energy test_cli_tables test_gate test_stream \
  test_timestamps
for r in 1 2; do
  for which in old new; do
    b=$(binary "$which")
    log "vecadd $which $r"
    timeout 120 "$b" vecadd --n 1Mi,2^28 --no-verify --output "$o/vecadd-$which-$r.json" \
      >"$o/vecadd-$which-$r.txt" 2>&1
  done
done
for which in old new; do
  b=$(binary "$which")
  log "pipeline $which"
  timeout 120 "$b" pipeline --scenario encoder-decoder --batch 32 --no-verify \
    --output "$o/pipeline-$which.json" >"$o/pipeline-$which.txt" 2>&1
done
log done
tar -C "${OUT:-/tmp/out}" -cJf "${OUT:-/tmp/out}/hb.tar.xz" hb && rm -rf "$o"
