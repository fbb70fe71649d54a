#!/usr/bin/env bash
# Second device call, the same carried binaries (91603bf): gpubench roofline in every type; the
# default gemm run timed; gemm bf16/f16 against torch.matmul over equal durations.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS
export LD_LIBRARY_PATH="$root/.deps/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
new=$root/.deps/bin/gpubench-new
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,power.default_limit --format=csv
  nproc; date -u +%Y-%m-%dT%H:%M:%SZ; } > $o/machine.txt 2>&1
$new --version > $o/version.txt 2>&1
mkdir -p $o/roofline $o/gemm
timeout 150 $new roofline --output $o/roofline/f32.json > $o/roofline/f32.txt 2>&1
echo "roofline f32 rc $? at $((SECONDS-t0)) s"; tail -4 $o/roofline/f32.txt
timeout 150 $new roofline --dtype f64,f16,bf16 --intensity 0.25,1,4,16,64,256,1024 --output $o/roofline/others.json > $o/roofline/others.txt 2>&1
echo "roofline others rc $? at $((SECONDS-t0)) s"; tail -6 $o/roofline/others.txt
$new stream --n 2^28 --output $o/roofline/stream.json > $o/roofline/stream.txt 2>&1
echo "stream rc $? at $((SECONDS-t0)) s"
( time $new gemm --output $o/gemm/gemm-default.json ) > $o/gemm/gemm-default.txt 2>&1
echo "gemm default rc $? at $((SECONDS-t0)) s"; tail -4 $o/gemm/gemm-default.txt
# Equal durations: 30 samples after 5 warm-up against torch's 30 calls after 5; the default
# stopping (about a second of products) against torch's 600 calls.
$new gemm --dtype bf16,f16 --warmup 5 --min-samples 30 --max-samples 30 --no-verify --output $o/gemm/gemm-30.json > $o/gemm/gemm-30.txt 2>&1
python3 docs/results/h200-2026-12-05/gemm/torch_numpy.py 8192 30 bf16,f16 no > $o/gemm/torch-30.json 2>&1
$new gemm --dtype bf16,f16 --no-verify --output $o/gemm/gemm-default-stop.json > $o/gemm/gemm-default-stop.txt 2>&1
python3 docs/results/h200-2026-12-05/gemm/torch_numpy.py 8192 600 bf16,f16 no > $o/gemm/torch-600.json 2>&1
echo "gemm vs torch done at $((SECONDS-t0)) s"; cat $o/gemm/torch-30.json $o/gemm/torch-600.json | grep -E "median_s|flops|clock"
ls -R $o | head -30
