#!/usr/bin/env bash
# Issue 14, --timestamps (CUPTI kernel timestamps) on one GPU, in one device call:
#   scripts/device/timestamps.sh OUT_DIR
# Binaries: build-gpu/app/gpubench (new), build-old/app/gpubench (the commit before), and
# build-gpu/tests/gpubench_gpu_tests; .deps/py/site for jsonschema. About 5 minutes.
#  1. the GPU tests tagged [timing] and the CLI tests of --timestamps;
#  2. old vs new, alternating, on the recorded figures' commands (scripts/figures-ab.sh);
#  3. vecadd over sizes in and beyond L2, cold and warm, with --timestamps; augment with it;
#  4. whether tracing one point moves the event-timed rows measured after it (with vs without);
#  5. Nsight Compute's L2 hit rate of the warm vecadd at 1Mi, 2Mi and 4Mi (does it fit in L2?).
set -uo pipefail
source "$(dirname "$0")/common.sh"
device_start timestamps "${1:?usage: timestamps.sh OUT_DIR}"
new=build-gpu/app/gpubench
old=build-old/app/gpubench

log "GPU tests [timing]"
gpu_tests "$out/gpu-tests.txt" "[timing]"
log "CLI tests of --timestamps"
cli_tests "$out/cli-tests.txt" test_timestamps

log "A/B old vs new"
AB_ONLY=1 AB_EXTRA='vecadd-2p28|vecadd --n 2^28
vecadd-warm|vecadd --n 1Mi,2Mi,4Mi --warm
augment-b256|augment --batch 256 --impl fused' \
  timeout 200 scripts/figures-ab.sh "$old" "$new" "$out/ab" 2 >"$out/ab.txt" 2>&1
cat "$out/ab.txt" | tail -30

log "sweep with --timestamps"
sizes=1Mi,2Mi,4Mi,8Mi,16Mi,64Mi,2^28
"$new" vecadd --n "$sizes" --timestamps --batch-time 0.01 --timeout 0.5 --format json \
  --output "$out/sweep-cold.json" >"$out/sweep-cold.txt" 2>&1
"$new" vecadd --n "$sizes" --timestamps --batch-time 0.01 --timeout 0.5 --warm --format json \
  --output "$out/sweep-warm.json" >"$out/sweep-warm.txt" 2>&1
"$new" augment --batch 256 --timestamps --format json --output "$out/augment.json" \
  >"$out/augment.txt" 2>&1

log "after-effects of tracing on the event-timed rows"
for r in 1 2; do
  for side in plain traced; do
    extra=()
    [[ $side == traced ]] && extra=(--timestamps)
    "$new" vecadd --n 1Mi,4Mi,16Mi --warm "${extra[@]}" -q --format json \
      --output "$out/after-$side-$r.json" >/dev/null 2>>"$out/after.err"
  done
done

log "ncu L2 hit rate"
if command -v ncu >/dev/null; then
  for n in 1Mi 2Mi 4Mi; do
    timeout 60 ncu --clock-control none --cache-control none -k regex:elementwise16 -c 10 \
      --metrics lts__t_sector_hit_rate.pct,gpu__time_duration.sum,dram__bytes_read.sum \
      "$new" vecadd --n "$n" --warm --min-samples 10 --max-samples 10 --no-verify -q \
      >"$out/ncu-$n.txt" 2>&1
  done
fi
log "done"
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import glob, json, os, statistics, sys
out = sys.argv[1]
def rows(path):
    with open(path) as f:
        doc = json.load(f)
    for r in doc["results"]:
        for m in r["measurements"]:
            yield r["params"].get("n", r["params"].get("batch")), m
for name in ("sweep-cold", "sweep-warm", "augment"):
    try:
        print(f"## {name}")
        for n, m in rows(f"{out}/{name}.json"):
            if m.get("clock") != "gpu" or m["name"] in ("h2d", "d2h") or "end_to_end" in m["name"]:
                continue
            rate = m.get("rates", {}).get("bytes_per_s", 0) / 1e12
            s = m["stats"]
            print(f"{str(n):>10} {m['name']:<24} {s['median']*1e6:10.3f} us {rate:7.3f} TB/s "
                  f"rel.sd {100*s['stddev']/s['mean']:5.2f}% stop {m.get('stop_reason')}")
    except Exception as e:  # noqa: BLE001 - print what is there
        print(f"{name}: {e}")
print("## event-timed kernel rows: plain vs after a traced point (median us)")
acc = {}
for path in sorted(glob.glob(f"{out}/after-*.json")):
    side = os.path.basename(path).split("-")[1]
    for n, m in rows(path):
        if m["name"] == "kernel":
            acc.setdefault((n, side), []).append(m["stats"]["median"] * 1e6)
for (n, side), v in sorted(acc.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
    print(f"{str(n):>10} {side:<7} {' '.join(f'{x:.3f}' for x in v)}")
PY
