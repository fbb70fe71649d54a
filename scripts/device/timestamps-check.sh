#!/usr/bin/env bash
# Issue 14, the last device call of the ninth session: the whole GPU test executable, the CLI
# tests that change with --timestamps (timestamps, stream, pipeline, delivery) on the GPU, and the
# new rows of stream.   scripts/device/timestamps-check.sh OUT_DIR
# Binaries: build-gpu/app/gpubench and build-gpu/tests/gpubench_gpu_tests; .deps/py/site.
set -uo pipefail
out=${1:?usage: timestamps-check.sh OUT_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mkdir -p "$out"
bin=$root/build-gpu/app/gpubench
[[ -d .deps/py/site ]] && export PYTHONPATH="$root/.deps/py/site${PYTHONPATH:+:$PYTHONPATH}"
started=$(date +%s)
log() { echo "[check $(($(date +%s) - started))s] $*"; }
{ nvidia-smi --query-gpu=name,driver_version,temperature.gpu,power.draw --format=csv
  date -u +%Y-%m-%dT%H:%M:%SZ; "$bin" --version; } >"$out/machine.txt" 2>&1
log "GPU tests"
timeout 300 build-gpu/tests/gpubench_gpu_tests >"$out/gpu-tests.txt" 2>&1
echo "exit $?" >>"$out/gpu-tests.txt"
tail -4 "$out/gpu-tests.txt"
log "CLI tests"
(cd tests/cli && GPUBENCH=$bin GPUBENCH_SOURCE_DIR=$root timeout 400 python3 -m unittest -v \
  test_timestamps test_stream test_pipeline test_delivery) >"$out/cli-tests.txt" 2>&1
echo "exit $?" >>"$out/cli-tests.txt"
tail -6 "$out/cli-tests.txt"
log "stream with the new rows"
"$bin" stream --timestamps --batch-time 0.01 --output "$out/stream.json" >"$out/stream.txt" 2>&1
echo "exit $?" >>"$out/stream.txt"
"$bin" doctor >"$out/doctor.txt" 2>&1
log "done"
