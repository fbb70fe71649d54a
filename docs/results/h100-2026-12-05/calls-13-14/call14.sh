#!/usr/bin/env bash
# Device call 2 (the check rule for host-dependent figures, the fp8 alignment message). On an H200: the check reference (default and quick timed, stream beside, ten
# whole-suite repeats, --save-reference, three runs held to it, a 5% slower triad, a second process
# on the GPU, two MPI ranks on one GPU with one slowed). On any card, as time allows: the GPU test
# suite, a verified fp8 gemm (the worst element's share of the fp8 bound), and the OpenBLAS row
# against numpy.matmul on the host's cores (5 samples a side, 3 rounds alternating).
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; cap=${CAP:-570}
left() { echo $((cap - (SECONDS - t0))); }
w=$o/work; mkdir -p $w
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,persistence_mode --format=csv
  nproc; date -u +%Y-%m-%dT%H:%M:%SZ; python3 -c "import numpy; print('numpy', numpy.__version__)"; } > $w/machine.txt 2>&1
cat $w/machine.txt
g=/tmp/gb; mkdir -p $g; tar -C $g -xJf $root/.deps/c6/bins.tar.xz
export LD_LIBRARY_PATH="$g/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
new=$g/gpubench-new
$new --version > $w/version.txt 2>&1
c() { # name, timeout, args...
  local name=$1 t=$2; shift 2
  local s=$SECONDS
  timeout $t "$@" > $w/$name.txt 2>&1
  echo "$name rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
}
c gpu-tests 150 $g/gpubench_gpu_tests
grep -E "^test cases|^assertions|FAILED|All tests" $w/gpu-tests.txt | head -8
c fp8-k264 30 $new gemm --dtype fp8 --layout tn --m 96 --n 48 --k 264 --min-samples 3 --max-samples 3 --output $w/fp8-k264.json
grep -m1 -E "error|PASSED" $w/fp8-k264.txt
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if [[ $name == *H200* && ${PART:-all} != rest ]]; then
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
if [[ $name != *H200* || ${PART:-all} == rest ]]; then
  for i in 1 2; do
    c check-quick-$i 60 $new check --quick --output $w/check-quick-$i.json
    c check-default-$i 90 $new check --output $w/check-default-$i.json
  done
  grep -hE "pcie_both|launch_lat|^:0 .*(PASS|WARN|FAIL) \(" $w/check-*.txt | head -12
fi
# The OpenBLAS row with and without huge pages (glibc's malloc asked to madvise them), numpy
# beside, 8192^3 on every core, 3 rounds alternating.
cat /sys/kernel/mm/transparent_hugepage/enabled > $w/thp.txt 2>&1; lscpu > $w/lscpu.txt 2>&1
nb=docs/results/xeon-2core-2026-12-05/gemm-openblas/numpy_matmul.py
for r in 1 2 3; do
  (( $(left) > 90 )) || break
  for t in 0 1; do
    GLIBC_TUNABLES=glibc.malloc.hugetlb=$t c ob-thp$t-$r 60 $new gemm --cpu-only --m 8192 --n 8192 --k 8192 \
      --dtype f32,f64 --cpu-threads $(nproc) --min-samples 5 --max-samples 5 --timeout 30 --no-verify --output $w/ob-thp$t-$r.json
  done
  s=$SECONDS; timeout 50 python3 $nb 8192 5 > $w/np-$r.json 2>&1; echo "np-$r rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
done
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
