#!/usr/bin/env bash
# One device call, binaries built on the CPU machine (sm_90, Release, stripped, OpenBLAS from the
# carried scipy-openblas32 wheel, OpenCV off) and carried in .deps/bin: GPU tests of the new tree
# (91603bf); old (e1202f4, the last revision measured here) and new binaries alternating on the
# recorded figures, energy and gemm; --reject-throttled once with the new one; the roofline in f32
# with the time left.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS
export LD_LIBRARY_PATH="$root/.deps/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$root/.deps/py/site${PYTHONPATH:+:$PYTHONPATH}"
new=$root/.deps/bin/gpubench-new; old=$root/.deps/bin/gpubench-old
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,power.default_limit --format=csv
  nproc; date -u +%Y-%m-%dT%H:%M:%SZ; } > $o/machine.txt 2>&1
$new --version > $o/version.txt 2>&1; $old --version > $o/version-old.txt 2>&1
timeout 150 $root/.deps/bin/gpubench_gpu_tests > $o/gpu-tests.txt 2>&1
echo "gpu tests rc $? at $((SECONDS-t0)) s"; tail -3 $o/gpu-tests.txt
AB_EXTRA=$'entropy|vecadd --n 10M --stopping entropy\nenergy|vecadd --n 2^24 --energy\ngemm|gemm --dtype f32,bf16 --no-verify' timeout 300 scripts/figures-ab.sh "$old" "$new" $o/ab 2 > $o/ab.log 2>&1
echo "ab rc $? at $((SECONDS-t0)) s"; tail -25 $o/ab.log
timeout 40 $new vecadd --n 2^24,2^28 --reject-throttled 0.95 --output $o/reject-throttled.json > $o/reject-throttled.txt 2>&1
echo "reject-throttled rc $? at $((SECONDS-t0)) s"
# What time is left: the roofline in f32 over its default sweep.
left=$((570 - (SECONDS - t0)))
if (( left > 30 )); then
  mkdir -p $o/roofline
  timeout $left $new roofline --output $o/roofline/f32.json > $o/roofline/f32.txt 2>&1
  echo "roofline f32 rc $? at $((SECONDS-t0)) s"; tail -4 $o/roofline/f32.txt
fi
ls $o
