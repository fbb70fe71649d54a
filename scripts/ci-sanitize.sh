#!/usr/bin/env bash
# Sanitizer build for CI (docs/reliability.md): gpubench's host code built a second time with
# AddressSanitizer and UndefinedBehaviorSanitizer (GPUBENCH_SANITIZE=ON), then the unit and CLI
# tests run against it (ctest -LE gpu: every test but the GPU executable). Any finding fails.
#   scripts/ci-sanitize.sh [BUILD_DIR]        (default build-san; JOBS=2 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-san}
jobs=${JOBS:-2}
export PATH=/usr/local/cuda/bin:$PATH

start=$SECONDS
# Debug keeps assertions on; -O1 -g1 (line tables) keeps the instrumented build short on 2 cores,
# and so does a unity build (CMake compiles each target's sources in batches of 8 per translation
# unit: about half the time). Warnings are the test build's to fail on (-Werror there): a unity
# batch warns of things no single file has (an enumerator named like an earlier file's
# using-declaration, a class of one file's anonymous namespace held by another's), so they stay
# warnings here.
cmake -S . -B "$build" -DGPUBENCH_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES:-90}" \
  -DCMAKE_UNITY_BUILD=ON -DGPUBENCH_WERROR=OFF >/dev/null
# Only what ctest -LE gpu runs: the GPU test executable is neither built nor run here.
cmake --build "$build" -j"$jobs" --target gpubench gpubench_unit_tests
built=$SECONDS

# The CUDA driver maps memory at fixed addresses inside the range ASan reserves as its "shadow
# gap"; with the gap protected, cuInit fails or the process crashes on a GPU machine, so it is
# left unprotected (protect_shadow_gap=0). Leak checking stays on, but the driver's and the
# runtime's process-lifetime allocations (never freed by design) are suppressed by library name;
# on a machine without a driver (CI) there are none. A sanitizer finding exits 86, a code gpubench
# never uses, so no test can mistake it for "verification failed" (1) or "usage error" (2).
# Thread-local storage is not scanned as a root (use_tls=0): LSan's walk of the dynamic TLS of a
# dlopen'ed library (CUPTI, which `doctor` and --timestamps load from the toolkit) crashes its
# tracer ("Tracer caught signal 11", GCC 12's LeakSanitizer with glibc 2.36) once the toolkit is
# in ld.so.cache. Without TLS as a root LSan reports more, never less: memory that only a
# thread_local points to would show as a leak. glibc keeps its dlerror() message and its dlopen
# scope array that way, so those two allocation sites (and the message's vasprintf) are
# suppressed by name; gpubench itself calls neither.
suppressions=$(mktemp)
trap 'rm -f "$suppressions"' EXIT
printf 'leak:libcuda.so\nleak:__cudart\nleak:libnvidia-\nleak:_dlerror_run\nleak:add_to_global_resize\nleak:__vasprintf_internal\n' >"$suppressions"
asan=protect_shadow_gap=0:detect_leaks=1:exitcode=86:abort_on_error=0:strict_string_checks=1
export ASAN_OPTIONS=$asan:detect_stack_use_after_return=1:check_initialization_order=1
export LSAN_OPTIONS=suppressions=$suppressions:print_suppressions=0:use_tls=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86

ctest --test-dir "$build" -LE gpu --output-on-failure -j"$jobs"
echo "ci-sanitize: build $((built - start)) s, tests $((SECONDS - built)) s"
