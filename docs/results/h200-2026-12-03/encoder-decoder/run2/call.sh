#!/usr/bin/env bash
# Device call 2: the encoder-decoder's kernels under ncu (grid, duration, throughput); five
# encoder-decoder runs at batch 32; `pipeline --batch 32 --energy` three times.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; w=/tmp/d2; mkdir -p $w
export LD_LIBRARY_PATH="$root/.deps/opencv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
py=/usr/bin/python3; [[ -x /opt/torch/.venv/bin/python3 ]] && py=/opt/torch/.venv/bin/python3
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; date -u; git log --oneline -1; which ncu; ncu --version | tail -1; } > $o/machine.txt 2>&1; cat $o/machine.txt
el() { echo "$((SECONDS-t0)) s"; }
common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH=$root/.deps/catch2/usr -DSTB_INCLUDE_DIR=$root/.deps/stb/usr/include -DGPUBENCH_PYTHON=$py)
cv=(-DGPUBENCH_OPENCV_INCLUDE_DIR=$root/.deps/opencv/include/opencv4 -DGPUBENCH_OPENCV_CORE_LIBRARY=$root/.deps/opencv/lib/libopencv_core.so.406 -DGPUBENCH_OPENCV_IMGPROC_LIBRARY=$root/.deps/opencv/lib/libopencv_imgproc.so.406)
( cmake -S . -B /tmp/bn "${common[@]}" "${cv[@]}" && cmake --build /tmp/bn -j16 --target gpubench ) > $w/build-new.log 2>&1; rn=$?
echo "build rc $rn at $(el)"; [[ $rn == 0 ]] || { grep -B2 -A8 -E "error" $w/build-new.log | head -60; exit 1; }
b=/tmp/bn/app/gpubench; $b --version > $o/version.txt
mkdir -p $w/ed
for r in 1 2 3 4 5; do timeout 60 $b pipeline --scenario encoder-decoder --batch 32 --output $w/ed/ed-$r.json > $w/ed/ed-$r.txt 2>&1; echo "ed $r rc $? at $(el)"; done
m=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic,launch__waves_per_multiprocessor,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg.pct_of_peak_sustained_elapsed
timeout 120 ncu --clock-control none --launch-count 90 --metrics $m --csv $b pipeline --scenario encoder-decoder --batch 32 --mode serial --steps 4 --warmup-steps 1 --no-verify --timeout 0.3 > $w/ncu.csv 2> $w/ncu.err; echo "ncu rc $? at $(el)"; tail -3 $w/ncu.err
mkdir -p $w/energy
for r in 1 2 3; do left=$((560 - (SECONDS-t0))); (( left > 20 )) || break; timeout $left $b pipeline --batch 32 --energy --output $w/energy/run-$r.json > $w/energy/run-$r.txt 2>&1; echo "energy $r rc $? at $(el)"; done
tar -C $w -cJf $o/d2.tar.xz --exclude='build-*.log' . ; echo "total $(el)"
