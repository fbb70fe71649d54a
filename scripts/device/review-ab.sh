#!/usr/bin/env bash
# The ninth session's review: one helper now holds every sample's enqueue behind the blocking
# kernel, and the --energy calls go through two helpers. Old (build-old) vs new (build-gpu)
# binary, alternating, on the recorded figures and the new rows; the [timing] GPU tests; the
# energy paths of vecadd and the pipeline once with the new binary.
#   scripts/device/review-ab.sh OUT_DIR
set -uo pipefail
source "$(dirname "$0")/common.sh"
device_start review "${1:?usage: review-ab.sh OUT_DIR}"
log "GPU tests [timing]"
gpu_tests "$out/gpu-tests.txt" "[timing]"
log "A/B"
AB_ONLY=1 AB_EXTRA='vecadd-2p28|vecadd --n 2^28
vecadd-warm|vecadd --n 1Mi,2Mi,4Mi --warm --timestamps --batch-time 0.01 --timeout 0.5
augment-b256|augment --batch 256 --impl fused --timestamps' \
  timeout 240 scripts/figures-ab.sh build-old/app/gpubench "$bin" "$out/ab" 2 >"$out/ab.txt" 2>&1
grep -v cpu_reference "$out/ab.txt" | tail -30
log "energy, new binary"
"$bin" vecadd --n 2^24 --energy --output "$out/energy-vecadd.json" >"$out/energy-vecadd.txt" 2>&1
"$bin" pipeline --scenario encoder-decoder --mode serial --energy \
  --output "$out/energy-pipeline.json" >"$out/energy-pipeline.txt" 2>&1
grep -h "energy:" "$out"/energy-*.txt
log "done"
