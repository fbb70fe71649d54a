#!/usr/bin/env bash
# Device call: fp8 gemm and augment's declared FLOPs. GPU tests (whole suite); gemm fp8 against
# torch._scaled_mm and bf16 against torch.matmul at 8192^3 tn (30 samples each, 2 rounds
# alternating); a verified fp8 run at 8192^3 (the worst element's share of its bound); the
# before/after of augment and gemm rows, old (1d60eed) and new binary alternating, 3 rounds.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; cap=${CAP:-575}
left() { echo $((cap - (SECONDS - t0))); }
w=$o/work; mkdir -p $w
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid --format=csv
  nproc; date -u +%Y-%m-%dT%H:%M:%SZ; python3 -c "import torch; print('torch', torch.__version__)"; } > $w/machine.txt 2>&1
cat $w/machine.txt
g=/tmp/gb; mkdir -p $g; tar -C $g -xJf $root/.deps/c6/bins.tar.xz
export LD_LIBRARY_PATH="$g/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
new=$g/gpubench-new; old=$g/gpubench-old
$new --version > $w/version.txt 2>&1; $old --version > $w/version-old.txt 2>&1
tn=docs/results/h200-2026-12-05/gemm/torch_numpy.py
c() { # name, timeout, args...
  local name=$1 t=$2; shift 2
  local s=$SECONDS
  ( time timeout $t "$@" ) > $w/$name.txt 2>&1
  echo "$name rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
}
c gpu-tests 150 $g/gpubench_gpu_tests
grep -E "^test cases|^assertions|FAILED|All tests" $w/gpu-tests.txt | head -8
for r in 1 2; do
  c gemm-$r 90 $new gemm --dtype fp8,bf16 --layout tn --warmup 5 --min-samples 30 --max-samples 30 --no-verify --output $w/gemm-$r.json
  c torch-$r 90 python3 $tn 8192 30 fp8,bf16 no
done
grep -E "kernel " $w/gemm-2.txt | head -4; grep -E "torch_|flops_per_s" $w/torch-2.txt | head -8
c gemm-fp8-verified 120 $new gemm --dtype fp8 --layout tn --output $w/gemm-fp8-verified.json
grep -E "kernel|verification|worst" $w/gemm-fp8-verified.txt | head -6
c augment-bilinear 60 $new augment --batch 256 --impl all --interp bilinear --output $w/augment-bilinear.json
grep -E "fused|staged" $w/augment-bilinear.txt | head -4
if (( $(left) > 90 )); then
  AB_ONLY=1 AB_EXTRA=$'augment|augment --batch 32,256 --impl fused,staged\ngemm|gemm --m 4096 --n 4096 --k 4096 --dtype f32,bf16 --no-verify' \
    timeout $(( $(left) - 15 )) $root/scripts/figures-ab.sh "$old" "$new" $w/ab 3 > $w/ab.log 2>&1
  echo "ab rc $?"; tail -14 $w/ab.log
fi
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
