#!/usr/bin/env bash
# Eleventh session: does the CPU the feeding thread runs on set the host-launched rows' pace?
# The GPU's NUMA node and local CPUs as the VM sees them; then encoder-decoder --mode streams
# (timed rows, no energy) pinned to each CPU in turn, twice; then --energy pinned to the fastest
# and the slowest CPU of the sweep, alternating, twice each. $OUT/place.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
o=${OUT:-/tmp/out}/place
device_start place "$o"
{
  nvidia-smi topo -m
  lscpu
  for d in /sys/bus/pci/devices/*; do
    [[ $(cat "$d/vendor" 2>/dev/null) == 0x10de ]] || continue
    echo "$d numa_node=$(cat "$d/numa_node") local_cpulist=$(cat "$d/local_cpulist")"
  done
  command -v numactl && numactl -H
} >"$o/topo.txt" 2>&1

cpus=$(nproc)
for pass in 1 2; do
  for ((k = 0; k < cpus; ++k)); do
    taskset -c "$k" "$bin" pipeline --scenario encoder-decoder --batch 32 --mode streams \
      --no-verify -q --format json --output "$o/sweep-$pass-cpu$k.json" >/dev/null 2>>"$o/sweep.err"
  done
  log "sweep $pass"
done
read -r fast slow < <(python3 - "$o" <<'PY'
import glob, json, sys
rate = {}
for f in glob.glob(sys.argv[1] + "/sweep-*-cpu*.json"):
    k = int(f.rsplit("cpu", 1)[1].split(".")[0])
    for m in json.load(open(f))["results"][0]["measurements"]:
        if m["name"] == "streams":
            rate.setdefault(k, []).append(m["stats"]["median"])
for k in sorted(rate):
    print(f"cpu {k}: streams {' '.join(f'{v * 1e6:.1f}' for v in rate[k])} us/step", file=sys.stderr)
order = sorted(rate, key=lambda k: sum(rate[k]) / len(rate[k]))
print(order[0], order[-1])
PY
) 2>"$o/sweep.txt"
log "fastest cpu $fast, slowest $slow"
for r in 1 2; do
  for k in "$fast" "$slow"; do
    taskset -c "$k" "$bin" pipeline --scenario encoder-decoder --batch 32 --mode streams --energy \
      --no-verify -q --format json --output "$o/energy-$r-cpu$k.json" >/dev/null 2>>"$o/energy.err"
    log "energy $r cpu $k"
  done
done
tar -C "${OUT:-/tmp/out}" -cJf "${OUT:-/tmp/out}/place.tar.xz" place && rm -rf "$o"
