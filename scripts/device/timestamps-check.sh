#!/usr/bin/env bash
# Issue 14, the last device call of the ninth session: the whole GPU test executable, the CLI
# tests that change with --timestamps (timestamps, stream, pipeline, delivery) on the GPU, and the
# new rows of stream.   scripts/device/timestamps-check.sh OUT_DIR
# Binaries: build-gpu/app/gpubench and build-gpu/tests/gpubench_gpu_tests; .deps/py/site.
set -uo pipefail
source "$(dirname "$0")/common.sh"
device_start check "${1:?usage: timestamps-check.sh OUT_DIR}"
log "GPU tests"
gpu_tests "$out/gpu-tests.txt"
log "CLI tests"
cli_tests "$out/cli-tests.txt" test_timestamps test_stream test_pipeline test_delivery
log "stream with the new rows"
"$bin" stream --timestamps --batch-time 0.01 --output "$out/stream.json" >"$out/stream.txt" 2>&1
echo "exit $?" >>"$out/stream.txt"
"$bin" doctor >"$out/doctor.txt" 2>&1
log "done"
