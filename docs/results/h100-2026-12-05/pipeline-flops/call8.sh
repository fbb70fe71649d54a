#!/usr/bin/env bash
# Device call: the pipeline's declared FLOPs on the GPU (its GPU tests, both scenarios at batch
# 32 with the table's of roof column), the whole GPU test suite if time is left.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS
g=/tmp/gb; mkdir -p $g; tar -C $g -xJf $root/.deps/c6/bins.tar.xz
export LD_LIBRARY_PATH="$g/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
new=$g/gpubench-new; w=$o/work; mkdir -p $w
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,persistence_mode --format=csv
  nproc; date -u +%Y-%m-%dT%H:%M:%SZ; } > $w/machine.txt 2>&1
$new --version > $w/version.txt 2>&1
timeout 60 $g/gpubench_gpu_tests "[pipeline]" > $w/gpu-tests-pipeline.txt 2>&1
echo "pipeline gpu tests rc $? at $((SECONDS-t0)) s"; tail -3 $w/gpu-tests-pipeline.txt
timeout 60 $new pipeline --batch 32 --scenario augment-train,encoder-decoder --output $w/pipeline.json > $w/pipeline.txt 2>&1
echo "pipeline rc $? at $((SECONDS-t0)) s"; grep -E "^pipeline|measurement|stage_|serial|streams|graph" $w/pipeline.txt | head -24
timeout 100 $g/gpubench_gpu_tests > $w/gpu-tests.txt 2>&1
echo "gpu tests rc $? at $((SECONDS-t0)) s"; grep -E "^test cases|All tests|FAILED" $w/gpu-tests.txt | head -5
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
