#!/usr/bin/env bash
# augment's CPU baselines on the GPU machine's host (docs/augment.md, "OpenCV baseline"): the float
# reference and the OpenCV row beside the GPU versions at batch 32 and 256 on 16 threads (the
# fused/cpu speedups against each), OpenCV's own thread pool instead of one image per thread, the
# same pipeline through Python's cv2 when the machine has it, and pipeline's cpu-augment with and
# without OpenCV. Needs build-gpu/ built with OpenCV (all.sh passes .deps/opencv when the machine
# lacks it).   scripts/device/opencv-baseline.sh OUT_DIR
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
o=${1:?usage: opencv-baseline.sh OUT_DIR}
# Before device_start, which runs the binary: it needs OpenCV's libraries to load.
cvlib=$root/.deps/opencv/lib
[[ -d $cvlib ]] && export LD_LIBRARY_PATH="$cvlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
device_start opencv "$o"
{ uptime; lscpu | head -20; nproc; "$bin" doctor; } >"$o/host.txt" 2>&1
grep -q 'OpenCV: built in' "$o/machine.txt" ||
  { echo "build-gpu has no OpenCV"; cat "$o/machine.txt"; exit 1; }
for r in 1 2; do
  log "augment gpu $r"
  uptime >>"$o/uptime.txt"
  timeout 200 "$bin" augment --batch 32,256 --impl all --cpu-threads 16 \
    --output "$o/augment-$r.json" >"$o/augment-$r.txt" 2>&1
  sed -n '/augment summary/,/^$/p' "$o/augment-$r.txt"
done
log "opencv pool"
GPUBENCH_TEST_OPENCV_THREADING=opencv timeout 150 "$bin" augment --cpu-only --batch 32,256 \
  --cpu-threads 16 --output "$o/cpu-only-opencv-pool.json" >"$o/cpu-only-opencv-pool.txt" 2>&1
sed -n '/augment summary/,/^$/p' "$o/cpu-only-opencv-pool.txt"
log "python cv2"
python3 docs/results/2026-12-03/opencv-baseline/augment_opencv.py --batch 32,256 --threads 16 \
  --repeats 11 >"$o/python-cv2.txt" 2>&1
cat "$o/python-cv2.txt"
for cv in opencv reference; do
  log "pipeline cpu-augment ($cv)"
  env=()
  [[ $cv == reference ]] && env=(GPUBENCH_TEST_PRETEND_NO_OPENCV=1)
  env "${env[@]}" timeout 150 "$bin" pipeline --scenario augment-train --batch 32 \
    --mode serial,cpu-augment --cpu-threads 16 --output "$o/pipeline-$cv.json" \
    >"$o/pipeline-$cv.txt" 2>&1
  grep -E 'stage_a_cpu|cpu_augment|verification' "$o/pipeline-$cv.txt" | head -8
done
log "tests"
gpu_tests "$o/gpu-tests.txt" "[augment]"
cli_tests "$o/cli-tests.txt" test_augment
log done
