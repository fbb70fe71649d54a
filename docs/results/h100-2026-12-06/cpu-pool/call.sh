#!/usr/bin/env bash
# Device call G (binaries of .deps/c8: gpubench-old at 15ac782, gpubench-new at c365cb4, the CPU
# pool sized by the affinity mask; gpubench_gpu_tests at c365cb4). On an H200: the GPU tests, then
# ten whole-suite `gpubench check` held to the shipped H200 reference. On any card: alternating old
# and new, `check --quick` alone and two MPI ranks on the one GPU, bound to a core each (Open MPI's
# default for two ranks) and unbound; rounds while the time allows.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; cap=${CAP:-540}
left() { echo $((cap - (SECONDS - t0))); }
w=$o/work; mkdir -p $w
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "card: $name"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,pci.bus_id,persistence_mode --format=csv
  nproc; lscpu | grep -E "Model name|Socket|NUMA node\(s\)"; date -u +%Y-%m-%dT%H:%M:%SZ; mpirun --version 2>&1 | head -1; } > $w/machine.txt 2>&1
# The CUDA-core f32 GEMM experiment first (about 20 s): .deps/sg/sg.cu against cublasSgemm.
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv -lms 200 > $w/sg-clocks.csv 2>&1 & smi=$!
LD_LIBRARY_PATH=/usr/local/cuda/lib64 timeout 90 $root/.deps/sg/sg 8192 20 > $w/sg.txt 2>&1; echo "sg rc $?" | tee -a $w/summary.txt; kill $smi; cat $w/sg.txt
g=/tmp/gb8; mkdir -p $g; tar -C $g -xJf $root/.deps/c8/bins.tar.xz
export LD_LIBRARY_PATH=$g/openblas/lib
# OpenBLAS dgemm 8192^3 on the host's cores, inputs in plain malloc'd pages against 2 MiB-aligned
# pages marked MADV_HUGEPAGE (as numpy marks its arrays), alternating (.deps/thp/t.cpp, ~25 s).
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag > $w/thp.txt 2>&1
timeout 60 $root/.deps/thp/t 8192 2 $(nproc) >> $w/thp.txt 2>&1; echo "thp rc $?" | tee -a $w/summary.txt; cat $w/thp.txt
for b in old new; do $g/gpubench-$b --version > $w/version-$b.txt 2>&1; done
c() { # name, timeout, args...
  local name=$1 t=$2; shift 2
  local s=$SECONDS
  timeout $t "$@" > $w/$name.txt 2>&1
  echo "$name rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
}
part=${PART:-all}   # all, h200 (GPU tests and ten checks only) or ab (the old/new rounds only)
if [[ $name == *H200* && $part != ab ]]; then
  c gpu-tests 120 $g/gpubench_gpu_tests; grep -E "^test cases|All tests|FAILED" $w/gpu-tests.txt | head -3
  for i in $(seq 1 10); do
    (( $(left) > 60 )) || break
    c check-$i 60 $g/gpubench-new check --output $w/check-$i.json
    grep -E "^[^ ].*: (PASS|WARN|FAIL) \(" $w/check-$i.txt | cut -c1-140
    grep -E "^  .* (WARN|FAIL):" $w/check-$i.txt | cut -c1-160
  done
fi
ts() { python3 -u -c 'import sys, time, os
t0 = float(os.environ["T0"])
for l in sys.stdin: sys.stdout.write(f"{time.time() - t0:8.3f} {l}")'; }
one() { # tag, binary, binding ("" alone)
  local tag=$1 b=$2 bind=$3; export T0=$(date +%s.%N)
  if [[ -z $bind ]]; then
    { time $g/gpubench-$b check --quick -v --output $w/$tag.json ; } 2>&1 | ts > $w/$tag.txt
  else
    { time timeout 120 mpirun --allow-run-as-root --oversubscribe --bind-to $bind --report-bindings -np 2 \
        $g/gpubench-$b check --quick -v --device 0 --output $w/$tag.json ; } 2>&1 | ts > $w/$tag.txt
  fi
  echo "$tag $(grep -E '^ *[0-9.]+ real' $w/$tag.txt | awk '{print $3}')" | tee -a $w/summary.txt
}
for round in 1 2; do
  [[ $part == h200 ]] && break
  (( $(left) > 85 )) || break
  for b in old new; do
    one alone-$b-$round $b ""
    one mpi-core-$b-$round $b core
    one mpi-none-$b-$round $b none
  done
done
grep -h "may run on\|bound to" $w/*-1.txt | cut -c1-200 | sort | uniq | head -8
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
