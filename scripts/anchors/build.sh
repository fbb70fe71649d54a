#!/usr/bin/env bash
# Builds the two reference tools that scripts/gpu-anchors.sh runs beside gpubench, on any machine
# with nvcc (CUDA 13); no GPU needed. Everything lands in .deps/ (ignored by git):
#
#   .deps/nvbench/bin/gpubench-nvbench   nvbench benchmarks of gpubench's own kernels
#                                        (scripts/anchors/nvbench_kernels.cu)
#   .deps/babelstream/bin/cuda-stream    BabelStream's CUDA model
#
#   scripts/anchors/build.sh [BUILD_DIR]
#
# GPUBENCH_DEPS=DIR puts them in DIR instead of .deps. BUILD_DIR is a gpubench build (default:
# build/) whose cuda/libgpubench_cuda.a the nvbench benchmarks link, so they time the very code
# gpubench runs. nvbench comes from the cuda-bench wheel (PyPI, version 0.3.0, its CUDA 13 build:
# cuda/bench/cu13/nvbench/{include,lib}), downloaded with pip and unpacked into .deps/nvbench the
# first time. BabelStream's sources are read from .deps/babelstream/src (main.cpp, *.h and
# cuda/CUDAStream.{cu,h} of github.com/UoB-HPC/BabelStream; BABELSTREAM_SRC=DIR copies them from a
# checkout's src/ first).
# Where nvml.h is missing, BabelStream's memory-clock read through NVML is replaced by the CUDA
# attribute (it only feeds the "GB/s PEAK" line it prints); nothing it measures changes.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
deps=${GPUBENCH_DEPS:-$root/.deps}
nvcc=${NVCC:-nvcc}
arch=${GPUBENCH_ANCHOR_ARCH:-sm_90}

# --- nvbench (cuda-bench wheel) ---------------------------------------------------------------
nvbench=$deps/nvbench
nv=$nvbench/cuda/bench/cu13/nvbench
if [[ ! -f $nv/lib/libnvbench.so ]]; then
  wheels=$deps/../.whl
  mkdir -p "$wheels" "$nvbench"
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64 \
    --platform manylinux2014_x86_64 -d "$wheels" cuda-bench==0.3.0
  wheel=$(ls "$wheels"/cuda_bench-0.3.0-*.whl | head -1)
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
    "$wheel" "$nvbench"
fi
lib=$build/cuda/libgpubench_cuda.a
[[ -f $lib ]] || { echo "build.sh: $lib is missing: build gpubench first" >&2; exit 2; }
mkdir -p "$nvbench/bin"
# libnvbench_main.a holds main(); whole-archive keeps it whatever the link order. libnvbench.so
# needs libnvidia-ml.so.1, which only a machine with the driver has: its symbols are left to the
# loader there (--allow-shlib-undefined). The rpath finds libnvbench.so beside the binary's
# folder, so .deps/nvbench can be copied anywhere whole.
"$nvcc" -O3 -std=c++20 -arch="$arch" --expt-relaxed-constexpr \
  -I"$root/cuda/include" -isystem "$nv/include" \
  "$root/scripts/anchors/nvbench_kernels.cu" \
  -Xlinker --whole-archive "$nv/lib/libnvbench_main.a" -Xlinker --no-whole-archive \
  "$nv/lib/libnvbench.so" "$lib" -lfmt -ldl \
  -Xlinker --allow-shlib-undefined \
  -Xlinker -rpath -Xlinker '$ORIGIN/../cuda/bench/cu13/nvbench/lib' \
  -o "$nvbench/bin/gpubench-nvbench"
echo "built $nvbench/bin/gpubench-nvbench"

# --- BabelStream ------------------------------------------------------------------------------
bs=$deps/babelstream
if [[ -n ${BABELSTREAM_SRC:-} ]]; then
  mkdir -p "$bs/src/cuda"
  for f in main.cpp Stream.h StreamModels.h Unit.h benchmark.h cuda/CUDAStream.cu \
           cuda/CUDAStream.h; do
    cp "$BABELSTREAM_SRC/$f" "$bs/src/$f"
  done
fi
if [[ ! -f $bs/src/cuda/CUDAStream.cu ]]; then
  echo "build.sh: no BabelStream sources in $bs/src (set BABELSTREAM_SRC to a checkout's src/)" >&2
  exit 2
fi
mkdir -p "$bs/bin" "$bs/build"
cp "$bs"/src/*.h "$bs"/src/main.cpp "$bs"/src/cuda/CUDAStream.* "$bs/build/"
nvml_link=(-lnvidia-ml)
cuda_include=$(dirname "$(command -v "$nvcc")")/../include
if [[ ! -f $cuda_include/nvml.h ]]; then
  python3 "$root/scripts/anchors/babelstream_without_nvml.py" "$bs/build/CUDAStream.cu"
  nvml_link=()
fi
"$nvcc" -O3 -std=c++20 -arch="$arch" -DCUDA -DDEFAULT -DGRID_STRIDE -DUNROLL_FACTOR=4 \
  --extended-lambda -I"$bs/build" "$bs/build/main.cpp" "$bs/build/CUDAStream.cu" \
  "${nvml_link[@]}" -o "$bs/bin/cuda-stream"
if (( ${#nvml_link[@]} )); then how="with NVML"; else how="memory clock from the CUDA attribute"; fi
echo "built $bs/bin/cuda-stream ($how)"
