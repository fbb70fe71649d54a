#!/usr/bin/env bash
# Before/after for the encoder-decoder pipeline's launch cost on a GPU machine: builds two source
# trees (gpubench, and the new tree's GPU tests), runs the new build's pipeline GPU tests, then
# old and new alternating, ROUNDS rounds: `pipeline --scenario encoder-decoder --batch 8,32,128`
# (the new build also with GPUBENCH_PIPELINE_ONE_THREAD=1, stage A and B enqueued from one thread),
# and augment-train at batch 32 once a side. ENERGY=N adds N runs a side of
# `pipeline --batch 32 --energy`. Prints a summary table last; writes text, JSON and the table to
# OUT_DIR/ed and packs it into OUT_DIR/ed.tar.xz.
#   docs/results/h200-2026-12-03/encoder-decoder/encoder-decoder-ab.sh OLD_SRC NEW_SRC OUT_DIR
# Environment: ROUNDS (default 1), BATCHES (default 8,32,128), ENERGY (default 0), TESTS (default
# 1: run the GPU tests), OLD (default 1: build and run the old tree), ONE_THREAD (default 1),
# AUGMENT (default 1), VARIANTS and NCU (below), CMAKE_EXTRA (extra configure arguments, e.g.
# Catch2's and stb's places).
set -uo pipefail
old_src=${1:?usage: $0 OLD_SRC NEW_SRC OUT_DIR}
new_src=${2:?usage: $0 OLD_SRC NEW_SRC OUT_DIR}
out=${3:?usage: $0 OLD_SRC NEW_SRC OUT_DIR}/ed
rounds=${ROUNDS:-1}
energy=${ENERGY:-0}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
started=$(date +%s)
log() { echo "[ed $(($(date +%s) - started))s] $*"; }

build() { # SRC TARGETS...
  local src=$1
  shift
  # shellcheck disable=SC2086
  cmake -S "$src" -B "$src/build-gpu" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    ${CMAKE_EXTRA:-} >"$src/configure.log" 2>&1 &&
    cmake --build "$src/build-gpu" -j8 --target "$@" >"$src/build.log" 2>&1
}
log "build"
if [[ ${OLD:-1} == 1 ]]; then
  build "$old_src" gpubench &
  pid_old=$!
fi
targets=(gpubench)
[[ ${TESTS:-1} == 1 ]] && targets+=(gpubench_gpu_tests)
build "$new_src" "${targets[@]}" &
pid_new=$!
if [[ ${OLD:-1} == 1 ]]; then
  wait "$pid_old" || { tail -20 "$old_src/configure.log" "$old_src/build.log"; exit 1; }
fi
wait $pid_new || { tail -20 "$new_src/configure.log" "$new_src/build.log"; exit 1; }
old=$old_src/build-gpu/app/gpubench
new=$new_src/build-gpu/app/gpubench
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv
  date -u +%Y-%m-%dT%H:%M:%SZ
  [[ ${OLD:-1} == 1 ]] && "$old" --version
  "$new" --version
} >"$out/machine.txt" 2>&1


# Packed after every step, so that a run stopped at its time limit still returns what it did.
pack() { tar -C "$(dirname "$out")" -cJf "$(dirname "$out")/ed.tar.xz" ed; }
one() { # NAME BINARY ARGS...   (ONE_ENV: VAR=VALUE for this run alone)
  local name=$1 bin=$2
  shift 2
  log "$name ${ONE_ENV:-}"
  echo "$ ${ONE_ENV:-}${ONE_ENV:+ }$(basename "$bin") $* --output $name.json" >"$out/$name.txt"
  # shellcheck disable=SC2086
  timeout 150 env ${ONE_ENV:-} "$bin" "$@" --output "$out/$name.json" >>"$out/$name.txt" 2>&1
  echo "exit $?" >>"$out/$name.txt"
  pack
}
# cuBLASLt absent: the pipeline must say so and exit 77.
log "missing cuBLASLt"
GPUBENCH_CUBLASLT_LIBRARY=/nonexistent/libcublasLt.so.13 timeout 60 "$new" pipeline \
  --scenario encoder-decoder --batch 8 >"$out/missing-cublaslt.txt" 2>&1
