#!/usr/bin/env bash
# gpubench's timer checked against nvbench, and its stream beside BabelStream, in one call on a
# GPU machine (docs/methodology.md, "Checked against nvbench"; docs/stream.md). About 3 minutes
# on an H200.
#
#   scripts/gpu-anchors.sh [--gpubench PATH] OUT_DIR
#
# PATH is the gpubench binary (default: $GPUBENCH, else build/app/gpubench). The reference tools
# are built beforehand, on any machine with nvcc, by scripts/anchors/build.sh, which leaves them
# in .deps/ (copy that folder along; GPUBENCH_DEPS=DIR reads them from DIR instead):
# .deps/nvbench/bin/gpubench-nvbench and .deps/babelstream/bin/cuda-stream. OUT_DIR receives
# every tool's raw output (nvbench.json with its samples, gpubench-*.json, babelstream.csv, each
# step's stdout and stderr) and summary.md / summary.json, which set them side by side
# (scripts/anchors/summarize.py).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${GPUBENCH:-$root/build/app/gpubench}
if [[ "${1:-}" == "--gpubench" ]]; then bin=${2:?--gpubench needs a path}; shift 2; fi
out=${1:?usage: scripts/gpu-anchors.sh [--gpubench PATH] OUT_DIR}
deps=${GPUBENCH_DEPS:-$root/.deps}
nvbench=$deps/nvbench/bin/gpubench-nvbench
babelstream=$deps/babelstream/bin/cuda-stream
for tool in "$bin" "$nvbench" "$babelstream"; do
  [[ -x $tool ]] || { echo "gpu-anchors.sh: $tool is missing (see scripts/anchors/build.sh)" >&2
                      exit 2; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

step() { # name, command...: runs it, its stdout into OUT_DIR/name.txt, and says how long it took
  local name=$1; shift
  echo "== $*" | tee -a "$out/commands.txt"
  local t0=$(date +%s%N)
  set +e
  "$@" >"$out/$name.txt" 2>"$out/$name.err"
  local rc=$?
  set -e
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "   exit $rc, $((ms / 1000)).$(printf %03d $((ms % 1000))) s" | tee -a "$out/commands.txt"
  return 0
}

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
    --format=csv || true
  date -u +%Y-%m-%dT%H:%M:%SZ
  "$bin" --version
  echo "babelstream $(cat "$deps/babelstream/COMMIT" 2>/dev/null || echo unknown)"
} >"$out/machine.txt" 2>&1

sizes=1Mi:1Gi:x4 # 2^20 to 2^30 by factors of 4, as nvbench's axis "n"
# nvbench's defaults (cold: a memset of an L2-sized buffer before every sample, stopping at 0.5%
# relative noise after 0.5 s of GPU time) with its timeout cut from 15 s to 4 s a state, so that
# 42 states fit the call. Sample times go to nvbench.json-bin/ for the medians.
step nvbench "$nvbench" --timeout 4 --jsonbin "$out/nvbench.json"
for mode in read write; do
  step "gpubench-vecadd-$mode" "$bin" vecadd --n "$sizes" --kernel seed,vectorized \
    --l2-flush "$mode" --format table --output "$out/gpubench-vecadd-$mode.json"
done
step gpubench-stream "$bin" stream --n 2^28 --format table --output "$out/gpubench-stream.json"
# BabelStream's defaults but f32: 100 runs of each kernel, the first dropped, each timed on the
# host around the launch and a stream synchronize.
step babelstream "$babelstream" --arraysize 268435456 --float --csv
cp "$out/babelstream.txt" "$out/babelstream.csv"

python3 "$root/scripts/anchors/summarize.py" "$out"
