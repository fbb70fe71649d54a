#!/usr/bin/env bash
# The packages on a GPU machine: install the .deb (and, if present, the gpubench wheel with
# NVIDIA's runtime wheel) into fresh places, run doctor, vecadd --n 10M, augment and pipeline from
# each, and check the figures against the source build (build-gpu) within 2%.
#
#   scripts/package-check.sh OUT_DIR PKG_DIR
#
# PKG_DIR holds the packages, built on a machine with network (docs/install.md, "On a machine
# without network"):
#   gpubench_0.1.0_amd64.deb             cmake --build build-pkg --target package (or cpack -G DEB)
#   libfmt9_*.deb                        apt-get download libfmt9   (the Depends dpkg may lack)
#   gpubench-0.1.0-py3-none-*.whl        optional: pip wheel . --no-deps -w PKG_DIR
#                                        -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90-real (1.5 MB)
#   nvidia_cuda_runtime-13.0.*.whl       optional: pip download --no-deps 'nvidia-cuda-runtime==13.0.*'
#   nvidia_cublas-13.0.*.whl             optional (420 MB); without it the wheel's pipeline uses
#                                        the machine's toolkit cuBLAS through LD_LIBRARY_PATH.
#                                        Where it arrives in pieces (split -b) in PIECES, with
#                                        PKG_DIR/cublas.SHA256SUMS, they are joined and checked.
# Either way the wheel first shows the missing-cuBLAS message.
set -uo pipefail
OUT=${1:?usage: $0 OUT_DIR PKG_DIR}
PKG=${2:?usage: $0 OUT_DIR PKG_DIR}
SRC_BIN=${GPUBENCH:-build-gpu/app/gpubench}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PKG=$(cd "$PKG" && pwd)
if [[ -f $PKG/cublas.SHA256SUMS && -d ${PIECES:-/nonexistent} ]]; then
  name=$(awk '{print $2}' "$PKG/cublas.SHA256SUMS")
  cat "$PIECES"/part.* > "$PKG/$name"
  (cd "$PKG" && sha256sum -c cublas.SHA256SUMS) 2>&1 | tee "$OUT/cublas-sha256.txt"
  grep -q ': OK$' "$OUT/cublas-sha256.txt" || { echo "cuBLAS wheel pieces incomplete"; rm -f "$PKG/$name"; }
fi
ls -la "$PKG" > "$OUT/pkg-list.txt"
summary=()
note() { summary+=("$*"); echo "== $*"; }

run_set() { # run_set LABEL BINARY [env...]: the four commands, JSON and logs into OUT/LABEL-*
  local label=$1 bin=$2
  shift 2
  env "$@" "$bin" doctor > "$OUT/$label-doctor.txt" 2>&1
  note "$label doctor exit $?"
  env "$@" "$bin" doctor --format json > "$OUT/$label-doctor.json" 2>/dev/null
  env "$@" timeout 60 "$bin" vecadd --n 10M --output "$OUT/$label-vecadd.json" > "$OUT/$label-vecadd.txt" 2>&1
  note "$label vecadd exit $?"
  env "$@" timeout 60 "$bin" augment --batch 256 --output "$OUT/$label-augment.json" > "$OUT/$label-augment.txt" 2>&1
  note "$label augment exit $?"
  env "$@" timeout 90 "$bin" pipeline --scenario augment-train --batch 32 --output "$OUT/$label-pipeline.json" > "$OUT/$label-pipeline.txt" 2>&1
  note "$label pipeline exit $?"
}

compare() { # compare LABEL: medians of every GPU measurement against the source build's
  python3 - "$OUT" "$1" <<'PY'
import json, os, sys
out, label = sys.argv[1], sys.argv[2]
worst = 0.0
for bench in ("vecadd", "augment", "pipeline"):
    try:
        a = json.load(open(os.path.join(out, f"source-{bench}.json")))
        b = json.load(open(os.path.join(out, f"{label}-{bench}.json")))
    except (OSError, ValueError) as e:
        print(f"{label} {bench}: no result ({e})"); worst = 1.0; continue
    for ra, rb in zip(a["results"], b["results"]):
        mb = {m["name"]: m for m in rb.get("measurements", [])}
        for m in ra.get("measurements", []):
            if "cpu" in m["name"] or m["name"] not in mb: continue
            x, y = m["stats"]["median"], mb[m["name"]]["stats"]["median"]
            d = y / x - 1 if x else 0
            worst = max(worst, abs(d)) if m["name"] in ("kernel", "fused", "staged", "streams", "graph", "serial") else worst
            print(f"{label} {bench} {m['name']:<16} source {x:.4g} s  {label} {y:.4g} s  {d:+.2%}")
print(f"{label}: largest difference of the kernel/fused/staged/serial/streams/graph medians: {worst:.2%} "
      f"({'within' if worst <= 0.02 else 'NOT within'} 2%)")
PY
}

