# Sourced by the ninth and tenth sessions' device scripts (timestamps.sh, energy-poll.sh,
# timestamps-check.sh, review-ab.sh, host-l2.sh, energy-busy.sh, host-bound.sh):
# `device_start NAME OUT_DIR` goes to the repository root, makes OUT_DIR, puts .deps/py/site
# (jsonschema) on PYTHONPATH and writes OUT_DIR/machine.txt; then `log` prints a line tagged with
# NAME and the seconds since the start, `gpu_tests FILE [FILTER]` runs the GPU test executable and
# `cli_tests FILE MODULE...` the named CLI test modules against build-gpu/app/gpubench, each with
# its exit code appended to FILE. For before/after calls, `binary old|new` names build-old's or
# build-gpu's gpubench.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=$root/build-gpu/app/gpubench

device_start() {
  device_name=$1
  out=$2
  cd "$root" || exit 1
  mkdir -p "$out"
  [[ -d .deps/py/site ]] && export PYTHONPATH="$root/.deps/py/site${PYTHONPATH:+:$PYTHONPATH}"
  started=$(date +%s)
  {
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
      --format=csv
    date -u +%Y-%m-%dT%H:%M:%SZ
    "$bin" --version
  } >"$out/machine.txt" 2>&1
}

log() { echo "[$device_name $(($(date +%s) - started))s] $*"; }

gpu_tests() { # FILE [FILTER]
  local file=$1
  shift
  timeout 300 "$root/build-gpu/tests/gpubench_gpu_tests" "$@" >"$file" 2>&1
  echo "exit $?" >>"$file"
  tail -4 "$file"
}

cli_tests() { # FILE MODULE...
  local file=$1
  shift
  (cd "$root/tests/cli" && GPUBENCH=$bin GPUBENCH_SOURCE_DIR=$root timeout 400 python3 -m unittest \
    -v "$@") >"$file" 2>&1
  echo "exit $?" >>"$file"
  tail -6 "$file"
}

binary() { # old|new
  if [[ $1 == old ]]; then echo "$root/build-old/app/gpubench"; else echo "$bin"; fi
}
