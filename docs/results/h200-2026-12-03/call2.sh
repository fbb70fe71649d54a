#!/usr/bin/env bash
# Second call: nvbench/BabelStream anchors and compare's default-gate rates, new binary.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS
new=$root/build-dev-new/app/gpubench
if [[ ! -x $new ]]; then
  cmake -S . -B build-dev-new -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH=$root/.deps/catch2/usr -DSTB_INCLUDE_DIR=$root/.deps/stb/usr/include -DGPUBENCH_OPENCV=OFF >/dev/null && cmake --build build-dev-new -j16 --target gpubench >/tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }
  echo "rebuilt in $((SECONDS-t0)) s"
fi
export LD_LIBRARY_PATH="$root/.deps/opencv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p /tmp/p2
timeout 230 scripts/gpu-anchors.sh --gpubench $new /tmp/p2/anchors > /tmp/p2/anchors.log 2>&1; echo "anchors rc $? at $((SECONDS-t0)) s"
cp /tmp/p2/anchors/summary.md $o/anchors-summary.md 2>/dev/null
GPUBENCH=$new timeout 280 scripts/gate-rates.sh --record /tmp/p2/gate > /tmp/p2/gate-rates.txt 2>&1; echo "gate rc $? at $((SECONDS-t0)) s"
cp /tmp/p2/gate/summary.md $o/gate-summary.md 2>/dev/null
tar -C /tmp/p2 -cJf $o/call2.tar.xz .
ls -la $o; echo "total $((SECONDS-t0)) s"
