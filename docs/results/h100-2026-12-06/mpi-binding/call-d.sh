#!/usr/bin/env bash
# Device call D: on an H200, call C. On another card: where the time of `check --quick` goes,
# alone and as two MPI ranks on the one GPU (-v: each point's outcome and time as it finishes).
set -uo pipefail
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "card: $name"
if [[ $name == *H200* ]]; then exec bash .deps/calls/callC.sh; fi
root=$PWD; o=$OUT; t0=$SECONDS
w=$o/work; mkdir -p $w
nvidia-smi --query-gpu=name,driver_version,uuid,pci.bus_id --format=csv > $w/machine.txt 2>&1
g=/tmp/gb; mkdir -p $g; [[ -x $g/gpubench-new ]] || tar -C $g -xJf $root/.deps/c6/bins.tar.xz
new=$g/gpubench-new; export LD_LIBRARY_PATH=$g/openblas/lib
ts() { python3 -u -c 'import sys, time, os
t0 = float(os.environ["T0"])
for l in sys.stdin: sys.stdout.write(f"{time.time() - t0:8.3f} {l}")'; }
export T0=$(date +%s.%N)
{ time $new check --quick -v --output $w/quick-alone.json ; } 2>&1 | ts > $w/quick-alone.txt
tail -4 $w/quick-alone.txt
for mode in same slowed; do
  export T0=$(date +%s.%N)
  env=(); [[ $mode == slowed ]] && env=(-x GPUBENCH_TEST_SLOWDOWN=triad:0.05)
  { time timeout 150 mpirun --allow-run-as-root --oversubscribe \
      -np 1 $new check --quick -v --device 0 --output $w/quick-mpi-$mode.json : \
      -np 1 "${env[@]}" $new check --quick -v --device 0 ; } 2>&1 | ts > $w/quick-mpi-$mode.txt
  grep -vE "^ *[0-9.]+ vm:0/r|^ *[0-9.]+  " $w/quick-mpi-$mode.txt | tail -25
done
tar -C $w -cJf $o/results.tar.xz . && echo "packed; total $((SECONDS-t0)) s"
