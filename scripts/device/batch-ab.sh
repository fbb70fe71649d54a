#!/usr/bin/env bash
# The launch-free batch rows (--batch-time, issue 14) before and after, on one GPU: the old and
# the new binary alternately, vecadd warm at 1Mi, 2Mi and 4Mi (inside the 60 MB L2), two rounds;
# then the new binary's verification of vecadd (every dtype), stream and augment on the GPU.
#   scripts/device/batch-ab.sh OUT_DIR   (OLD, NEW: binaries; default build-old/, build-gpu/)
# About a minute on an H200.
set -uo pipefail
out=${1:?usage: $0 OUT_DIR}
old=${OLD:-build-old/app/gpubench}
new=${NEW:-build-gpu/app/gpubench}
mkdir -p "$out"
warm() { "$1" vecadd --n 1Mi,2Mi,4Mi --warm --batch-time 0.01 --timeout 0.3 -q \
  --output "$out/$2.json" >/dev/null 2>"$out/$2.err"; echo "$2: exit $?"; }
for round in 1 2; do
  warm "$old" "warm-old-$round"
  warm "$new" "warm-new-$round"
done
"$new" vecadd --n 1Mi --dtype all --kernel all --timeout 0.2 -q --output "$out/verify-vecadd.json" \
  >/dev/null 2>"$out/verify-vecadd.err"; echo "verify vecadd: exit $?"
"$new" stream --n 1Mi --dtype f32,f64 --timeout 0.2 -q --output "$out/verify-stream.json" \
  >/dev/null 2>"$out/verify-stream.err"; echo "verify stream: exit $?"
"$new" augment --batch 8 --impl all --timeout 0.2 -q \
  --output "$out/verify-augment.json" >/dev/null 2>"$out/verify-augment.err"
echo "verify augment: exit $?"

python3 - "$out" <<'PY' | tee "$out/summary.txt"
import glob, json, os, statistics as st, sys
out = sys.argv[1]
print(f"{'file':<14} {'n':>8} {'row':<15} {'median us':>10} {'TB/s':>6} {'rel.sd':>7} {'launches':>8} {'held':>5}")
for path in sorted(glob.glob(os.path.join(out, "warm-*.json"))):
    for r in json.load(open(path))["results"]:
        for m in r["measurements"]:
            if not m["name"].startswith("kernel"):
                continue
            s = m["samples"]
            med = st.median(s)
            sd = st.pstdev(s) / st.mean(s)
            tbs = m.get("bytes", 0) / med / 1e12 if m.get("bytes") else float("nan")
            print(f"{os.path.basename(path)[:-5]:<14} {r['params']['n']:>8} {m['name']:<15} "
                  f"{1e6 * med:10.3f} {tbs:6.2f} {100 * sd:6.2f}% {m.get('batch_launches', '-'):>8} "
                  f"{str(m.get('batch_launch_free', '-')):>5}")
for path in sorted(glob.glob(os.path.join(out, "verify-*.json"))):
    doc = json.load(open(path))
    res = [(r["status"], r["verification"].get("passed"), r["verification"].get("checked"))
           for r in doc["results"]]
    print(os.path.basename(path), "points", len(res), "all ok and verified:",
          all(s == "ok" and p for s, p, _ in res), "elements checked", sum(c or 0 for *_, c in res))
PY
