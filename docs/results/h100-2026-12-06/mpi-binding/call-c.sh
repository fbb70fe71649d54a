#!/usr/bin/env bash
# Device call C (binary of .deps/c6): the GPU tests; repeats of `gpubench check` held to the shipped
# reference of the card's model (ten on an H200, three on another card); then two MPI ranks on the
# one GPU, one slowed 5%, each rank's end timed, to see how long mpirun takes to return.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; cap=${CAP:-560}
left() { echo $((cap - (SECONDS - t0))); }
w=$o/work; mkdir -p $w
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,pci.bus_id,persistence_mode --format=csv
  nproc; lscpu | grep -E "Model name|Socket|NUMA node\(s\)"; date -u +%Y-%m-%dT%H:%M:%SZ; mpirun --version 2>&1 | head -1; } > $w/machine.txt 2>&1
head -2 $w/machine.txt
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
n=3; [[ $name == *H200* ]] && n=10
for i in $(seq 1 $n); do
  (( $(left) > 260 )) || break
  c check-$i 60 $new check --output $w/check-$i.json
  grep -E "^[^ ].*: (PASS|WARN|FAIL) \(" $w/check-$i.txt | cut -c1-140
  grep -E "^  .* (WARN|FAIL):" $w/check-$i.txt | cut -c1-160
done
(( $(left) > 150 )) && { c gpu-tests 120 $g/gpubench_gpu_tests; grep -E "^test cases|All tests|FAILED" $w/gpu-tests.txt | head -5; }
if (( $(left) > 60 )); then
  t=$(( $(left) - 20 )); (( t > 150 )) && t=150

  s=$(date +%s.%N); echo "mpirun start $s" > $w/mpi-times.txt
  timeout $t mpirun --allow-run-as-root --oversubscribe \
    -np 1 bash -c '"$0" "$@"; rc=$?; echo "rank 0 gpubench exit $rc at $(date +%s.%N)" >&2; exit $rc' \
      $new check --quick --device 0 --output $w/check-fleet.json : \
    -np 1 -x GPUBENCH_TEST_SLOWDOWN=triad:0.05 bash -c '"$0" "$@"; rc=$?; echo "rank 1 gpubench exit $rc at $(date +%s.%N)" >&2; exit $rc' \
      $new check --quick --device 0 > $w/check-fleet.txt 2>&1
  rc=$?; e=$(date +%s.%N)
  echo "mpirun rc $rc, ended $e" >> $w/mpi-times.txt
  echo "fleet json written $(stat -c %.9Y $w/check-fleet.json 2>/dev/null)" >> $w/mpi-times.txt
  grep -E "gpubench exit" $w/check-fleet.txt >> $w/mpi-times.txt
  python3 - $w/mpi-times.txt <<'PY' | tee -a $w/summary.txt
import re, sys
text = open(sys.argv[1]).read(); print(text.strip())
start = float(re.search(r"mpirun start ([\d.]+)", text).group(1))
for m in re.finditer(r"(rank \d gpubench exit \d+|mpirun rc \d+, ended|fleet json written) ([\d.]+)", text):
    print(f"{m.group(1)}: {float(m.group(2)) - start:.1f} s after mpirun started")
PY
  grep -E "^Fleet|outlier" $w/check-fleet.txt | cut -c1-160 | head -4
fi
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
