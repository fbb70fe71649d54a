#!/usr/bin/env bash
# Tenth session, last device call: four more warm rounds at the edge of the L2 knee (24, 27 and
# 30 MiB working sets, timestamps rows), and the encoder-decoder pipeline's energy table from the
# final build. Writes $OUT/edge.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
o=${OUT:-/tmp/out}/edge
device_start edge "$o"
for r in 3 4 5 6; do
  log "warm $r"
  timeout 100 "$bin" vecadd --n 2Mi,2304Ki,2560Ki --warm --timestamps --no-verify -q \
    --format json --output "$o/warm-$r.json" >/dev/null 2>"$o/warm-$r.err"
done
log pipeline
timeout 150 "$bin" pipeline --scenario encoder-decoder --batch 32 --mode serial,streams,graph \
  --energy --no-verify >"$o/pipeline-energy.txt" 2>&1
log done
tar -C "${OUT:-/tmp/out}" -cJf "${OUT:-/tmp/out}/edge.tar.xz" edge && rm -rf "$o"
