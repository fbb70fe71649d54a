#!/usr/bin/env bash
# Five rounds alternating gpubench's OpenBLAS row and numpy.matmul at 4096^3 on the 2 cores.
set -u
bin=${GPUBENCH:-build-test/app/gpubench}
here=$(dirname "$0")
out=${1:?OUT_DIR}
mkdir -p "$out"
for r in 1 2 3 4 5; do
  "$bin" gemm --cpu-only --m 4096 --n 4096 --k 4096 --dtype f32,f64 --cpu-threads 2 \
    --min-samples 5 --max-samples 5 --timeout 30 --output "$out/gpubench-$r.json" >"$out/gpubench-$r.txt" 2>&1
  /usr/bin/python3 "$here/numpy_matmul.py" 4096 5 >"$out/numpy-$r.json"
  uptime >>"$out/uptime.txt"
done
