#!/usr/bin/env bash
# One device call: build old (2601ac6) and new, GPU tests, A/B on the recorded figures, anchors,
# augment's CPU baselines, encoder-decoder.
set -uo pipefail
root=$PWD; o=$OUT
export LD_LIBRARY_PATH="$root/.deps/opencv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $o/machine.txt; nproc >> $o/machine.txt; date -u >> $o/machine.txt
common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH=$root/.deps/catch2/usr -DSTB_INCLUDE_DIR=$root/.deps/stb/usr/include)
cv=(-DGPUBENCH_OPENCV_INCLUDE_DIR=$root/.deps/opencv/include/opencv4 -DGPUBENCH_OPENCV_CORE_LIBRARY=$root/.deps/opencv/lib/libopencv_core.so.406 -DGPUBENCH_OPENCV_IMGPROC_LIBRARY=$root/.deps/opencv/lib/libopencv_imgproc.so.406)
t0=$SECONDS
( cmake -S .ed-old -B $root/build-dev-old "${common[@]}" >/dev/null && cmake --build $root/build-dev-old -j8 --target gpubench >$root/build-dev-old.log 2>&1 ) &
cmake -S . -B $root/build-dev-new "${common[@]}" "${cv[@]}" > $o/configure.log 2>&1 && cmake --build $root/build-dev-new -j12 --target gpubench gpubench_gpu_tests > $root/build-dev-new.log 2>&1 || { tail -30 $root/build-dev-new.log; exit 1; }
wait
echo "built in $((SECONDS-t0)) s"; ls -la $root/build-dev-old/app/gpubench $root/build-dev-new/app/gpubench
new=$root/build-dev-new/app/gpubench; old=$root/build-dev-old/app/gpubench
$new --version | tee $o/version.txt
timeout 180 $root/build-dev-new/tests/gpubench_gpu_tests 2>&1 | tail -25 > $o/gpu-tests.txt; echo "gpu tests rc ${PIPESTATUS[0]}"; tail -3 $o/gpu-tests.txt
mkdir -p $o/ab
for r in 1 2; do for s in old new; do b=$old; [[ $s == new ]] && b=$new
  $b vecadd --n 2^28 -q --output $o/ab/vecadd-$s-$r.json >/dev/null 2>&1
  $b stream --n 2^28 -q --output $o/ab/stream-$s-$r.json >/dev/null 2>&1
  $b augment --batch 256 --impl fused -q --output $o/ab/augment-$s-$r.json >/dev/null 2>&1
  $b pipeline --batch 32 -q --output $o/ab/pipeline-$s-$r.json >/dev/null 2>&1
done; done; echo "ab done at $((SECONDS-t0)) s"
$new augment --batch 32,256 --impl all --cpu-threads 16 --output $o/augment-opencv.json > $o/augment-opencv.txt 2>&1; echo "augment rc $?"
for r in 1 2 3; do $new pipeline --scenario encoder-decoder --batch 8,32,128 -q --output $o/ab/encdec-new-$r.json >/dev/null 2>&1; echo "encdec $r rc $?"; done
$new pipeline --scenario augment-train --mode cpu-augment --batch 32 --output $o/cpu-augment.json > $o/cpu-augment.txt 2>&1; echo "cpu-augment rc $?"
mkdir -p /tmp/pack; mv $o/* /tmp/pack/; cp /tmp/pack/gpu-tests.txt /tmp/pack/augment-opencv.txt $o/ 2>/dev/null
tar -C /tmp/pack -cJf $o/call1.tar.xz .
ls -la $o; echo "total $((SECONDS-t0)) s"
