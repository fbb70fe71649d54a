#!/usr/bin/env bash
# Eleventh session: --energy claims no busy fraction for a body that waits inside its launches
# (pipeline's cpu-augment), and says HOST-BOUND. Every GPU test (new); old (build-old) vs new
# (build-gpu), alternating: augment-train --mode cpu-augment --energy, vecadd 2^24, augment b256
# and encoder-decoder --mode streams with --energy. $OUT/wait.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
o=${OUT:-/tmp/out}/wait
device_start wait "$o"

log "gpu tests"
gpu_tests "$o/gpu-tests.txt"

pair() { # TAG ARGS...
  local tag=$1
  shift
  for w in old new; do
    log "$tag $w"
    timeout 200 "$(binary "$w")" "$@" --energy --no-verify --output "$o/$tag-$w.json" \
      >"$o/$tag-$w.txt" 2>&1
  done
}
pair cpuaug pipeline --scenario augment-train --batch 32 --mode cpu-augment
pair vecadd vecadd --n 2^24
pair augment augment --batch 256 --impl fused
pair encdec pipeline --scenario encoder-decoder --batch 32 --mode streams
log done
tar -C "${OUT:-/tmp/out}" -cJf "${OUT:-/tmp/out}/wait.tar.xz" wait && rm -rf "$o"
