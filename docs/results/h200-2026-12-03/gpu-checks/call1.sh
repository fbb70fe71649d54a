#!/usr/bin/env bash
# Device call 1: build new (all) and old (8dc7c02, gpubench only); GPU tests; ctest (CLI on a GPU machine);
# a GPU sweep killed and resumed; documented GPU commands; NVML driver path; vecadd --grid device per dtype.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; w=/tmp/c1; mkdir -p $w
export LD_LIBRARY_PATH="$root/.deps/opencv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$root/.deps/py/site"
py=$(command -v python3)
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; date -u; $py --version; cat /proc/driver/nvidia/version; } > $w/machine.txt 2>&1
common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH=$root/.deps/catch2/usr -DSTB_INCLUDE_DIR=$root/.deps/stb/usr/include -DGPUBENCH_PYTHON=$py -DGPUBENCH_WERROR=OFF)
cv=(-DGPUBENCH_OPENCV_INCLUDE_DIR=$root/.deps/opencv/include/opencv4 -DGPUBENCH_OPENCV_CORE_LIBRARY=$root/.deps/opencv/lib/libopencv_core.so.406 -DGPUBENCH_OPENCV_IMGPROC_LIBRARY=$root/.deps/opencv/lib/libopencv_imgproc.so.406)
( cmake -S . -B /tmp/bn "${common[@]}" "${cv[@]}" && cmake --build /tmp/bn -j12 ) > $w/build-new.log 2>&1 & pn=$!
( cmake -S .devrun/old -B /tmp/bo "${common[@]}" "${cv[@]}" && cmake --build /tmp/bo -j6 --target gpubench ) > $w/build-old.log 2>&1 & po=$!
wait $pn; rn=$?; wait $po; ro=$?
echo "builds new rc $rn old rc $ro at $((SECONDS-t0)) s"; [[ $rn == 0 ]] || { tail -40 $w/build-new.log; exit 1; }
grep -B2 -A12 "warning:" $w/build-new.log > $w/warnings.txt; b=/tmp/bn/app/gpubench; $b --version > $w/version-new.txt; /tmp/bo/app/gpubench --version > $w/version-old.txt
timeout 200 /tmp/bn/tests/gpubench_gpu_tests > $w/gpu-tests.txt 2>&1; echo "gpu tests rc $? at $((SECONDS-t0)) s"; tail -3 $w/gpu-tests.txt
timeout 260 ctest --test-dir /tmp/bn -LE gpu -j8 --timeout 200 --output-on-failure > $w/ctest.txt 2>&1; echo "ctest rc $? at $((SECONDS-t0)) s"; grep -E "tests passed|Failed|\*\*\*|Not Run" $w/ctest.txt | head -20
grep -E "skipped|SKIP" -i $w/ctest.txt | grep -iv "0 skipped" | head -20 > $w/ctest-skips.txt
# A GPU sweep killed with SIGKILL, then resumed
j=$w/journal; mkdir -p $j
$b vecadd --n 1M:256M:x2 --output $j/v.json > $j/first.out 2>&1 & pid=$!
for i in $(seq 1 900); do n=$(wc -l < $j/v.json.journal 2>/dev/null || echo 0); [[ $n -ge 5 ]] && break; sleep 0.05; done
kill -9 $pid; wait $pid 2>/dev/null; echo "killed with $n journal lines" | tee $j/log.txt; ls -la $j >> $j/log.txt
cp $j/v.json.journal $j/journal-at-kill.txt 2>/dev/null
$b vecadd --n 1M:256M:x2 --output $j/v.json --resume > $j/resume.out 2>&1; echo "resume rc $?" | tee -a $j/log.txt; ls -la $j >> $j/log.txt
$py - $j/v.json <<'PY' | tee -a $j/log.txt
import json,sys; d=json.load(open(sys.argv[1])); r=d["results"]
print("points", len(r), "statuses", sorted({x["status"] for x in r}), "resumed", d["meta"].get("resumed"))
print("driver", d["meta"]["cuda"].get("nvidia_driver"))
PY
echo "journal done at $((SECONDS-t0)) s"
# The NVML path of the driver version: /proc's file hidden in a private mount namespace
: > $w/empty; unshare -m sh -c "mount --bind $w/empty /proc/driver/nvidia/version && cat /proc/driver/nvidia/version | wc -c && $b vecadd --n 1M -q --output $w/nvml.json" > $w/nvml.txt 2>&1; echo "nvml path rc $?" >> $w/nvml.txt
$py -c "import json; print('nvml-path driver', json.load(open('$w/nvml.json'))['meta']['cuda'].get('nvidia_driver'))" >> $w/nvml.txt 2>&1; cat $w/nvml.txt
# Documented commands on the GPU
GPUBENCH=$b timeout 200 $py tests/cli/test_docs.py --gpu $w/docs --fast > $w/docs.log 2>&1; echo "docs rc $? at $((SECONDS-t0)) s"; tail -4 $w/docs.log
for d in f32 f64 f16 bf16; do $b vecadd --n 2^26 --dtype $d --grid device --output $w/grid-$d.json > $w/grid-$d.txt 2>&1; echo "grid device $d rc $?"; done
tar -C $w -cJf $o/c1.tar.xz . ; cp $w/gpu-tests.txt $w/ctest.txt $o/ 2>/dev/null
echo "total $((SECONDS-t0)) s"
