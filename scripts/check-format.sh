#!/usr/bin/env bash
# Fails when any of the project's own C++/CUDA sources differs from .clang-format's layout.
# With --fix, rewrites them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files 'app/*.cpp' 'app/*.hpp' 'lib/*.cpp' 'lib/*.hpp' 'cuda/*.cpp' \
  'cuda/*.hpp' 'cuda/*.cu' 'cuda/*.cuh' 'tests/*.cpp' 'tests/*.hpp' 'tests/*.cu')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
else
  clang-format --dry-run -Werror "${files[@]}"
  echo "format: ${#files[@]} files clean"
fi
