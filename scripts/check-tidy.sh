#!/usr/bin/env bash
# Runs clang-tidy-14 with .clang-tidy over the project's own host code (lib/ and app/ .cpp files;
# the kernels in cuda/ are nvcc's) using a build folder's compile_commands.json; fails on any
# finding.   scripts/check-tidy.sh [BUILD_DIR]   (default build-test, the CI test build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-test}
[[ -f $build/compile_commands.json ]] || {
  echo "check-tidy: $build/compile_commands.json is missing (configure $build first)" >&2
  exit 2
}
mapfile -t files < <(git ls-files 'lib/*.cpp' 'app/*.cpp')
# The build's precompiled headers (cmake/pch.cmake) are GCC's, which clang cannot read: tidy runs
# from a copy of the compile commands without them (each source includes what it uses).
commands=$(mktemp -d)
trap 'rm -rf "$commands"' EXIT
python3 - "$build/compile_commands.json" "$commands/compile_commands.json" <<'PY'
import json, re, sys
entries = json.load(open(sys.argv[1]))
for e in entries:
    e["command"] = re.sub(r" -Winvalid-pch| -include \S*cmake_pch\.hxx", "", e["command"])
json.dump(entries, open(sys.argv[2], "w"))
PY
# GCC-only warning flags in the compile commands mean nothing to clang: ignore them there.
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy-14 -p "$commands" --quiet \
  --extra-arg=-Wno-unknown-warning-option 2>/dev/null
echo "tidy: ${#files[@]} files clean"
