#!/usr/bin/env bash
# Eleventh session: why the encoder-decoder's host-launched rows change pace from window to window.
# Runs pipeline --scenario encoder-decoder --batch 32 --mode streams --energy (serial runs too) four
# times, alternating plain and under SCHED_FIFO (chrt -f 50, where allowed), each with
# host_pace_sampler.py polling /proc at 20 Hz (steal, every thread's CPU and run-queue wait).
# Then the encoder-decoder with --energy on the whole pipeline once more. $OUT/pace.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
o=${OUT:-/tmp/out}/pace
device_start pace "$o"
{ nproc; grep -m1 "model name" /proc/cpuinfo; cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>&1
  id -u; uptime; cat /proc/loadavg; } >"$o/host.txt" 2>&1

one() { # TAG PREFIX...
  local tag=$1
  shift
  log "$tag"
  "$@" "$bin" pipeline --scenario encoder-decoder --batch 32 --mode streams --energy --no-verify \
    --format json --output "$o/$tag.json" >"$o/$tag.txt" 2>&1 &
  local pid=$!
  python3 scripts/device/host_pace_sampler.py "$pid" "$o/$tag.pace.jsonl" 0.05 &
  wait "$pid"
  echo "exit $?" >>"$o/$tag.txt"
  wait
}
chrt -f 50 true 2>"$o/chrt.txt" && fifo=(chrt -f 50) || fifo=(env)
for r in 1 2; do
  one "plain-$r" env
  one "fifo-$r" "${fifo[@]}"
done
log done
tar -C "${OUT:-/tmp/out}" -cJf "${OUT:-/tmp/out}/pace.tar.xz" pace && rm -rf "$o"
