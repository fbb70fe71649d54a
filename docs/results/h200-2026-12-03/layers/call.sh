#!/usr/bin/env bash
# Device call 1: old = main 798d152 (git archive in .devrun/old), new = merge-layers + GPUBENCH_MLP_SM_TARGET knob.
# GPU tests (new); before/after figures 2 rounds; encoder-decoder SM-target sweep; rerun on GPU results.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; w=/tmp/d1; mkdir -p $w
export LD_LIBRARY_PATH="$root/.deps/opencv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$root/.deps/py/site"
py=/usr/bin/python3; [[ -x /opt/torch/.venv/bin/python3 ]] && py=/opt/torch/.venv/bin/python3
export GPUBENCH_PYTHON=$py
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; date -u; git log --oneline -1; git status --short | head -20; } > $o/machine.txt 2>&1; cat $o/machine.txt
el() { echo "$((SECONDS-t0)) s"; }
common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH=$root/.deps/catch2/usr -DSTB_INCLUDE_DIR=$root/.deps/stb/usr/include -DGPUBENCH_PYTHON=$py)
cv=(-DGPUBENCH_OPENCV_INCLUDE_DIR=$root/.deps/opencv/include/opencv4 -DGPUBENCH_OPENCV_CORE_LIBRARY=$root/.deps/opencv/lib/libopencv_core.so.406 -DGPUBENCH_OPENCV_IMGPROC_LIBRARY=$root/.deps/opencv/lib/libopencv_imgproc.so.406)
( cmake -S . -B /tmp/bn "${common[@]}" "${cv[@]}" && cmake --build /tmp/bn -j11 --target gpubench gpubench_gpu_tests ) > $w/build-new.log 2>&1 & pn=$!
( cmake -S .devrun/old -B /tmp/bo "${common[@]}" -DGPUBENCH_WERROR=OFF "${cv[@]}" && cmake --build /tmp/bo -j5 --target gpubench ) > $w/build-old.log 2>&1 & po=$!
wait $pn; rn=$?; wait $po; ro=$?
echo "builds new rc $rn (warnings $(grep -c 'warning:' $w/build-new.log)) old rc $ro at $(el)"; [[ $rn == 0 && $ro == 0 ]] || { grep -B2 -A8 -E "error|warning:" $w/build-new.log | head -60; tail -20 $w/build-old.log; exit 1; }
b=/tmp/bn/app/gpubench; $b --version > $o/version-new.txt; /tmp/bo/app/gpubench --version > $o/version-old.txt
timeout 170 /tmp/bn/tests/gpubench_gpu_tests > $o/gpu-tests.txt 2>&1; echo "gpu tests rc $? at $(el)"; tail -3 $o/gpu-tests.txt
timeout 200 scripts/figures-ab.sh /tmp/bo/app/gpubench $b $w/ab 2 > $w/ab.log 2>&1; echo "ab rc $? at $(el)"
cp $w/ab/ab-table.md $o/ab-table.md 2>/dev/null
mkdir -p $w/sm
for r in 1 2; do for t in 0 44 66 88 110; do
  left=$((500 - (SECONDS-t0))); (( left > 10 )) || break 2
  GPUBENCH_MLP_SM_TARGET=$t timeout $left $b pipeline --scenario encoder-decoder --batch 32 --output $w/sm/sm$t-$r.json > $w/sm/sm$t-$r.txt 2>&1; echo "sm $t round $r rc $? at $(el)"
done; done
$py - $w/sm <<'PY' | tee $o/sm-table.txt
import json,glob,sys,collections
rows=collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1]+'/sm*.json')):
    t=f.split('/')[-1].split('-')[0][2:]
    d=json.load(open(f))
    for p in d.get('points',d.get('results',[])):
        m={x['name']:x for x in p.get('measurements',[])}
        der=p.get('derived',{})
        def med(n): return m[n]['stats']['median']*1e6 if n in m else float('nan')
        rows[int(t)].append((med('stage_a'),med('stage_b'),med('serial'),med('streams'),med('graph'),der.get('streams_overlap_efficiency'),der.get('graph_overlap_efficiency'),der.get('streams_host_seconds_per_step'),der.get('serial_host_seconds_per_step')))
print('sm_target | stage_a | stage_b | serial | streams | graph | streams eff | graph eff | streams host | serial host')
for t in sorted(rows):
    for r in rows[t]: print(t, ' | '.join('%.1f'%x if isinstance(x,float) and x>1e-3 else ('%.3f'%x if isinstance(x,float) else str(x)) for x in r))
PY
for f in vecadd-10M pipeline; do left=$((585 - (SECONDS-t0))); (( left > 10 )) || break
  timeout $left $b rerun $w/ab/$f-new-1.json --output $w/rerun-$f.json > $w/rerun-$f.txt 2>&1; echo "rerun $f rc $? at $(el)"; done
tar -C $w -cJf $o/d1.tar.xz --exclude='build-*.log' . ; cp $w/build-new.log $o/ 2>/dev/null; echo "total $(el)"