echo "exit $?" >>"$out/missing-cublaslt.txt"
tail -3 "$out/missing-cublaslt.txt" | cut -c1-300
# VARIANTS="NAME:VAR=VALUE ...": the new build once per variant with that environment (batches
# VARIANT_BATCHES, default 8,32,128), before the rounds, and once plain ("base"). With PICK=1 the rounds and the energy runs then use the
# variant (or base) whose streams row at batch 32 spends the least host time per step while its
# serial and graph medians stay within 1% of base's (docs/results/h200-2026-12-03/encoder-decoder/encoder_decoder_pick.py).
if [[ -n ${VARIANTS:-} ]]; then
  one "encdec-base" "$new" pipeline --scenario encoder-decoder --batch "${VARIANT_BATCHES:-8,32,128}"
  for v in $VARIANTS; do
    ONE_ENV=${v#*:} one "encdec-${v%%:*}" "$new" pipeline --scenario encoder-decoder \
      --batch "${VARIANT_BATCHES:-8,32,128}"
  done
  if [[ ${PICK:-0} == 1 ]]; then
    pick=$(python3 "$here/encoder_decoder_pick.py" "$out" $VARIANTS | tee "$out/pick.txt" | tail -1)
    log "picked: $pick"
    [[ $pick == *=* ]] && export "${pick?}"
  fi
fi
for r in $(seq 1 "$rounds"); do
  [[ ${OLD:-1} == 1 ]] &&
    one "encdec-old-$r" "$old" pipeline --scenario encoder-decoder --batch "${BATCHES:-8,32,128}"
  one "encdec-new-$r" "$new" pipeline --scenario encoder-decoder --batch "${BATCHES:-8,32,128}"
  [[ ${ONE_THREAD:-1} == 1 ]] && GPUBENCH_PIPELINE_ONE_THREAD=1 one "encdec-new1t-$r" "$new" \
    pipeline --scenario encoder-decoder --batch "${BATCHES:-8,32,128}"
done
if [[ ${NCU:-0} == 1 ]]; then
  # The kernels the first launches of a serial encoder-decoder run issue (names and streams).
  log "ncu"
  timeout 120 ncu --clock-control none --launch-count "${NCU_LAUNCHES:-40}" \
    --metrics gpu__time_duration.sum "$new" pipeline --scenario encoder-decoder --batch 32 \
    --mode serial --no-verify >"$out/ncu.txt" 2>&1
  echo "exit $?" >>"$out/ncu.txt"
  grep -E ', Context [0-9]+, Stream' "$out/ncu.txt" | sed -E 's/\(.*\) \(([0-9, ]+)\)x\(([0-9, ]+)\)/ grid(\1) block(\2)/' |
    cut -c1-150 | tee "$out/ncu-kernels.txt"
  pack
fi
if [[ ${AUGMENT:-1} == 1 ]]; then
  [[ ${OLD:-1} == 1 ]] && one augment-old "$old" pipeline --scenario augment-train --batch 32
  one augment-new "$new" pipeline --scenario augment-train --batch 32
fi
for r in $(seq 1 "$energy"); do
  [[ ${OLD:-1} == 1 ]] && one "energy-old-$r" "$old" pipeline --batch 32 --energy
  one "energy-new-$r" "$new" pipeline --batch 32 --energy
done
if [[ ${TESTS:-1} == 1 ]]; then
  log "gpu tests [pipeline]"
  timeout "${TEST_TIMEOUT:-150}" "$new_src/build-gpu/tests/gpubench_gpu_tests" "[pipeline]" >"$out/gpu-tests.txt" 2>&1
  echo "exit $?" >>"$out/gpu-tests.txt"
  tail -3 "$out/gpu-tests.txt"
  pack
fi
log "summary"
python3 "$here/encoder_decoder_summary.py" "$out" | tee "$out/summary.txt"
pack
cp "$out/summary.txt" "$(dirname "$out")/summary.txt"
log done
