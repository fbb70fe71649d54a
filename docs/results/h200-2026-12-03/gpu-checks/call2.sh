#!/usr/bin/env bash
# Device call 2: old (8dc7c02) and new builds; GPU tests; the CLI tests that failed on call 1; before/after figures; the documented commands not yet passed on the GPU.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; w=/tmp/c2; mkdir -p $w; B=${BUDGET:-425}
export LD_LIBRARY_PATH="$root/.deps/opencv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$root/.deps/py/site"
py=/usr/bin/python3; [[ -x /opt/torch/.venv/bin/python3 ]] && py=/opt/torch/.venv/bin/python3
export GPUBENCH_PYTHON=$py
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; date -u; $py --version; $py -c "import matplotlib, jsonschema; print('matplotlib', matplotlib.__version__, 'jsonschema', jsonschema.__version__)"; git log --oneline -1; } > $o/machine.txt 2>&1; cat $o/machine.txt
common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH=$root/.deps/catch2/usr -DSTB_INCLUDE_DIR=$root/.deps/stb/usr/include -DGPUBENCH_PYTHON=$py)
cv=(-DGPUBENCH_OPENCV_INCLUDE_DIR=$root/.deps/opencv/include/opencv4 -DGPUBENCH_OPENCV_CORE_LIBRARY=$root/.deps/opencv/lib/libopencv_core.so.406 -DGPUBENCH_OPENCV_IMGPROC_LIBRARY=$root/.deps/opencv/lib/libopencv_imgproc.so.406)
( cmake -S . -B /tmp/bn "${common[@]}" "${cv[@]}" && cmake --build /tmp/bn -j12 ) > $w/build-new.log 2>&1 & pn=$!
( cmake -S .devrun/old -B /tmp/bo "${common[@]}" -DGPUBENCH_WERROR=OFF "${cv[@]}" && cmake --build /tmp/bo -j6 --target gpubench ) > $w/build-old.log 2>&1 & po=$!
wait $pn; rn=$?; wait $po; ro=$?
echo "builds new rc $rn (warnings $(grep -c 'warning:' $w/build-new.log)) old rc $ro at $((SECONDS-t0)) s"; [[ $rn == 0 && $ro == 0 ]] || { grep -A5 -E "error|warning:" $w/build-new.log | head -40; exit 1; }
b=/tmp/bn/app/gpubench
timeout 120 /tmp/bn/tests/gpubench_gpu_tests > $o/gpu-tests.txt 2>&1; echo "gpu tests rc $? at $((SECONDS-t0)) s"; tail -2 $o/gpu-tests.txt
timeout 100 ctest --test-dir /tmp/bn -R 'test_devices_help|test_augment|test_docs|test_plot|test_html_report|test_mpi' -j6 --timeout 95 --output-on-failure > $o/ctest.txt 2>&1; echo "ctest rc $? at $((SECONDS-t0)) s"; grep -E "tests passed|\*\*\*" $o/ctest.txt
(cd tests/cli && GPUBENCH=$b GPUBENCH_SOURCE_DIR=$root timeout 45 $py -m unittest -v test_faults test_signals) > $o/faults-signals-journal.txt 2>&1; echo "faults/signals/journal rc $? at $((SECONDS-t0)) s"; grep -ciE "skipped" $o/faults-signals-journal.txt
AB_EXTRA=$'stream-2p28|stream --n 2^28\ngrid-f64|vecadd --n 2^26 --dtype f64 --grid device\ngrid-bf16|vecadd --n 2^26 --dtype bf16 --grid device' \
  timeout 170 scripts/figures-ab.sh /tmp/bo/app/gpubench $b $w/ab 2 > $w/ab.log 2>&1; echo "ab rc $? at $((SECONDS-t0)) s"
cp $w/ab/ab-table.md $o/ab-table.md 2>/dev/null; tar -C $w -cJf $o/ab.tar.xz ab ab.log build-new.log 2>/dev/null
left=$((B - (SECONDS-t0))); echo "docs gets $left s"
GPUBENCH=$b timeout $left $py tests/cli/test_docs.py --gpu $w/docs --fast --skip-passed .devrun/c1/docs.log > $o/docs.log 2>&1; echo "docs rc $? at $((SECONDS-t0)) s"; tail -3 $o/docs.log
cp $w/docs/docs-commands.txt $o/ 2>/dev/null; echo "total $((SECONDS-t0)) s"
