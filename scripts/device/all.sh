#!/usr/bin/env bash
# One device call on a GPU machine: build gpubench (build-gpu/, Release, sm_90) unless it is there,
# then run the named parts, each bounded in time, their output under OUT/<part>/.
#
#   scripts/device/all.sh OUT PART...
#
# Parts: tests (the GPU test executable), ab (scripts/figures-ab.sh against the tree in .old-src/,
# built into build-old/), 14, 15, 16, 17, 18a, 18b, stream, energy (the scripts beside this one),
# energy-tests (the GPU tests tagged [energy]), batch, refactor (refactor-ab.sh), packages
# (packages.sh over .pkg/), encdec (old vs new, pipeline encoder-decoder alone), opencv
# (opencv-baseline.sh: augment's CPU baselines). Binaries already
# in build-gpu/ and build-old/ (for example built elsewhere and carried) are used as they are.
# What the machine lacks may sit in .deps/ (see scripts/gpu-check.sh): catch2, stb, py/site, and
# mpi-inc/ (Open MPI's headers, for a machine that has the MPI library but not its -dev package).
set -uo pipefail
out=${1:?usage: scripts/device/all.sh OUT PART...}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mkdir -p "$out"
jobs=$(nproc)
[[ -d .deps/py/site ]] && export PYTHONPATH="$root/.deps/py/site${PYTHONPATH:+:$PYTHONPATH}"
deps=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90)
[[ -d .deps/catch2/usr ]] && deps+=(-DCMAKE_PREFIX_PATH="$root/.deps/catch2/usr")
[[ -d .deps/stb/usr/include ]] && deps+=(-DSTB_INCLUDE_DIR="$root/.deps/stb/usr/include")
# OpenCV's core and imgproc (augment's OpenCV baseline) for a machine without them: Debian 12's
# libraries and headers in .deps/opencv (its README.txt), also on the library path to run.
if [[ -d .deps/opencv/include && ! -e /usr/lib/x86_64-linux-gnu/libopencv_imgproc.so ]]; then
  export LD_LIBRARY_PATH="$root/.deps/opencv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  deps+=(-DGPUBENCH_OPENCV_INCLUDE_DIR="$root/.deps/opencv/include/opencv4"
    -DGPUBENCH_OPENCV_CORE_LIBRARY="$root/.deps/opencv/lib/libopencv_core.so.406"
    -DGPUBENCH_OPENCV_IMGPROC_LIBRARY="$root/.deps/opencv/lib/libopencv_imgproc.so.406")
fi
mpi=()
libmpi=$(ls /usr/lib/x86_64-linux-gnu/libmpi.so.40 2>/dev/null | head -1)
if ! command -v mpicxx >/dev/null && [[ -n $libmpi && -f .deps/mpi-inc/mpi.h ]]; then
  mpi=(-DMPI_CXX_SKIP_MPICXX=ON -DMPI_CXX_HEADER_DIR="$root/.deps/mpi-inc" -DMPI_CXX_LIB_NAMES=mpi
    -DMPI_mpi_LIBRARY="$libmpi" -DMPI_CXX_COMPILER=/usr/bin/g++)
fi

build() { # dir, source, extra cmake args...
  local dir=$1 src=$2
  shift 2
  [[ -x $dir/app/gpubench ]] && return 0
  cmake -S "$src" -B "$dir" "${deps[@]}" "$@" >"$out/$(basename "$dir")-configure.log" 2>&1 &&
    cmake --build "$dir" -j "$jobs" >"$out/$(basename "$dir")-build.log" 2>&1 ||
    { tail -30 "$out/$(basename "$dir")-build.log"; return 1; }
}

{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvcc --version | tail -1
  nproc
} >"$out/machine.txt" 2>&1
t0=$(date +%s)
need_old=0
for p in "$@"; do [[ $p == ab || $p == energy || $p == batch || $p == refactor || $p == encdec ]] && need_old=1; done
build build-gpu . "${mpi[@]}" & new_pid=$!
if ((need_old)); then build build-old .old-src -DGPUBENCH_BUILD_TESTS=OFF & old_pid=$!; fi
wait $new_pid || { echo "build-gpu failed"; exit 1; }
((need_old)) && { wait $old_pid || echo "build-old failed"; }
echo "build: $(($(date +%s) - t0)) s; MPI: $(grep -o 'MPI support [a-z ]*' "$out/build-gpu-configure.log" | head -1)"

part() { # name, seconds, command...
  local name=$1 limit=$2
  shift 2
  mkdir -p "$out/$name"
  local s=$(date +%s)
  timeout "$limit" "$@" >"$out/$name/log.txt" 2>&1
  echo "== $name: exit $?, $(($(date +%s) - s)) s"
  tail -25 "$out/$name/log.txt"
}
for p in "$@"; do
  case $p in
  tests) part tests 240 build-gpu/tests/gpubench_gpu_tests ;;
  ab) part ab 240 scripts/figures-ab.sh build-old/app/gpubench build-gpu/app/gpubench "$out/ab" 2 ;;
  14) part 14 240 scripts/device/issue14.sh "$out/14" ;;
  15) (cd build-gpu && cpack -G DEB >"$out/cpack.log" 2>&1); mkdir -p "$out/pkg"
    cp build-gpu/gpubench_*_amd64.deb .deps/debs/libfmt9_*.deb "$out/pkg/" 2>/dev/null
    part 15 200 scripts/device/issue15.sh "$out/15" "$out/pkg"; rm -rf "$out/pkg" ;;
  16) part 16 260 scripts/device/issue16.sh "$out/16" ;;
  17) part 17 330 scripts/device/issue17.sh "$out/17" ;;
  18a) part 18a 120 scripts/device/18a.sh "$out/18a" ;;
  18b) part 18b 150 scripts/device/18b.sh "$out/18b" ;;
  stream) part stream 200 scripts/device/issue13-stream.sh "$out/stream" ;;
  energy) part energy 240 scripts/device/energy-ab.sh "$out/energy" ;;
  energy-tests) part energy-tests 120 build-gpu/tests/gpubench_gpu_tests "[energy]" ;;
  batch) part batch 150 scripts/device/batch-ab.sh "$out/batch" ;;
  refactor) part refactor 500 scripts/device/refactor-ab.sh "$out/refactor" ;;
  packages) part packages 300 scripts/device/packages.sh "$out/packages" .pkg ;;
  opencv) part opencv 480 scripts/device/opencv-baseline.sh "$out/opencv" ;;
  encdec) part encdec 200 env AB_ONLY=1 AB_EXTRA="encoder-decoder|pipeline --scenario encoder-decoder --batch 32" \
    scripts/figures-ab.sh build-old/app/gpubench build-gpu/app/gpubench "$out/encdec" 4 ;;
  *) echo "unknown part $p" ;;
  esac
done
echo "total: $(($(date +%s) - t0)) s"
