#!/usr/bin/env bash
# Device call J (binaries of .deps/c10: gpubench-old at d951d05, gpubench-new and gpubench_gpu_tests
# at 7fd9268, whose input generator and exact checks changed). PART=first: on an H200 the GPU tests,
# ten whole-suite `gpubench check` held to the shipped H200 reference, then the roofline beside
# stream; on any other card the GPU tests and the before/after (PART=ab). PART=ab: old and new
# alternating, figures-ab.sh's cases with stream added, 2 rounds, then `check --quick` alone and as
# two MPI ranks bound to a core each, timed.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; cap=${CAP:-540}
left() { echo $((cap - (SECONDS - t0))); }
w=$o/work; mkdir -p $w
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "card: $name"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,pci.bus_id,persistence_mode --format=csv
  nproc; lscpu | grep -E "Model name|Socket|NUMA node\(s\)"; date -u +%Y-%m-%dT%H:%M:%SZ; mpirun --version 2>&1 | head -1; } > $w/machine.txt 2>&1
g=/tmp/gb10; mkdir -p $g; tar -C $g -xJf $root/.deps/c10/bins.tar.xz
export LD_LIBRARY_PATH=$g/openblas/lib
for b in old new; do $g/gpubench-$b --version > $w/version-$b.txt 2>&1; done; cat $w/version-new.txt | head -2
c() { local name=$1 t=$2; shift 2; local s=$SECONDS
  timeout $t "$@" > $w/$name.txt 2>&1; echo "$name rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt; }
part=${PART:-first}
if [[ $part == first ]]; then
  if [[ $name == *H200* ]]; then
    for i in $(seq 1 10); do
      (( $(left) > 70 )) || break
      c check-$i 60 $g/gpubench-new check --output $w/check-$i.json
      grep -E "^[^ ].*: (PASS|WARN|FAIL) \(" $w/check-$i.txt | cut -c1-140
      grep -E "^  .* (WARN|FAIL):" $w/check-$i.txt | cut -c1-160
    done
    c roofline 40 $g/gpubench-new roofline --output $w/roofline.json; grep -A2 "roofline summary" $w/roofline.txt
    c stream 30 $g/gpubench-new stream --n 2^28 --dtype f32 --output $w/stream.json; grep -E "triad|copy" $w/stream.txt | head -4
    t=$(( $(left) > 150 ? 150 : $(left) - 10 )); (( t > 20 )) && c gpu-tests $t $g/gpubench_gpu_tests; grep -E "^test cases|All tests|FAILED" $w/gpu-tests.txt | head -3
  else
    c gpu-tests 150 $g/gpubench_gpu_tests; grep -E "^test cases|All tests|FAILED" $w/gpu-tests.txt | head -3
    part=ab
  fi
fi
if [[ $part == ab ]]; then
  s=$SECONDS; AB_EXTRA="stream|stream --n 2^28 --dtype f32" timeout $(( $(left) - 100 )) \
    bash scripts/figures-ab.sh $g/gpubench-old $g/gpubench-new $w/ab 2 > $w/figures-ab.txt 2>&1
  echo "figures-ab rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt; tail -25 $w/figures-ab.txt
  for r in 1 2; do for b in old new; do
    s=$SECONDS; timeout 40 $g/gpubench-$b check --quick --output $w/quick-alone-$b-$r.json > $w/quick-alone-$b-$r.txt 2>&1
    echo "quick-alone-$b-$r rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
  done; done
  for b in old new; do
    (( $(left) > 50 )) || continue
    s=$SECONDS; timeout 60 mpirun --allow-run-as-root --oversubscribe --bind-to core -np 2 \
      $g/gpubench-$b check --quick --device 0 --output $w/quick-mpi-$b.json > $w/quick-mpi-$b.txt 2>&1
    echo "quick-mpi-$b rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
  done
fi
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
