#!/usr/bin/env bash
# Device call (any H100 or H200): gemm --algos. The gemm GPU tests on the new build; the
# heuristic's first 32 algorithms timed at 8192^3 for f32, tf32, bf16 and f16 (which does
# cuBLASLt's ranking leave on the table?); then the default path, old build (.deps/c6) against new
# (.deps/ab), alternating, with ab-gemm.json.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS
w=$o/work; mkdir -p $w
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,persistence_mode --format=csv > $w/machine.txt 2>&1
date -u +%Y-%m-%dT%H:%M:%SZ >> $w/machine.txt; nproc >> $w/machine.txt; cat $w/machine.txt
g=/tmp/gb; mkdir -p $g; [[ -x $g/gpubench-new ]] || tar -C $g -xJf $root/.deps/c6/bins.tar.xz
new=$g/gpubench-algos; cp $root/.deps/ab/gpubench-algos $new
xz -dc $root/.deps/ab/gpubench_gpu_tests.xz > $g/gpu-tests-algos; chmod +x $g/gpu-tests-algos
export LD_LIBRARY_PATH=$g/openblas/lib
$g/gpubench-new --version > $w/version-old.txt 2>&1; $new --version > $w/version-new.txt 2>&1
c() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $w/$name.txt 2>&1; echo "$name rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt; }
c gpu-tests 240 $g/gpu-tests-algos "[gemm]"
tail -3 $w/gpu-tests.txt
for d in f32 tf32 bf16 f16; do
  c algos-$d 90 $new gemm --dtype $d --algos 32 --output $w/algos-$d.json
  c first-$d 60 $new gemm --dtype $d --no-verify --output $w/first-$d.json
  grep -E "kernel " $w/algos-$d.txt | head -2; grep -E "kernel " $w/first-$d.txt | head -1
done
s=$SECONDS; ROUNDS=${ROUNDS:-5} timeout 240 bash scripts/ab-gate.sh $g/gpubench-new $new $root/.deps/calls/ab-gemm.json $w/ab > $w/ab-gate.txt 2>&1
echo "ab-gate rc $? in $((SECONDS-s)) s"; grep -E "^\| gemm|regression|compared" $w/ab-gate.txt | tail -8
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
