#!/usr/bin/env bash
# The developer's check before pushing, a few minutes with a warm build folder: formatting, the
# docs' rules, the build, and every test that needs no GPU (unit and CLI; the GPU tests are left
# out, not skipped). The whole CI run (tidy, sanitizers, fuzzing, the .deb and the wheel) is `bash .ci/run`.
#   scripts/quick-check.sh [BUILD_DIR]      (default build-test; JOBS=2 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-test}
jobs=${JOBS:-2}
export PATH=/usr/local/cuda/bin:$PATH
scripts/check-format.sh
scripts/check-docs.sh
[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
cmake --build "$build" -j"$jobs"
ctest --test-dir "$build" -LE gpu --output-on-failure -j"$jobs"
