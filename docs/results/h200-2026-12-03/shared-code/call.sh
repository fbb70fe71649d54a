#!/usr/bin/env bash
# Device call 4: old = main before the verification and two-stream helpers were shared (git archive in .devrun/old),
# new = the working tree. GPU tests [pipeline] and [augment]; pipeline before/after, 2 rounds; ncu's breakdown of
# one encoder sgemm's SM throughput.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; w=/tmp/d4; mkdir -p $w
py=/usr/bin/python3; [[ -x /opt/torch/.venv/bin/python3 ]] && py=/opt/torch/.venv/bin/python3
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; date -u; } > $o/machine.txt 2>&1; cat $o/machine.txt
el() { echo "$((SECONDS-t0)) s"; }
common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH=$root/.deps/catch2/usr -DSTB_INCLUDE_DIR=$root/.deps/stb/usr/include -DGPUBENCH_PYTHON=$py -DGPUBENCH_OPENCV=OFF)
( cmake -S . -B /tmp/bn "${common[@]}" && cmake --build /tmp/bn -j10 --target gpubench gpubench_gpu_tests ) > $w/build-new.log 2>&1 & pn=$!
( cmake -S .devrun/old -B /tmp/bo "${common[@]}" -DGPUBENCH_WERROR=OFF && cmake --build /tmp/bo -j6 --target gpubench ) > $w/build-old.log 2>&1 & po=$!
wait $pn; rn=$?; wait $po; ro=$?
echo "builds new rc $rn (warnings $(grep -c 'warning:' $w/build-new.log)) old rc $ro at $(el)"; [[ $rn == 0 && $ro == 0 ]] || { grep -B2 -A8 -E "error|warning:" $w/build-new.log | head -60; tail -20 $w/build-old.log; exit 1; }
b=/tmp/bn/app/gpubench
timeout 90 /tmp/bn/tests/gpubench_gpu_tests "[pipeline],[augment]" > $o/gpu-tests.txt 2>&1; echo "gpu tests rc $? at $(el)"; tail -n 2 $o/gpu-tests.txt
AB_ONLY=1 AB_EXTRA='pipeline|pipeline --batch 32' timeout 150 scripts/figures-ab.sh /tmp/bo/app/gpubench $b $w/ab 2 > $w/ab.log 2>&1; echo "ab rc $? at $(el)"
cp $w/ab/ab-table.md $o/ 2>/dev/null
timeout 40 ncu --clock-control none -k regex:Kernel2 --launch-skip 1 --launch-count 1 --metrics breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum --csv $b pipeline --scenario encoder-decoder --batch 32 --mode serial --steps 2 --warmup-steps 0 --no-verify --timeout 0.2 > $o/ncu-breakdown.csv 2>$w/ncu.err; echo "ncu rc $? at $(el)"
tar -C $w -cJf $o/d4.tar.xz --exclude='build-*.log' . ; echo "total $(el)"
