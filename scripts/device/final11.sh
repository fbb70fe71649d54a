#!/usr/bin/env bash
# Eleventh session, last device call: scripts/gpu-check.sh --prebuilt on the session's final build
# (every GPU test, then every benchmark docs/results records, the three --energy targets included),
# the new energy GPU test alone and verbose, and the energy and timestamps CLI tests. $OUT/final.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
o=${OUT:-/tmp/out}/final
device_start final "$o"
log "gpu-check --prebuilt"
timeout 420 scripts/gpu-check.sh --prebuilt build-gpu "$o/check" >"$o/gpu-check.txt" 2>&1
echo "exit $?" >>"$o/gpu-check.txt"
tail -3 "$o/gpu-check.txt"
log "the waits-inside-launches test, verbose"
timeout 60 build-gpu/tests/gpubench_gpu_tests "energy: a body that waits*" -s >"$o/waits-test.txt" 2>&1
echo "exit $?" >>"$o/waits-test.txt"
log "cli tests"
cli_tests "$o/cli-tests.txt" test_energy test_timestamps
log done
tar -C "${OUT:-/tmp/out}" -cJf "${OUT:-/tmp/out}/final.tar.xz" final && rm -rf "$o"
