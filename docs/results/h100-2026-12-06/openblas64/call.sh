#!/usr/bin/env bash
# Device call A. On any card: the GPU test suite (the fp8 alignment case corrected). On an H200:
# the check reference (default and quick timed, stream beside, ten whole-suite repeats,
# --save-reference, runs held to it, a 5% slower triad, a second process on the GPU, two MPI ranks
# on one GPU with one slowed). Then, as time allows: the OpenBLAS row in f64 linked against
# scipy-openblas32 and against scipy-openblas64, and numpy.matmul, 8192^3 on every core, alternating.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; cap=${CAP:-570}
left() { echo $((cap - (SECONDS - t0))); }
w=$o/work; mkdir -p $w
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,persistence_mode --format=csv
  nproc; date -u +%Y-%m-%dT%H:%M:%SZ; python3 -c "import numpy; print('numpy', numpy.__version__); numpy.show_config()"; } > $w/machine.txt 2>&1
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
c gpu-tests 150 $g/gpubench_gpu_tests
grep -E "^test cases|^assertions|FAILED|All tests" $w/gpu-tests.txt | head -8
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
# The OpenBLAS row in f64 on the two scipy-openblas builds, then numpy.matmul (which also times
# f32), 8192^3 on every core, 5 samples a side, rounds alternating.
nb=docs/results/xeon-2core-2026-12-05/gemm-openblas/numpy_matmul.py
for r in 1 2 3 4; do
  (( $(left) > 60 )) || break
  for v in 32 64; do
    c ob$v-$r 40 env LD_LIBRARY_PATH=$g/openblas${v/32/}/lib $g/gpubench-ob$v gemm --cpu-only --m 8192 --n 8192 --k 8192 --dtype f64 \
      --cpu-threads $(nproc) --min-samples 5 --max-samples 5 --timeout 30 --no-verify --output $w/ob$v-$r.json
  done
  s=$SECONDS; timeout 40 env -u LD_LIBRARY_PATH python3 $nb 8192 5 > $w/np-$r.json 2>&1; echo "np-$r rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
done
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
