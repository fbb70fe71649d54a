#!/usr/bin/env bash
# Tenth session, first device call: (1) the host's cost per enqueued call of the encoder-decoder
# pipeline (a stand-alone probe), (2) where warm vecadd stops running from L2 (a fine sweep from
# 256Ki to 4Mi elements, warm and cold, with timestamps), (3) the encoder-decoder energy CV with
# and without the process held to a few cores. Writes everything under $OUT/host-l2.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
o=${OUT:-/tmp/out}/host-l2
device_start host-l2 "$o"
{ lscpu; cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>&1; nproc; } >"$o/cpu.txt" 2>&1

log probe
nvcc -O2 -std=c++17 -arch=sm_90 docs/results/h200-2026-12-02-host/probe/host_overhead_probe.cu \
  -lcublas -lcublasLt -o /tmp/host_probe >"$o/probe-build.txt" 2>&1
for r in 1 2; do timeout 120 /tmp/host_probe >"$o/probe-$r.txt" 2>&1; done
cat "$o/probe-1.txt"

sizes=256Ki,512Ki,1Mi,1536Ki,2Mi,2304Ki,2560Ki,2816Ki,3Mi,3328Ki,3584Ki,4Mi,6Mi
for r in 1 2; do
  for w in warm cold; do
    log "l2 $w $r"
    flag=()
    [[ $w == warm ]] && flag=(--warm)
    timeout 200 "$bin" vecadd --n "$sizes" "${flag[@]}" --timestamps --no-verify -q \
      --format json --output "$o/l2-$w-$r.json" >/dev/null 2>"$o/l2-$w-$r.err"
  done
done

for r in 1 2; do
  for pin in all 2-5; do
    log "pipeline $pin $r"
    pre=()
    [[ $pin != all ]] && pre=(taskset -c "$pin")
    timeout 150 "${pre[@]}" "$bin" pipeline --scenario encoder-decoder --batch 32 \
      --mode serial,streams,graph --energy --no-verify --format json \
      --output "$o/pipe-$pin-$r.json" >"$o/pipe-$pin-$r.txt" 2>&1
  done
done
log done
tar -C "${OUT:-/tmp/out}" -cJf "${OUT:-/tmp/out}/host-l2.tar.xz" host-l2 && rm -rf "$o"
