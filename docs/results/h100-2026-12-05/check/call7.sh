#!/usr/bin/env bash
# Device call: GPU tests (the check test sampling as the command does), devices --measure with the
# roofs, gemm bf16/f16/tf32/f32 against torch.matmul (2 rounds alternating), then 4 more default
# check runs for the model's reference (with the 4 of the previous call, carried in prev/).
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; cap=${CAP:-480}
left() { echo $((cap - (SECONDS - t0))); }
g=/tmp/gb; mkdir -p $g; tar -C $g -xJf $root/.deps/c6/bins.tar.xz
export LD_LIBRARY_PATH="$g/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
new=$g/gpubench-new
w=$o/work; mkdir -p $w/prev; tar -C $w/prev -xJf $root/.deps/c6/prev/repeats.tar.xz
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,persistence_mode --format=csv
  nproc; date -u +%Y-%m-%dT%H:%M:%SZ; python3 -c "import torch; print('torch', torch.__version__)"; } > $w/machine.txt 2>&1
$new --version > $w/version.txt 2>&1
( time timeout 100 $g/gpubench_gpu_tests ) > $w/gpu-tests.txt 2>&1
echo "gpu tests rc $? at $((SECONDS-t0)) s"; grep -E "^test cases|^assertions|FAILED|All tests" $w/gpu-tests.txt | head
c() { # name, timeout, args...
  local name=$1 t=$2; shift 2
  local s=$SECONDS
  timeout $t "$@" > $w/$name.txt 2>&1
  echo "$name rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
}
c devices-measure 120 $new devices --measure
cat $w/devices-measure.txt
c devices-measure-json 120 $new devices --measure --format json --output $w/devices-measure.json
for r in 1 2; do
  c gemm-$r 120 $new gemm --dtype bf16,f16,tf32,f32 --warmup 5 --min-samples 30 --max-samples 30 --no-verify --output $w/gemm-$r.json
  s=$SECONDS; timeout 90 python3 docs/results/h200-2026-12-05/gemm/torch_numpy.py 8192 30 bf16,f16,tf32,f32 no > $w/torch-$r.json 2>&1
  echo "torch-$r rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
done
grep -E "^gemm|kernel " $w/gemm-2.txt | head -8; grep -E "torch_|flops_per_s" $w/torch-2.json | head -12
for i in 5 6 7 8; do
  (( $(left) > 40 )) || break
  c check-repeat-$i 60 $new check --output $w/check-repeat-$i.json
done
$new check --save-reference $w/reference.json --from $w/prev/check-repeat-*.json $w/check-repeat-*.json > $w/save-reference.txt 2>&1
echo "save-reference rc $?"; cat $w/save-reference.txt
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
