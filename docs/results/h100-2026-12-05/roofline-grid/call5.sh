#!/usr/bin/env bash
# Before/after call: roofline's grid (old = 7711d51, device-filling grid; new = one vector per
# thread) with stream triad beside, 2 rounds alternating; augment fused/staged old (e1202f4) vs
# new, 4 rounds. One archive out.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS
export LD_LIBRARY_PATH="$root/.deps/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
b=$root/.deps/bin; w=$o/work; mkdir -p $w
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,persistence_mode --format=csv
  nproc; date -u +%Y-%m-%dT%H:%M:%SZ; } > $o/machine.txt 2>&1
nvidia-smi -q -d CLOCK,PERFORMANCE > $w/clocks.txt 2>&1; $b/gpubench-new --version > $o/version.txt 2>&1
AB_ONLY=1 AB_EXTRA=$'roofline|roofline --dtype f32,f64 --intensity 0.0625,0.25,1,4,16,64,256,1024\nstream|stream --n 2^28' \
  timeout 330 scripts/figures-ab.sh $b/gpubench-7711 $b/gpubench-new $w/roofline-ab 2 > $w/roofline-ab.log 2>&1
echo "roofline ab rc $? at $((SECONDS-t0)) s"; tail -45 $w/roofline-ab.log
timeout 60 $b/gpubench-new roofline --dtype f32 --intensity 0.0625,0.25,1,1024 --grid device --output $w/grid-device.json > $w/grid-device.txt 2>&1
echo "grid device rc $? at $((SECONDS-t0)) s"; grep -A3 "roofline summary" $w/grid-device.txt
left=$(( 540 - (SECONDS - t0) ))
if (( left > 60 )); then
  AB_ONLY=1 AB_EXTRA=$'augment|augment --batch 32,256 --impl fused,staged' \
    timeout $(( left - 10 )) scripts/figures-ab.sh $b/gpubench-old $b/gpubench-new $w/augment-ab 4 > $w/augment-ab.log 2>&1
  echo "augment ab rc $?"; tail -12 $w/augment-ab.log
fi
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
