#!/usr/bin/env bash
# Issue 15 on the GPU machine from packages built on the CI machine and carried in PKG_DIR
# (.deb, libfmt9's .deb, the gpubench wheel, nvidia-cuda-runtime's wheel). NVIDIA's cuBLAS wheel
# is larger than one call carries: earlier calls copy its pieces (split -b) to PIECES (/tmp/cb). This
# script joins them, checks the SHA-256 the CI machine computed (PKG_DIR/cublas.SHA256SUMS), adds
# the wheel to PKG_DIR, then runs issue15.sh.
#   scripts/device/packages.sh OUT_DIR PKG_DIR
set -uo pipefail
out=${1:?usage: $0 OUT_DIR PKG_DIR}
pkg=${2:?usage: $0 OUT_DIR PKG_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
if [[ -f $pkg/cublas.SHA256SUMS ]]; then
  name=$(awk '{print $2}' "$pkg/cublas.SHA256SUMS")
  cat "${PIECES:-/tmp/cb}"/part.* > "$pkg/$name"
  (cd "$pkg" && sha256sum -c cublas.SHA256SUMS) 2>&1 | tee "$out/cublas-sha256.txt"
  grep -q ': OK$' "$out/cublas-sha256.txt" || { echo "cuBLAS wheel pieces incomplete"; rm -f "$pkg/$name"; }
fi
ls -la "$pkg" > "$out/pkg-list.txt"
"$here/issue15.sh" "$out" "$pkg"
