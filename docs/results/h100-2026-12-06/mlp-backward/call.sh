#!/usr/bin/env bash
# Device call AB (any H100 or H200): the pipeline's GPU tests on the new build, then the pipeline
# in both scenarios and every mode, old build (.deps/c6) against new (.deps/ab), alternating.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS
w=$o/work; mkdir -p $w
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,persistence_mode --format=csv > $w/machine.txt 2>&1
date -u +%Y-%m-%dT%H:%M:%SZ >> $w/machine.txt; cat $w/machine.txt
g=/tmp/gb; mkdir -p $g; [[ -x $g/gpubench-new ]] || tar -C $g -xJf $root/.deps/c6/bins.tar.xz
cp $root/.deps/ab/gpubench-mlp $g/; xz -dc $root/.deps/ab/gpubench_gpu_tests.xz > $g/gpu-tests-mlp; chmod +x $g/gpu-tests-mlp
export LD_LIBRARY_PATH=$g/openblas/lib
$g/gpubench-new --version > $w/version-old.txt 2>&1; $g/gpubench-mlp --version > $w/version-new.txt 2>&1
s=$SECONDS; timeout 200 $g/gpu-tests-mlp "[pipeline]" > $w/gpu-tests.txt 2>&1; echo "gpu tests rc $? in $((SECONDS-s)) s"; tail -3 $w/gpu-tests.txt
s=$SECONDS; ROUNDS=${ROUNDS:-5} timeout 330 bash scripts/ab-gate.sh $g/gpubench-new $g/gpubench-mlp $root/.deps/calls/ab-pipeline.json $w/ab > $w/ab-gate.txt 2>&1
echo "ab-gate rc $? in $((SECONDS-s)) s"; tail -40 $w/ab-gate.txt
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
