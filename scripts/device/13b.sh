#!/usr/bin/env bash
# Issue 13, items 1 and 6 (typed parameter tables, runner-owned plumbing, generated CLI) on one
# H200: the GPU tests of the three benchmarks (they call run_point, which now carries the runner's
# verdict, peak fractions and ratios), one default point of each benchmark with the fields the
# plumbing must still produce, and the dry runs. Usage: scripts/device/13b.sh OUT_DIR
set -uo pipefail
out=${1:?usage: $0 OUT_DIR}
mkdir -p "$out"
bin=${GPUBENCH:-build-gpu/app/gpubench}
status=0
note() { echo "$*" | tee -a "$out/summary.txt"; }

# 1. GPU unit tests of the drivers (derived keys, peak fractions, failed verdict on corruption).
if [ -x build-gpu/tests/gpubench_gpu_tests ]; then
  timeout 150 build-gpu/tests/gpubench_gpu_tests "[vecadd],[augment],[pipeline]" \
    >"$out/gpu_tests.log" 2>&1
  rc=$?
  note "gpu tests [vecadd],[augment],[pipeline]: exit $rc ($(tail -n 2 "$out/gpu_tests.log" | tr '\n' ' '))"
  [ $rc -eq 0 ] || status=1
fi

# 2. One point each, JSON: status ok, verification passed, ratios and peak fractions present.
quick=(--min-samples 10 --max-samples 50 --min-time 0.05 --timeout 2 -q)
timeout 40 "$bin" vecadd --n 2^28 "${quick[@]}" --output "$out/vecadd.json" >"$out/vecadd.txt" 2>&1
timeout 40 "$bin" augment --batch 256 "${quick[@]}" --output "$out/augment.json" >"$out/augment.txt" 2>&1
timeout 60 "$bin" pipeline --scenario augment-train --batch 32 "${quick[@]}" \
  --output "$out/pipeline.json" >"$out/pipeline.txt" 2>&1
python3 - "$out" <<'PY' | tee -a "$out/summary.txt"
import json, sys, os
out = sys.argv[1]
need = {
    "vecadd": (["speedup_kernel_vs_cpu_reference", "speedup_overlapped_vs_serial_end_to_end"],
               "kernel"),
    "augment": (["speedup_fused_vs_staged", "speedup_fused_vs_cpu_reference",
                 "fused_images_per_s"], "fused"),
    "pipeline": (["streams_speedup_vs_serial", "graph_speedup_vs_serial"], None),
}
bad = 0
for name, (keys, peaked) in need.items():
    path = os.path.join(out, name + ".json")
    try:
        r = json.load(open(path))["results"][0]
    except Exception as e:  # noqa: BLE001
        print(f"{name}: FAIL no result ({e})"); bad += 1; continue
    missing = [k for k in keys if k not in r.get("derived", {})]
    frac = None
    if peaked:
        m = [m for m in r["measurements"] if m["name"] == peaked][0]
        frac = m.get("rates", {}).get("fraction_of_theoretical_peak")
    ok = r["status"] == "ok" and r["verification"]["passed"] and not missing and \
        (peaked is None or frac is not None)
    bad += not ok
    med = {m["name"]: m["stats"]["median"] for m in r["measurements"]}
    print(f"{name}: {'ok' if ok else 'FAIL'} status={r['status']} missing={missing} "
          f"peak_fraction={frac} medians={ {k: f'{v*1e6:.1f}us' for k, v in med.items()} }")
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || status=1

# 3. Dry runs on a GPU machine (augment asks the device whether a batch fits).
for args in "vecadd --n 1M:1G:x4 --dtype all" "augment --batch 32,256" "pipeline --batch 8,32"; do
  # shellcheck disable=SC2086
  timeout 30 "$bin" $args --dry-run >>"$out/dry_run.txt" 2>&1 || { note "dry run failed: $args"; status=1; }
done
note "dry runs: $(grep -c 'would run' "$out/dry_run.txt") listings"
note "13b: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
