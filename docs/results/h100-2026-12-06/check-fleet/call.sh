#!/usr/bin/env bash
# On an H100 that came instead of an H200: one whole-suite `gpubench check` held to the shipped
# H100 reference (the binary of .deps/c6), with the card's identity: a fleet sample of the reference.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS
w=$o/work; mkdir -p $w
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,pci.bus_id,persistence_mode --format=csv > $w/machine.txt 2>&1
date -u +%Y-%m-%dT%H:%M:%SZ >> $w/machine.txt; nproc >> $w/machine.txt; lscpu | grep -E "Model name" >> $w/machine.txt
g=/tmp/gb; mkdir -p $g; [[ -x $g/gpubench-new ]] || tar -C $g -xJf $root/.deps/c6/bins.tar.xz
export LD_LIBRARY_PATH=$g/openblas/lib
$g/gpubench-new --version > $w/version.txt 2>&1
s=$SECONDS; timeout 90 $g/gpubench-new check --output $w/check.json > $w/check.txt 2>&1; rc=$?
echo "check rc $rc in $((SECONDS-s)) s" | tee $w/summary.txt
grep -E "WARN|FAIL|GPUs checked|verdict" $w/check.txt | cut -c1-150 | head -8
if [[ -n ${GPU_TESTS:-} ]]; then
  s=$SECONDS; timeout 150 $g/gpubench_gpu_tests "$GPU_TESTS" > $w/gpu-tests.txt 2>&1
  echo "gpu tests $GPU_TESTS rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt; tail -2 $w/gpu-tests.txt
fi
tar -C $w -cJf $o/results.tar.xz . && echo "packed; total $((SECONDS-t0)) s"
