#!/usr/bin/env bash
# Device call I (binaries of .deps/c9, git 4adb88b), on whatever card: whole-suite `gpubench check`
# runs held to the shipped reference of the card's model while the time allows, then the roofline
# beside stream.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; cap=${CAP:-300}
left() { echo $((cap - (SECONDS - t0))); }
w=$o/work; mkdir -p $w
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,pci.bus_id,persistence_mode --format=csv
  nproc; lscpu | grep -E "Model name|Socket|NUMA node\(s\)"; date -u +%Y-%m-%dT%H:%M:%SZ; } > $w/machine.txt 2>&1
g=/tmp/gb9; mkdir -p $g; tar -C $g -xJf $root/.deps/c9/bins.tar.xz
export LD_LIBRARY_PATH=$g/openblas/lib
$g/gpubench-new --version > $w/version.txt 2>&1
c() { local name=$1 t=$2; shift 2; local s=$SECONDS
  timeout $t "$@" > $w/$name.txt 2>&1; echo "$name rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt; }
for i in $(seq 1 10); do
  (( $(left) > 75 )) || break
  c check-$i 45 $g/gpubench-new check --output $w/check-$i.json
  grep -E "^[^ ].*: (PASS|WARN|FAIL) \(" $w/check-$i.txt | cut -c1-140
  grep -E "^  .* (WARN|FAIL):" $w/check-$i.txt | cut -c1-160
done
c roofline 40 $g/gpubench-new roofline --output $w/roofline.json; grep -A2 "roofline summary" $w/roofline.txt
c stream 30 $g/gpubench-new stream --n 2^28 --dtype f32 --output $w/stream.json; grep -E "triad|copy" $w/stream.txt | head -4
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
