#!/usr/bin/env bash
# Device call 3: old = main before the stopping criteria (git archive in .devrun/old), new = the working tree.
# GPU tests; [pipeline] GPU tests under cuBLASLt reduction-scheme masks; before/after figures 2 rounds;
# reduction-mask experiment on the encoder-decoder; ncu breakdown of the sgemm; the new options on the GPU;
# the documented commands not yet passed on a GPU.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; w=/tmp/d3; mkdir -p $w
export LD_LIBRARY_PATH="$root/.deps/opencv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$root/.deps/py/site"
py=/usr/bin/python3; [[ -x /opt/torch/.venv/bin/python3 ]] && py=/opt/torch/.venv/bin/python3
export GPUBENCH_PYTHON=$py
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; date -u; git log --oneline -1; } > $o/machine.txt 2>&1; cat $o/machine.txt
el() { echo "$((SECONDS-t0)) s"; }
common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH=$root/.deps/catch2/usr -DSTB_INCLUDE_DIR=$root/.deps/stb/usr/include -DGPUBENCH_PYTHON=$py)
cv=(-DGPUBENCH_OPENCV_INCLUDE_DIR=$root/.deps/opencv/include/opencv4 -DGPUBENCH_OPENCV_CORE_LIBRARY=$root/.deps/opencv/lib/libopencv_core.so.406 -DGPUBENCH_OPENCV_IMGPROC_LIBRARY=$root/.deps/opencv/lib/libopencv_imgproc.so.406)
( cmake -S . -B /tmp/bn "${common[@]}" "${cv[@]}" && cmake --build /tmp/bn -j11 --target gpubench gpubench_gpu_tests ) > $w/build-new.log 2>&1 & pn=$!
( cmake -S .devrun/old -B /tmp/bo "${common[@]}" -DGPUBENCH_WERROR=OFF "${cv[@]}" && cmake --build /tmp/bo -j5 --target gpubench ) > $w/build-old.log 2>&1 & po=$!
wait $pn; rn=$?; wait $po; ro=$?
echo "builds new rc $rn (warnings $(grep -c 'warning:' $w/build-new.log)) old rc $ro at $(el)"; [[ $rn == 0 && $ro == 0 ]] || { grep -B2 -A8 -E "error|warning:" $w/build-new.log | head -60; tail -20 $w/build-old.log; exit 1; }
b=/tmp/bn/app/gpubench; $b --version > $o/version-new.txt; /tmp/bo/app/gpubench --version > $o/version-old.txt
timeout 170 /tmp/bn/tests/gpubench_gpu_tests > $o/gpu-tests.txt 2>&1; echo "gpu tests rc $? at $(el)"; tail -2 $o/gpu-tests.txt
for mask in 0 1; do GPUBENCH_MLP_REDUCTION_MASK=$mask timeout 80 /tmp/bn/tests/gpubench_gpu_tests "[pipeline]" > $o/gpu-tests-pipeline-mask$mask.txt 2>&1; echo "gpu tests [pipeline] mask $mask rc $? at $(el)"; tail -1 $o/gpu-tests-pipeline-mask$mask.txt; done
timeout 200 scripts/figures-ab.sh /tmp/bo/app/gpubench $b $w/ab 2 > $w/ab.log 2>&1; echo "ab rc $? at $(el)"
cp $w/ab/ab-table.md $o/ab-table.md 2>/dev/null
mkdir -p $w/mask
for r in 1 2; do for mask in all 0 1; do
  left=$((470 - (SECONDS-t0))); (( left > 10 )) || break 2
  if [[ $mask == all ]]; then env -u GPUBENCH_MLP_REDUCTION_MASK timeout $left $b pipeline --scenario encoder-decoder --batch 8,32,128 --output $w/mask/mask$mask-$r.json > $w/mask/mask$mask-$r.txt 2>&1
  else GPUBENCH_MLP_REDUCTION_MASK=$mask timeout $left $b pipeline --scenario encoder-decoder --batch 8,32,128 --output $w/mask/mask$mask-$r.json > $w/mask/mask$mask-$r.txt 2>&1; fi
  echo "mask $mask round $r rc $? at $(el)"
done; done
GPUBENCH_MLP_REDUCTION_MASK=1 timeout 60 ncu --clock-control none --launch-count 14 --metrics gpu__time_duration.sum,launch__grid_size,sm__throughput.avg.pct_of_peak_sustained_elapsed --csv $b pipeline --scenario encoder-decoder --batch 32 --mode serial --steps 2 --warmup-steps 0 --no-verify --timeout 0.2 > $w/ncu-mask1.csv 2>$w/ncu-mask1.err; echo "ncu mask1 rc $? at $(el)"
timeout 60 ncu --clock-control none -k regex:simt_sgemm --launch-count 1 --metrics breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active --csv $b pipeline --scenario encoder-decoder --batch 32 --mode serial --steps 2 --warmup-steps 0 --no-verify --timeout 0.2 > $w/ncu-breakdown.csv 2>$w/ncu-breakdown.err; echo "ncu breakdown rc $? at $(el)"
mkdir -p $w/opts
for c in "vecadd-entropy-rt|vecadd --n 2^26 --stopping entropy --reject-throttled 0.95" "vecadd-10M-rt|vecadd --n 10M --reject-throttled 0.95" "stream-entropy|stream --n 2^26 --stopping entropy" "augment-entropy|augment --batch 256 --impl fused --stopping entropy" "ed-entropy|pipeline --scenario encoder-decoder --batch 32 --stopping entropy"; do
  n=${c%%|*}; read -r -a args <<<"${c#*|}"; timeout 40 $b "${args[@]}" --output $w/opts/$n.json > $w/opts/$n.txt 2>&1; echo "$n rc $? at $(el)"; done
$py - $w/opts <<'PY' | tee $o/opts-summary.txt
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/*.json')):
    d=json.load(open(f)); print('==', f.split('/')[-1], 'options:', {k:v for k,v in d['meta'].get('options',{}).items() if k in ('stopping','entropy-max-angle','entropy-min-r2','reject-throttled')})
    for r in d['results']:
        for m in r['measurements']:
            if m.get('clock')!='gpu': continue
            print('  ', m['name'], 'n', m['stats']['count'], 'median %.2f us'%(m['stats']['median']*1e6), 'rel.sd %.2f%%'%(m['stats']['rel_stddev']*100), 'stop', m.get('stop_reason'), 'stopping', json.dumps(m.get('stopping')), 'throttled', json.dumps(m.get('throttled_samples')))
PY
left=$((570 - (SECONDS-t0))); echo "docs gets $left s"
(( left > 10 )) && GPUBENCH=$b timeout $left $py tests/cli/test_docs.py --gpu $w/docs --fast --skip-passed .devrun/docs-passed.log > $w/docs.log 2>&1; echo "docs rc $? at $(el)"; tail -2 $w/docs.log
cp $w/docs/docs-commands.txt $o/ 2>/dev/null
tar -C $w -cJf $o/d3.tar.xz --exclude='build-*.log' . ; echo "total $(el)"
