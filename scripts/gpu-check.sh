#!/usr/bin/env bash
# Builds gpubench on a GPU machine, runs the whole test suite (GPU label included), then the
# benchmarks whose figures docs/results/ records, writing their JSON and tables into OUT_DIR.
#
#   scripts/gpu-check.sh OUT_DIR              build, test, benchmark
#   scripts/gpu-check.sh --sanitize OUT_DIR   also run compute-sanitizer over the GPU tests
#   scripts/gpu-check.sh --prebuilt DIR OUT_DIR
#                      no build and no ctest: DIR holds app/gpubench and tests/gpubench_gpu_tests
#                      built elsewhere (as the device tool carries them); runs the GPU test
#                      executable, then the benchmarks. For a GPU machine lent for minutes.
#   GPUBENCH_ANCHORS=1 scripts/gpu-check.sh ...   also scripts/gpu-anchors.sh into OUT_DIR/anchors
#   GPUBENCH_AB_BASE=SRC scripts/gpu-check.sh ... also builds the tree SRC (an earlier revision,
#                      e.g. `git archive REV | tar -x -C SRC`) and runs scripts/figures-ab.sh with
#                      its binary as OLD and this build's as NEW into OUT_DIR/ab, the cases
#                      GPUBENCH_AB_EXTRA names (figures-ab.sh's AB_EXTRA) added to its own
#   DOCS_AS_WRITTEN=1 scripts/gpu-check.sh ...     the documented commands with their own sampling
#   GPUBENCH_PACK=1 scripts/gpu-check.sh ...      every JSON into OUT_DIR/json.tar.xz at the end
#
# Dependencies not installed on the machine may sit in .deps/ (Catch2 2.x and stb, unpacked from
# Debian's packages with dpkg -x); the script points CMake at them.
set -euo pipefail
sanitize=0
prebuilt=
if [[ "${1:-}" == "--sanitize" ]]; then sanitize=1; shift; fi
if [[ "${1:-}" == "--prebuilt" ]]; then prebuilt=${2:?--prebuilt needs a folder}; shift 2; fi
out=${1:?usage: scripts/gpu-check.sh [--sanitize] [--prebuilt DIR] OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${GPUBENCH_BUILD_DIR:-$root/build-gpu}
[[ -n $prebuilt ]] && build=$(cd "$prebuilt" && pwd)
jobs=$(nproc)

prefix=()
[[ -d $root/.deps/catch2/usr ]] && prefix+=(-DCMAKE_PREFIX_PATH="$root/.deps/catch2/usr")
[[ -d $root/.deps/stb/usr/include ]] && prefix+=(-DSTB_INCLUDE_DIR="$root/.deps/stb/usr/include")
# OpenBLAS for gemm's CPU row: a scipy-openblas32 wheel's package folder (pip download, unzipped).
[[ -d $root/.deps/openblas/lib ]] && prefix+=(-DGPUBENCH_OPENBLAS_ROOT="$root/.deps/openblas")
# The CLI tests want a python3 with matplotlib (scripts/plot.py); prefer the one on PATH.
command -v python3 >/dev/null && prefix+=(-DGPUBENCH_PYTHON="$(command -v python3)")
# ... and jsonschema, which may sit in .deps/py/site (wheels unzipped there).
[[ -d $root/.deps/py/site ]] && export PYTHONPATH="$root/.deps/py/site${PYTHONPATH:+:$PYTHONPATH}"

{
  echo "== machine"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
  date -u +%Y-%m-%dT%H:%M:%SZ; nvcc --version | tail -1; nproc
} 2>&1 | tee "$out/machine.txt"

set +e
if [[ -z $prebuilt ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    "${prefix[@]}" >"$out/configure.log" 2>&1 || { cat "$out/configure.log"; exit 1; }
  cmake --build "$build" -j "$jobs" >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
  ctest --test-dir "$build" --output-on-failure -j 4 2>&1 | tee "$out/ctest.log"
  test_rc=${PIPESTATUS[0]}
else
  "$build/tests/gpubench_gpu_tests" 2>&1 | tee "$out/gpu-tests.log" | tail -3
  test_rc=${PIPESTATUS[0]}
fi
set -e

bin=$build/app/gpubench
run() { # name, args...
  local name=$1; shift
  echo "== gpubench $*" | tee -a "$out/bench.txt"
  local t0=$(date +%s%N)
  "$bin" "$@" --output "$out/$name.json" 2>>"$out/bench.err" | tee -a "$out/bench.txt"
  local rc=${PIPESTATUS[0]}
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "(exit $rc, wall $((ms / 1000)).$(printf %03d $((ms % 1000))) s)" | tee -a "$out/bench.txt"
}
set +e
run devices devices --measure
run vecadd-10M vecadd --n 10M
run vecadd-2p28 vecadd --n 2^28 --kernel all --memory both
run vecadd-l2 vecadd --n 1Mi,2Mi,4Mi --warm --timestamps --batch-time 0.01
run augment augment --batch 32,256 --impl all
run pipeline-default pipeline
# Energy per operation (targets: CV <= 1% for these three, counter vs integral <= 3%).
run energy-vecadd vecadd --n 2^24 --energy
run energy-augment augment --batch 256 --impl fused --energy
run energy-pipeline pipeline --batch 32 --mode serial,streams,graph --energy --no-verify
run pipeline-sweep pipeline --batch 8,16,32,64,128,256
run stream stream --n 2^28
# gemm at its default 8192^3, every dtype (docs/gemm.md; target: the whole run under 60 s).
run gemm gemm --dtype f64,f32,tf32,bf16,f16
run gemm-fp8 gemm --dtype fp8,bf16 --layout tn
# Every algorithm cuBLASLt's heuristic offers for f32 timed (docs/gemm.md, --algos).
run gemm-algos gemm --dtype f32,bf16 --algos 32
# The roofs (docs/roofline.md): f32 over the whole sweep, the other types at seven intensities.
run roofline-f32 roofline
run roofline-others roofline --dtype f64,f16,bf16 --intensity 0.25,1,4,16,64,256,1024
# gpubench check (docs/check.md; targets: default suite <= 90 s, --quick <= 20 s, every figure
# within 2% of the benchmark's own, ten healthy repeats PASS, each degradation caught).
run check-default check
run check-quick check --quick
run check-stream-beside stream --n 2^28 --dtype f32
for i in 1 2 3 4 5 6 7 8 9 10; do run check-repeat-$i check; done
"$bin" check --save-reference "$out/check-reference.json" --from "$out"/check-repeat-*.json \
  2>&1 | tee -a "$out/bench.txt"
for i in 1 2 3; do run check-held-$i check --reference "$out/check-reference.json"; done
# The first held run judged again from its file, measuring nothing (the same verdicts).
"$bin" check --from "$out/check-held-1.json" --reference "$out/check-reference.json" \
  --format junit --output "$out/check-held-1-again.xml" 2>&1 | tee -a "$out/bench.txt"
# Degradations: HBM 5% slower (FAIL), a second process on the GPU (WARN or FAIL naming it), and a
# two-rank fleet on one GPU with one rank's triad slowed 5% (that rank the named outlier).
GPUBENCH_TEST_SLOWDOWN=triad:0.05 run check-slow-hbm check --reference "$out/check-reference.json"
"$bin" stream --n 2^30 --min-time 20 --timeout 30 --max-samples 100000 -q >/dev/null 2>&1 &
hog=$!
sleep 3
run check-contention check --quick --reference "$out/check-reference.json"
kill $hog 2>/dev/null; wait $hog 2>/dev/null
if command -v mpirun >/dev/null; then
  echo "== mpirun -np 2 (one GPU), rank 1 slowed 5%" | tee -a "$out/bench.txt"
  # --bind-to none: Open MPI would bind each of the two ranks to one core (docs/multi-gpu.md).
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 "$bin" check --quick --device 0 \
      --output "$out/check-fleet.json" : -np 1 -x GPUBENCH_TEST_SLOWDOWN=triad:0.05 "$bin" check \
      --quick --device 0 2>&1 | tee -a "$out/bench.txt"
fi
run ci-smoke-1 run "$root/configs/ci-smoke.json"
run ci-smoke-2 run "$root/configs/ci-smoke.json"
echo "== gpubench compare ci-smoke-1.json ci-smoke-2.json" | tee -a "$out/bench.txt"
"$bin" compare "$out/ci-smoke-1.json" "$out/ci-smoke-2.json" 2>&1 | tee -a "$out/bench.txt"
echo "(compare exit ${PIPESTATUS[0]})" | tee -a "$out/bench.txt"
run seed-reproduction run "$root/configs/seed-reproduction.json"
# Records that name their code and their GPUs (docs/json-schema.md): every result's
# meta.build.source_sha256 is the one --version prints, every device has its UUID and PCI bus id.
echo "== records: meta.build and each device's uuid" | tee -a "$out/bench.txt"
"$bin" --version > "$out/version.txt"
python3 - "$out/version.txt" "$out"/devices.json "$out"/vecadd-10M.json "$out"/ci-smoke-1.json \
  "$out"/gemm.json <<'PY' 2>&1 | tee -a "$out/bench.txt"
import json, re, sys
want = re.search(r"Sources: sha256 ([0-9a-f]{64})", open(sys.argv[1]).read()).group(1)
bad = 0
for path in sys.argv[2:]:
    doc = json.load(open(path))
    build = doc["meta"].get("build", {})
    ok = build.get("source_sha256") == want and all(
        re.match(r"GPU-[0-9a-f-]{36}$", d.get("uuid", "")) and d.get("pci_bus_id")
        for d in doc["devices"]) and doc["devices"]
    bad += not ok
    print(f"{path}: source {build.get('source_sha256', '-')[:12]}, devices "
          f"{[(d.get('uuid'), d.get('pci_bus_id')) for d in doc['devices']]}: {'ok' if ok else 'WRONG'}")
sys.exit(1 if bad else 0)
PY
(( PIPESTATUS[0] == 0 )) || test_rc=1
# GPUBENCH_ANCHORS=1: also nvbench and BabelStream beside gpubench (scripts/gpu-anchors.sh, about
# 3 minutes; the tools built beforehand by scripts/anchors/build.sh into .deps/).
if [[ ${GPUBENCH_ANCHORS:-0} == 1 ]]; then
  "$root/scripts/gpu-anchors.sh" --gpubench "$bin" "$out/anchors" 2>&1 | tee -a "$out/bench.txt"
fi
# Every command of README.md and docs/*.md that runs on one GPU, as written (sampling shortened
# unless DOCS_AS_WRITTEN=1): the CPU machine's ctest runs only those that need no GPU.
# OUT_DIR/docs/docs-commands.txt lists each command, how it was checked, its exit and time.
docs_args=(--gpu "$out/docs")
[[ ${DOCS_AS_WRITTEN:-0} == 1 ]] || docs_args+=(--fast)
echo "== documented commands (tests/cli/test_docs.py ${docs_args[*]})" | tee -a "$out/bench.txt"
GPUBENCH=$bin python3 "$root/tests/cli/test_docs.py" "${docs_args[@]}" 2>&1 |
  tee "$out/docs-commands.log" | tail -5 | tee -a "$out/bench.txt"
(( PIPESTATUS[0] == 0 )) || test_rc=1
# Before/after against an earlier revision's tree (a change to GPU code or the engine).
if [[ -n "${GPUBENCH_AB_BASE:-}" ]]; then
  base_build=$build-ab-base
  echo "== before/after: $GPUBENCH_AB_BASE (old) vs this tree (new)" | tee -a "$out/bench.txt"
  if cmake -S "$GPUBENCH_AB_BASE" -B "$base_build" -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_CUDA_ARCHITECTURES=90 -DGPUBENCH_BUILD_TESTS=OFF "${prefix[@]}" \
       >"$out/ab-base-build.log" 2>&1 &&
     cmake --build "$base_build" -j "$jobs" --target gpubench >>"$out/ab-base-build.log" 2>&1; then
    AB_EXTRA="${GPUBENCH_AB_EXTRA:-}" "$root/scripts/figures-ab.sh" "$base_build/app/gpubench" \
      "$bin" "$out/ab" 2>&1 | tee -a "$out/bench.txt"
  else
    tail -20 "$out/ab-base-build.log"; test_rc=1
  fi
fi
# More commands for this call only: GPUBENCH_EXTRA="$bin augment ... ; ..."
export bin out
if [[ -n "${GPUBENCH_EXTRA:-}" ]]; then bash -c "$GPUBENCH_EXTRA" 2>&1 | tee -a "$out/bench.txt"; fi
set -e

if (( sanitize )); then
  # The GPU test cases tagged [sanitize] use small sizes; the four tools run side by side.
  set +e
  for tool in memcheck racecheck initcheck synccheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 1 "$build/tests/gpubench_gpu_tests" \
      "[sanitize]" >"$out/sanitize-$tool.log" 2>&1 &
  done
  wait
  for tool in memcheck racecheck initcheck synccheck; do
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize-$tool.log" | tail -1)
    passed=$(grep -E '^All tests passed|test cases' "$out/sanitize-$tool.log" | tail -1)
    echo "compute-sanitizer $tool: $summary; $passed" | tee -a "$out/sanitize-summary.txt"
    grep -qE '(ERROR|RACECHECK) SUMMARY: 0 ' "$out/sanitize-$tool.log" || test_rc=1
  done
  set -e
fi
# GPUBENCH_PACK=1: every JSON under OUT_DIR in one archive, the loose copies removed (the device
# tool brings back a bounded number of files; docs/results keeps JSON as json.tar.xz anyway).
if [[ ${GPUBENCH_PACK:-0} == 1 ]]; then
  (cd "$out" && find . -name '*.json' -print0 | tar --null -cJf json.tar.xz -T - &&
     find . -name '*.json' -delete)
fi
exit "$test_rc"
