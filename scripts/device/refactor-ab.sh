#!/usr/bin/env bash
# Before/after for a refactor of GPU code or the engine (issue 13's shared element-wise loop and
# augment argument structs, issue 14's NVML poller threads): scripts/figures-ab.sh on the recorded
# figures plus the paths they do not cover (stream, f16/bf16, a device-sized grid, small warm
# sizes, both generic augment kernels), old and new alternating; --energy once a side on vecadd
# and augment; then a launch-shape sweep of the small warm sizes (issue 14's 1Mi target).
#   scripts/device/refactor-ab.sh OUT_DIR   (OLD, NEW: binaries; default build-old/, build-gpu/)
set -uo pipefail
out=${1:?usage: $0 OUT_DIR}
old=${OLD:-build-old/app/gpubench}
new=${NEW:-build-gpu/app/gpubench}
here=$(dirname "$0")
mkdir -p "$out/ab" "$out/energy" "$out/sweep"

AB_EXTRA='stream|stream --n 2^28
vecadd-half|vecadd --n 2^26 --dtype f16,bf16
vecadd-grid-device|vecadd --n 2^28 --grid device
vecadd-small-warm|vecadd --n 1Mi,4Mi --warm
augment-generic-r3|augment --batch 256 --resize 250 --impl fused
augment-generic-any|augment --batch 256 --blur 11 --impl all' \
  "$here/../figures-ab.sh" "$old" "$new" "$out/ab" "${ROUNDS:-2}"

for side in old new; do
  bin=$old
  [[ $side == new ]] && bin=$new
  "$bin" vecadd --n 2^24 --energy --timeout 0.3 -q --output "$out/energy/vecadd-$side.json" \
    >/dev/null 2>"$out/energy/vecadd-$side.err"
  echo "energy vecadd $side: exit $?"
  "$bin" augment --batch 256 --impl fused --energy --timeout 0.3 -q \
    --output "$out/energy/augment-$side.json" >/dev/null 2>"$out/energy/augment-$side.err"
  echo "energy augment $side: exit $?"
done
python3 - "$out/energy" <<'PY' | tee "$out/energy/summary.txt"
import glob, json, os, sys
print(f"{'file':<14} {'row':<8} {'J/op':>10} {'W':>6} {'CV %':>6} {'c-vs-i %':>8} {'busy':>5}")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    for r in json.load(open(path))["results"]:
        for m in r["measurements"]:
            e = m.get("energy") or {}
            if not e.get("supported"):
                continue
            print(f"{os.path.basename(path)[:-5]:<14} {m['name']:<8} {e['j_per_op']:>10.4g} "
                  f"{e['mean_w']:>6.1f} {100 * e['cv']:>6.2f} {100 * e.get('counter_vs_integral', 0):>8.3f} "
                  f"{e.get('busy_fraction', 0):>5.2f}")
PY

# Launch shapes at the small warm sizes: per-launch and batch rows, each block size, both grids.
"$new" vecadd --n 1Mi,2Mi,4Mi --warm --block 128,256,512,1024 --batch-time 0.02 -q \
  --output "$out/sweep/blocks.json" --format md >"$out/sweep/blocks.md" 2>&1
echo "sweep blocks: exit $?"
"$new" vecadd --n 1Mi,2Mi,4Mi --warm --grid device --block 256,1024 -q \
  --output "$out/sweep/grid-device.json" --format md >"$out/sweep/grid-device.md" 2>&1
echo "sweep grid device: exit $?"
python3 - "$out/sweep" <<'PY' | tee "$out/sweep/summary.txt"
import glob, json, os, sys
print(f"{'file':<12} {'n':>8} {'block':>5} {'row':<16} {'median us':>9} {'TB/s':>6} {'rel sd %':>8}")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    for r in json.load(open(path))["results"]:
        p = r["params"]
        for m in r["measurements"]:
            if not m["name"].startswith("kernel"):
                continue
            s = m["stats"]
            tbs = m.get("bytes", 0) / s["median"] / 1e9 if s.get("median") else 0
            print(f"{os.path.basename(path)[:-5]:<12} {p.get('n')!s:>8} {p.get('block')!s:>5} {m['name']:<16} "
                  f"{s['median'] * 1e6:>9.3f} {tbs / 1e3:>6.2f} {100 * s.get('rel_stddev', 0):>8.2f}")
PY
