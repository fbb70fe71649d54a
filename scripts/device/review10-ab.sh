#!/usr/bin/env bash
# Tenth session's review: the two delay-kernel holds (the sampler's launch-free reference, the
# busy fraction of --energy) share launch_free_hold_ns. Every GPU test; old (build-old, a086e60)
# vs new (build-gpu) alternating, 2 rounds: the encoder-decoder pipeline with --energy (both holds)
# and vecadd 1Mi,2^28. Writes $OUT/r10.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
o=${OUT:-/tmp/out}/r10
device_start r10 "$o"
log "gpu tests"
gpu_tests "$o/gpu-tests.txt"
log "cli tests"
cli_tests "$o/cli-tests.txt" test_energy test_timestamps
for r in 1 2; do
  for which in old new; do
    b=$(binary "$which")
    log "round $r $which"
    timeout 120 "$b" pipeline --scenario encoder-decoder --batch 32 --energy --no-verify \
      --output "$o/pipeline-$which-$r.json" >"$o/pipeline-$which-$r.txt" 2>&1
    timeout 120 "$b" vecadd --n 1Mi,2^28 --no-verify --output "$o/vecadd-$which-$r.json" \
      >"$o/vecadd-$which-$r.txt" 2>&1
  done
done
log done
tar -C "${OUT:-/tmp/out}" -cJf "${OUT:-/tmp/out}/r10.tar.xz" r10 && rm -rf "$o"
