#!/usr/bin/env bash
# Issue 13 (items 5, 7, 8) on one H200: the stream GPU tests, then `gpubench stream` at 2^28 f32
# cold and warm (and f64 cold), each grid mode at 2^28 f32 to choose the default, and quick
# checks at 1M and 16M. Prints Triad and Dot against the targets (Triad >= 4.35 TB/s,
# Dot >= 4.0 TB/s at 2^28 f32). Run from the repository root with build-gpu/ built (Release,
# sm_90, tests included):  scripts/device/issue13-stream.sh OUT_DIR   (about 2-3 minutes)
set -uo pipefail
out=${1:?usage: scripts/device/issue13-stream.sh OUT_DIR}
mkdir -p "$out"
bin=${GPUBENCH:-build-gpu/app/gpubench}
tests=${GPUBENCH_GPU_TESTS:-build-gpu/tests/gpubench_gpu_tests}
status=0

echo "== GPU tests [stream]"
timeout 120 "$tests" "[stream]" >"$out/gpu-tests-stream.txt" 2>&1
rc=$?
tail -3 "$out/gpu-tests-stream.txt"
[[ $rc -eq 0 ]] || { echo "GPU tests [stream] failed (rc $rc)"; status=1; }

run_stream() { # name, then arguments
  local name=$1
  shift
  echo "== stream $name: $*"
  timeout 100 "$bin" stream "$@" --format json --output "$out/stream-$name.json" \
    >"$out/stream-$name.table.txt" 2>"$out/stream-$name.stderr.txt"
  local rc=$?
  "$bin" report "$out/stream-$name.json" >"$out/stream-$name.table.txt" 2>/dev/null
  [[ $rc -eq 0 ]] || { echo "stream $name exited $rc"; tail -5 "$out/stream-$name.stderr.txt"; status=1; }
}

# Default stopping criterion: each measurement, CPU kernels included, stops after 1 s at most.
run_stream 2p28-f32-cold --n 2^28 --dtype f32
run_stream 2p28-f32-warm --n 2^28 --dtype f32 --warm
run_stream 2p28-f64-cold --n 2^28 --dtype f64
run_stream 2p28-f32-vectors --n 2^28 --dtype f32 --grid vectors
run_stream 2p28-f32-block512 --n 2^28 --dtype f32 --block 512
run_stream quick-cold --n 1M,16M --dtype f32,f64
run_stream quick-warm --n 1M,16M --dtype f32,f64 --warm

# Item 7 on the device host's CPU: the f16 and bf16 references (F16C) against f32 at 4M elements.
for threads in 1 0; do
  "$bin" vecadd --cpu-only --n 4M --dtype f32,f16,bf16 --cpu-threads "$threads" \
    >"$out/vecadd-cpu-4M-threads$threads.txt" 2>&1
  echo "== vecadd --cpu-only --n 4M, --cpu-threads $threads (0 = all): cpu_reference medians"
  grep -E "cpu_reference" "$out/vecadd-cpu-4M-threads$threads.txt" | head -3
done

echo "== summary (TB/s from medians; % of theoretical / of measured D2D copy)"
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, sys, glob, os
out = sys.argv[1]
targets = {"triad": 4.35e12, "dot": 4.0e12}
ok = True
for path in sorted(glob.glob(os.path.join(out, "stream-*.json"))):
    name = os.path.basename(path)[len("stream-"):-len(".json")]
    try:
        doc = json.load(open(path))
    except Exception as e:  # a run that wrote nothing
        print(f"{name}: no JSON ({e})"); ok = False; continue
    for r in doc["results"]:
        p = r["params"]
        v = r["verification"]
        row = []
        for m in r["measurements"]:
            if m["clock"] != "gpu":
                continue
            bps = m["rates"].get("bytes_per_s", 0)
            ft = m["rates"].get("fraction_of_theoretical_peak", 0)
            fm = m["rates"].get("fraction_of_measured_peak")
            row.append(f"{m['name']} {bps/1e12:.2f} ({ft:.0%}/{fm:.0%})" if fm else
                       f"{m['name']} {bps/1e12:.2f} ({ft:.0%})")
            target = targets.get(m["name"])
            cold = m["cold"]
            if (target and p["n"] == 2**28 and p["dtype"] == "f32" and cold
                    and name == "2p28-f32-cold"):
                verdict = "met" if bps >= target else "NOT met"
                print(f"  TARGET {m['name']} at 2^28 f32 cold: {bps/1e12:.3f} TB/s >= "
                      f"{target/1e12:.2f}: {verdict}")
                ok = ok and bps >= target
        passed = v.get("passed") if v.get("performed") else "not run"
        ok = ok and passed is True
        print(f"{name} n={p['n']} {p['dtype']} grid={p.get('grid')} block={p.get('block')} "
              f"verified={passed} status={r['status']}: " + ", ".join(row))
print("ALL TARGETS MET AND VERIFIED" if ok else "SOME TARGET MISSED OR A CHECK FAILED")
PY
exit $status