# The toolkit's lib64 (for cuBLAS where ld.so.cache does not list it).
tk_lib=$(dirname "$(readlink -f "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")/../lib64

# 1. The source build: the reference figures.
run_set source "$SRC_BIN"

# 2. The .deb, installed with dpkg (root) or, failing that, extracted into a fresh folder.
deb=$(ls "$PKG"/gpubench_*_amd64.deb 2>/dev/null | head -1)
if [[ -n "$deb" ]]; then
  dpkg-deb -I "$deb" > "$OUT/deb-info.txt" 2>&1
  deb_bin=""
  if [[ -z "${DEB_EXTRACT_ONLY:-}" && $(id -u) -eq 0 ]] && dpkg -i "$PKG"/*.deb > "$OUT/deb-install.txt" 2>&1; then
    deb_bin=/usr/bin/gpubench
    note "deb installed with dpkg -i"
  else
    rm -rf "$OUT/deb-root" && dpkg -x "$deb" "$OUT/deb-root"
    for d in "$PKG"/lib*.deb; do [[ -e $d ]] && dpkg -x "$d" "$OUT/deb-root"; done
    deb_bin="$OUT/deb-root/usr/bin/gpubench"
    export LD_LIBRARY_PATH_DEB="$OUT/deb-root/usr/lib/x86_64-linux-gnu"
    note "deb extracted with dpkg -x (dpkg -i failed or not root; see deb-install.txt)"
  fi
  ldd "$deb_bin" > "$OUT/deb-ldd.txt" 2>&1
  grep -q /usr/local/cuda "$OUT/deb-ldd.txt" && note "deb: ldd resolves something from /usr/local/cuda (unexpected)"
  "$deb_bin" --version > "$OUT/deb-version.txt" 2>&1
  # cuBLAS comes from the system search (docs/install.md); where the toolkit is not registered
  # with ld.so.cache, point at it as a user would, and say so.
  deb_lib=${LD_LIBRARY_PATH_DEB:-}
  if ! ldconfig -p 2>/dev/null | grep -q 'libcublas.so.13 '; then
    deb_lib="${deb_lib:+$deb_lib:}$tk_lib"
    note "libcublas.so.13 is not in ld.so.cache here: deb runs with LD_LIBRARY_PATH=$deb_lib"
  fi
  run_set deb "$deb_bin" ${deb_lib:+LD_LIBRARY_PATH=$deb_lib}
  compare deb | tee "$OUT/deb-compare.txt"
else
  note "no gpubench_*_amd64.deb in $PKG: .deb part skipped"
fi

# 3. The wheel, in a fresh venv, with NVIDIA's runtime wheel (carried) and without cuBLAS's.
whl=$(ls "$PKG"/gpubench-*.whl 2>/dev/null | head -1)
rm -rf "$OUT/venv"
if [[ -n "$whl" ]] && python3 -m venv "$OUT/venv" > /dev/null 2>&1; then
  "$OUT/venv/bin/pip" install --no-index --no-deps "$whl" > "$OUT/wheel-install.txt" 2>&1
  "$OUT/venv/bin/gpubench" --version > "$OUT/wheel-no-runtime.txt" 2>&1
  note "wheel without nvidia-cuda-runtime: exit $? ($(head -c 160 "$OUT/wheel-no-runtime.txt"))"
  "$OUT/venv/bin/pip" install --no-index --no-deps "$PKG"/nvidia_cuda_runtime-*.whl >> "$OUT/wheel-install.txt" 2>&1
  "$OUT/venv/bin/gpubench" pipeline --batch 8 --steps 2 > "$OUT/wheel-no-cublas.txt" 2>&1
  note "wheel without nvidia-cublas, pipeline: exit $? ($(grep -o 'cuBLAS[^.]*' "$OUT/wheel-no-cublas.txt" | head -1))"
  cublas=$(ls "$PKG"/nvidia_cublas-*.whl 2>/dev/null | head -1)
  if [[ -n "$cublas" ]]; then
    # NVIDIA's cuBLAS wheel (reassembled from pieces where one transfer could not hold it): the
    # wheel then needs nothing outside the venv but the driver.
    "$OUT/venv/bin/pip" install --no-index --no-deps "$cublas" >> "$OUT/wheel-install.txt" 2>&1
    note "nvidia-cublas wheel installed: exit $? ($(basename "$cublas"))"
    "$OUT/venv/bin/pip" list 2>/dev/null | grep -i -E "gpubench|nvidia" > "$OUT/wheel-pip-list.txt"
    (cd / && env -u LD_LIBRARY_PATH "$OUT/venv/bin/gpubench" doctor) > "$OUT/wheel-doctor-env.txt" 2>&1
    run_set wheel "$OUT/venv/bin/gpubench" LD_LIBRARY_PATH=
  else
    run_set wheel "$OUT/venv/bin/gpubench" LD_LIBRARY_PATH="$tk_lib${LD_LIBRARY_PATH_DEB:+:$LD_LIBRARY_PATH_DEB}"
  fi
  compare wheel | tee "$OUT/wheel-compare.txt"
else
  note "no gpubench-*.whl in $PKG (or no python3 venv): wheel part skipped"
fi

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
for f in deb-compare.txt wheel-compare.txt; do [[ -f $OUT/$f ]] && tail -1 "$OUT/$f"; done
echo "-- doctor (deb):"; cat "$OUT/deb-doctor.txt" 2>/dev/null
