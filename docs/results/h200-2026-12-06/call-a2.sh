#!/usr/bin/env bash
# Device call A2, on an H200 only (on another card it stops at once): the check reference (default
# and quick timed, stream beside, ten whole-suite repeats, --save-reference, runs held to it, a 5%
# slower triad, a second process on the GPU, two MPI ranks on one GPU with one slowed).
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; cap=${CAP:-570}
left() { echo $((cap - (SECONDS - t0))); }
w=$o/work; mkdir -p $w
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,persistence_mode --format=csv
  nproc; lscpu | grep -E "Model name|Socket|NUMA node\(s\)"; date -u +%Y-%m-%dT%H:%M:%SZ; python3 -c "import numpy; print('numpy', numpy.__version__); numpy.show_config()"; } > $w/machine.txt 2>&1
head -4 $w/machine.txt
g=/tmp/gb; mkdir -p $g; tar -C $g -xJf $root/.deps/c6/bins.tar.xz
new=$g/gpubench-new
export LD_LIBRARY_PATH=$g/openblas/lib
$new --version > $w/version.txt 2>&1
c() { # name, timeout, args...
  local name=$1 t=$2; shift 2
  local s=$SECONDS
  timeout $t "$@" > $w/$name.txt 2>&1
  echo "$name rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
}
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if [[ $name == *H200* ]]; then
  c check-default 120 $new check --output $w/check-default.json
  grep -E "PASS|WARN|FAIL" $w/check-default.txt | tail -3
  c check-quick 60 $new check --quick --output $w/check-quick.json
  c stream-beside 60 $new stream --n 2^28 --dtype f32 --output $w/stream-beside.json
  for i in 1 2 3 4 5 6 7 8 9 10; do
    (( $(left) > 170 )) || break
    c check-repeat-$i 60 $new check --output $w/check-repeat-$i.json
  done
  $new check --save-reference $w/reference.json --from $w/check-repeat-*.json > $w/save-reference.txt 2>&1
  echo "save-reference rc $?"
  cp $w/reference.json $g/h200-reference.json 2>/dev/null
  for i in 1 2 3; do
    (( $(left) > 130 )) || break
    c check-held-$i 60 $new check --reference $w/reference.json --output $w/check-held-$i.json
  done
  (( $(left) > 100 )) && GPUBENCH_TEST_SLOWDOWN=triad:0.05 c check-slow-hbm 60 $new check --reference $w/reference.json --output $w/check-slow-hbm.json
  if (( $(left) > 70 )); then
    $new stream --n 2^30 --min-time 20 --timeout 30 --max-samples 100000 -q >/dev/null 2>&1 &
    hog=$!; sleep 3
    c check-contention 40 $new check --quick --reference $w/reference.json --output $w/check-contention.json
    kill $hog 2>/dev/null; wait $hog 2>/dev/null
  fi
  if (( $(left) > 60 )); then
    s=$SECONDS
    timeout 60 mpirun --allow-run-as-root --oversubscribe -np 1 $new check --quick --device 0 \
      --reference $w/reference.json --output $w/check-fleet.json : -np 1 -x GPUBENCH_TEST_SLOWDOWN=triad:0.05 \
      $new check --quick --device 0 --reference $w/reference.json > $w/check-fleet.txt 2>&1
    echo "mpirun rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
  fi
  grep -E "^(PASS|WARN|FAIL)|verdict|outlier" $w/check-held-1.txt $w/check-slow-hbm.txt $w/check-contention.txt $w/check-fleet.txt 2>/dev/null | head -12
fi
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
