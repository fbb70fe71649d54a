#!/usr/bin/env bash
# --energy before and after the counter moved to its own thread (issue 14), on one GPU: the old
# and the new binary alternately on vecadd 2^24 and augment batch 256 (fused), then the new one on
# pipeline batch 32 and with 2 s windows. Prints one line per energy row and the kernel timings.
#   scripts/device/energy-ab.sh OUT_DIR   (OLD, NEW: binaries; default build-old/, build-gpu/)
# About 2 minutes on an H200.
set -uo pipefail
out=${1:?usage: $0 OUT_DIR}
old=${OLD:-build-old/app/gpubench}
new=${NEW:-build-gpu/app/gpubench}
mkdir -p "$out"
quick=(--timeout 0.3 -q)

vecadd() { "$1" vecadd --n 2^24 --energy "${quick[@]}" --output "$out/$2.json" "${@:3}" >/dev/null 2>"$out/$2.err"; echo "$2: exit $?"; }
augment() { "$1" augment --batch 256 --impl fused --energy "${quick[@]}" --output "$out/$2.json" "${@:3}" >/dev/null 2>"$out/$2.err"; echo "$2: exit $?"; }

for round in 1 2; do
  vecadd "$old" "vecadd-old-$round"
  vecadd "$new" "vecadd-new-$round"
done
augment "$old" augment-old-1
augment "$new" augment-new-1
augment "$new" augment-new-2
augment "$old" augment-old-2
vecadd "$new" vecadd-new-window2 --energy-window 2
augment "$new" augment-new-window2 --energy-window 2
"$new" pipeline --batch 32 --energy "${quick[@]}" --output "$out/pipeline-new.json" >/dev/null \
  2>"$out/pipeline-new.err"
echo "pipeline-new: exit $?"

python3 - "$out" <<'PY' | tee "$out/summary.txt"
import glob, json, os, statistics as st, sys
out = sys.argv[1]
print(f"{'file':<22} {'row':<9} {'J/op':>10} {'net':>10} {'W':>6} {'CV':>6} {'c-vs-i':>7} "
      f"{'busy':>6} {'ops/s':>9} {'read ms':>7} {'median us':>9}")
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    doc = json.load(open(path))
    for r in doc["results"]:
        for m in r["measurements"]:
            e = m.get("energy") or {}
            if not e.get("supported"):
                continue
            median = st.median(m["samples"]) if m.get("samples") else float("nan")
            # operations per launch where one launch is one sample (pipeline's are not)
            per_launch = {"vecadd": r["params"].get("n"),
                          "augment": r["params"].get("batch")}.get(r["benchmark"])
            busy = e.get("busy_fraction")
            if busy is None and per_launch and m["clock"] == "gpu":
                # the old binary: ops per second x the median launch time (cold, an estimate)
                busy = e["ops_per_s"] / float(per_launch) * median
            busy_s = f"{100 * busy:5.1f}%" if busy is not None else "     -"
            read = e.get("counter_read_s")
            read_s = f"{1e3 * read:7.2f}" if read is not None else "      -"
            c_i = e.get("counter_vs_integral")
            c_i_s = f"{100 * c_i:6.2f}%" if c_i is not None else "      -"
            print(f"{os.path.basename(path)[:-5]:<22} {m['name'][:9]:<9} {e['j_per_op']:10.4g} "
                  f"{e['j_per_op_net']:10.4g} {e['mean_w']:6.1f} {100 * e['cv']:5.2f}% {c_i_s} "
                  f"{busy_s} {e['ops_per_s']:9.3g} {read_s} {1e6 * median:9.2f}")
PY
