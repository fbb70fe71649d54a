#!/usr/bin/env bash
# Eleventh session: the --energy step watcher sleeps between counter steps instead of reading the
# counter back to back (which kept a core busy). Old (build-old) vs new (build-gpu), alternating:
# encoder-decoder --mode streams --energy, 3 rounds, each with host_pace_sampler.py attached (the
# watcher thread's CPU); vecadd 2^24 and augment b256 --energy, 1 round; GPU tests [energy]. $OUT/watch.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
o=${OUT:-/tmp/out}/watch
device_start watch "$o"

log "gpu tests"
gpu_tests "$o/gpu-tests.txt" "[energy]"

one() { # TAG WHICH ARGS...
  local tag=$1 which=$2
  shift 2
  log "$tag $which"
  "$(binary "$which")" "$@" --energy --no-verify -q --format json --output "$o/$tag-$which.json" \
    >/dev/null 2>"$o/$tag-$which.err" &
  local pid=$!
  python3 scripts/device/host_pace_sampler.py "$pid" "$o/$tag-$which.pace.jsonl" 0.05 &
  wait "$pid"
  echo "exit $?" >>"$o/$tag-$which.err"
  wait
}
for r in 1 2 3; do
  for w in old new; do
    one "encdec-$r" "$w" pipeline --scenario encoder-decoder --batch 32 --mode streams
  done
done
for w in old new; do one vecadd "$w" vecadd --n 2^24; done
for w in new old; do one augment "$w" augment --batch 256 --impl fused; done
log done
tar -C "${OUT:-/tmp/out}" -cJf "${OUT:-/tmp/out}/watch.tar.xz" watch && rm -rf "$o"
