#!/usr/bin/env bash
# Device call B2, on an H200 right after A2 on the same machine: ten whole-suite check runs held to
# the reference A2 saved (/tmp/gb/h200-reference.json there, else .deps/calls/h200-reference.json); fp8 on the H200 (verified at 8192^3 tn, its alignment message
# at k=264); gemm against torch, the same 30 calls a side, 2 rounds alternating; gemm's defaults
# timed; then the OpenBLAS row (f64, scipy-openblas32 and -64 builds) against numpy, alternating.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; cap=${CAP:-570}
left() { echo $((cap - (SECONDS - t0))); }
w=$o/work; mkdir -p $w
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,persistence_mode --format=csv
  nproc; date -u +%Y-%m-%dT%H:%M:%SZ; python3 -c "import numpy, torch; print('numpy', numpy.__version__, 'torch', torch.__version__)"; } > $w/machine.txt 2>&1
head -4 $w/machine.txt
g=/tmp/gb; mkdir -p $g; [[ -x $g/gpubench-new ]] || tar -C $g -xJf $root/.deps/c6/bins.tar.xz
ref=$g/h200-reference.json; [[ -f $ref ]] || ref=$root/.deps/calls/h200-reference.json
cp $ref $w/reference-used.json
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
if [[ $name == *H200* && -f $ref ]]; then
  for i in 1 2 3 4 5 6 7 8 9 10; do
    (( $(left) > 200 )) || break
    c check-held-$i 60 $new check --reference $ref --output $w/check-held-$i.json
    grep -m1 -E "^:0|GPU 0|verdict" $w/check-held-$i.txt | cut -c1-120
  done
  c gemm-fp8-verified 60 $new gemm --dtype fp8 --layout tn --output $w/gemm-fp8-verified.json
  c fp8-k264 30 $new gemm --dtype fp8 --layout tn --m 96 --n 48 --k 264 --min-samples 3 --max-samples 3 --output $w/fp8-k264.json
  tn=docs/results/h200-2026-12-05/gemm/torch_numpy.py
  for r in 1 2; do
    (( $(left) > 130 )) || break
    c gemm-torch-$r 90 $new gemm --dtype bf16,f16,tf32,f32 --warmup 5 --min-samples 30 --max-samples 30 --no-verify --output $w/gemm-torch-$r.json
    c torch-$r 90 env -u LD_LIBRARY_PATH python3 $tn 8192 30 bf16,f16,tf32,f32 no
    c gemm-fp8-torch-$r 60 $new gemm --dtype fp8 --layout tn --warmup 5 --min-samples 30 --max-samples 30 --no-verify --output $w/gemm-fp8-torch-$r.json
    c torch-fp8-$r 60 env -u LD_LIBRARY_PATH python3 $tn 8192 30 fp8 no
  done
  if (( $(left) > 90 )); then
    s=$SECONDS; ( time timeout 90 $new gemm --output $w/gemm-default.json ) > $w/gemm-default.txt 2>&1
    echo "gemm-default rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
  fi
fi
nb=docs/results/xeon-2core-2026-12-05/gemm-openblas/numpy_matmul.py
for r in 1 2 3 4; do
  (( $(left) > 60 )) || break
  for v in 32 64; do
    c ob$v-$r 40 env LD_LIBRARY_PATH=$g/openblas${v/32/}/lib $g/gpubench-ob$v gemm --cpu-only --m 8192 --n 8192 --k 8192 --dtype f64 \
      --cpu-threads $(nproc) --min-samples 5 --max-samples 5 --timeout 30 --no-verify --output $w/ob$v-$r.json
  done
  s=$SECONDS; timeout 40 env -u LD_LIBRARY_PATH python3 $nb 8192 5 > $w/np-$r.json 2>&1; echo "np-$r rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
done
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
