#!/usr/bin/env bash
# One device call, ~400 s, binaries built on the CPU machine (sm_90, Release, stripped, OpenBLAS
# from the carried scipy-openblas32 wheel, OpenCV off) and carried in .deps/bin. In priority order:
# the GPU tests of the new tree; old (e1202f4, last measured here) and new alternating on the
# recorded figures (figures-ab.sh, 2 rounds); --reject-throttled 0.95 with the new binary; the f32
# roofline and stream 2^28 (its memory roof against triad); gemm bf16/f16 against torch.matmul
# over 30 calls each, with what time is left.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; cap=${CAP:-395}
left() { echo $((cap - (SECONDS - t0))); }
export LD_LIBRARY_PATH="$root/.deps/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
new=$root/.deps/bin/gpubench-new; old=$root/.deps/bin/gpubench-old
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,power.default_limit,uuid --format=csv
  nproc; date -u +%Y-%m-%dT%H:%M:%SZ; } > $o/machine.txt 2>&1
$new --version > $o/version.txt 2>&1; $old --version > $o/version-old.txt 2>&1
( time timeout 90 $root/.deps/bin/gpubench_gpu_tests ) > $o/gpu-tests.txt 2>&1
echo "gpu tests rc $? at $((SECONDS-t0)) s"; tail -8 $o/gpu-tests.txt
timeout 170 scripts/figures-ab.sh "$old" "$new" $o/ab 2 > $o/ab.log 2>&1
echo "ab rc $? at $((SECONDS-t0)) s"; tail -30 $o/ab.log
timeout 30 $new vecadd --n 2^24,2^28 --reject-throttled 0.95 --output $o/reject-throttled.json > $o/reject-throttled.txt 2>&1
echo "reject-throttled rc $? at $((SECONDS-t0)) s"; cat $o/reject-throttled.txt | head -30
mkdir -p $o/roofline $o/gemm
if (( $(left) > 40 )); then
  timeout $(( $(left) > 75 ? 60 : $(left) - 15 )) $new roofline --output $o/roofline/f32.json > $o/roofline/f32.txt 2>&1
  echo "roofline f32 rc $? at $((SECONDS-t0)) s"; cat $o/roofline/f32.txt
  timeout 15 $new stream --n 2^28 --output $o/roofline/stream.json > $o/roofline/stream.txt 2>&1
  echo "stream rc $? at $((SECONDS-t0)) s"; grep -E "triad|copy" $o/roofline/stream.txt
fi
if (( $(left) > 35 )); then
  timeout $(( $(left) - 5 )) bash -c "$new gemm --dtype bf16,f16 --warmup 5 --min-samples 30 --max-samples 30 --no-verify --output $o/gemm/gemm-30.json > $o/gemm/gemm-30.txt 2>&1; python3 docs/results/h200-2026-12-05/gemm/torch_numpy.py 8192 30 bf16,f16 no > $o/gemm/torch-30.json 2>&1"
  echo "gemm vs torch rc $? at $((SECONDS-t0)) s"; grep -E "kernel" $o/gemm/gemm-30.txt; cat $o/gemm/torch-30.json | head -30
fi
echo "total $((SECONDS-t0)) s"
