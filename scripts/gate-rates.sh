#!/usr/bin/env bash
# The regression gate's false-alarm and detection rates over a folder of recorded runs
# (docs/ci.md): every pair and 45 five-a-side splits of base-1..10.json, and base against the
# slowed runs slow10-1..8.json and slow5-1..6.json, compared the way docs/ci.md recommends; then a
# summary. No GPU needed: the runs are recorded on a GPU (docs/results/h200-2026-12-01/README.md);
# run it alone to re-judge recorded runs with another build of `compare`:
#   scripts/gate-rates.sh RUNS_DIR [OUT_DIR]   (GPUBENCH: the binary; OUT_DIR default RUNS_DIR)
set -uo pipefail
runs_dir=${1:?usage: $0 RUNS_DIR [OUT_DIR]}
out=${2:-$runs_dir}
bin=${GPUBENCH:-build-gpu/app/gpubench}
log="$out/gate-rates.log"
mkdir -p "$out/cmp"
: >"$log"
: >"$out/cmp/exits.txt"

# ---- comparisons, the way docs/ci.md recommends (GPU clock, 5% threshold, defaults) ----
gate_cmp() { "$bin" compare "$@" --clock gpu --format json 2>>"$log"; }
n=0
for ((i = 1; i <= 10; i++)); do
  for ((j = i + 1; j <= 10; j++)); do
    gate_cmp "$runs_dir/base-$i.json" "$runs_dir/base-$j.json" >"$out/cmp/pair-$i-$j.json"
    echo "pair $i $j exit $?" >>"$out/cmp/exits.txt"
    n=$((n + 1))
  done
done
# 5 runs against 5: 45 of the 126 splits of the ten runs (those with run 1 in BASE, in order).
python3 - "$out" <<'PY' >"$out/cmp/splits.txt"
import itertools, sys
for k, a in enumerate(c for c in itertools.combinations(range(1, 11), 5) if 1 in c):
    if k >= 45: break
    print(" ".join(map(str, a)), "|", " ".join(str(x) for x in range(1, 11) if x not in a))
PY
k=0
while IFS='|' read -r a b; do
  k=$((k + 1))
  base_files=(); new_files=()
  for x in $a; do base_files+=("$runs_dir/base-$x.json"); done
  for x in $b; do new_files+=("$runs_dir/base-$x.json"); done
  gate_cmp --base "${base_files[@]}" --new "${new_files[@]}" >"$out/cmp/split-$k.json"
  echo "split $k exit $?" >>"$out/cmp/exits.txt"
done <"$out/cmp/splits.txt"
# detection, 1 run a side (80 pairs) and 5 a side (windows of 5 consecutive runs)
for ((i = 1; i <= 10; i++)); do
  for ((j = 1; j <= 8; j++)); do
    gate_cmp "$runs_dir/base-$i.json" "$runs_dir/slow10-$j.json" >"$out/cmp/d10-1v1-$i-$j.json"
    echo "d10-1v1 $i $j exit $?" >>"$out/cmp/exits.txt"
  done
done
window() { # prefix start total
  local files=()
  for ((x = 0; x < 5; x++)); do files+=("$runs_dir/$1-$((($2 - 1 + x) % $3 + 1)).json"); done
  echo "${files[@]}"
}
for ((i = 1; i <= 10; i++)); do
  for ((j = 1; j <= 4; j++)); do
    # shellcheck disable=SC2046
    gate_cmp --base $(window base "$i" 10) --new $(window slow10 "$j" 8) >"$out/cmp/d10-5v5-$i-$j.json"
    echo "d10-5v5 $i $j exit $?" >>"$out/cmp/exits.txt"
  done
  for ((j = 1; j <= 2; j++)); do
    # shellcheck disable=SC2046
    gate_cmp --base $(window base "$i" 10) --new $(window slow5 "$j" 6) >"$out/cmp/d5-5v5-$i-$j.json"
    echo "d5-5v5 $i $j exit $?" >>"$out/cmp/exits.txt"
  done
  for ((j = 1; j <= 6; j++)); do
    gate_cmp "$runs_dir/base-$i.json" "$runs_dir/slow5-$j.json" >"$out/cmp/d5-1v1-$i-$j.json"
    echo "d5-1v1 $i $j exit $?" >>"$out/cmp/exits.txt"
  done
done

# ---- summary ----
python3 - "$out" "$runs_dir" <<'PY' | tee -a "$log" "$out/summary.txt"
import glob, json, os, re, statistics as st, sys
out, runs_dir = sys.argv[1], sys.argv[2]
exits = [l.split() for l in open(os.path.join(out, "cmp", "exits.txt"))]
def count(kind, code):
    return sum(1 for e in exits if e[0] == kind and e[-1] == str(code)), sum(1 for e in exits if e[0] == kind)
def rows(pattern):
    for p in sorted(glob.glob(os.path.join(out, "cmp", pattern))):
        try:
            doc = json.load(open(p))
        except Exception:
            continue
        for r in doc["rows"]:
            yield p, r
print("== false alarms (one binary, 10 processes; target: no exit 1)")
for kind, what in (("pair", "1 run vs 1 (45 pairs)"), ("split", "5 runs vs 5 (45 splits)")):
    e1, tot = count(kind, 1); e2, _ = count(kind, 2)
    print(f"  {what}: exit 1 in {e1} of {tot}, exit 2 in {e2}")
    slow = [(os.path.basename(p), r["benchmark"], r["measurement"], r["params"].get("scenario", ""),
             r["gated"]) for p, r in rows(kind + "-*.json") if r["verdict"] == "slower"]
    print(f"    rows 'slower': {len(slow)} (gated {sum(1 for s in slow if s[4])});",
          sorted({(s[1], s[2], s[3], 'gated' if s[4] else 'host-bound') for s in slow}))
print("== detection of end_to_end +10% / +5% (GPUBENCH_TEST_SLOWDOWN; targets: 10% caught >= 95%"
      " with 5 a side, 5% never 'same')")
for pat, what in (("d10-5v5-*.json", "10%, 5 runs vs 5"), ("d10-1v1-*.json", "10%, 1 run vs 1"),
                  ("d5-5v5-*.json", "5%, 5 runs vs 5"), ("d5-1v1-*.json", "5%, 1 run vs 1")):
    v = [r["verdict"] for _, r in rows(pat) if r["measurement"] == "end_to_end"]
    ch = [r["change"] for _, r in rows(pat) if r["measurement"] == "end_to_end"]
    print(f"  {what}: {len(v)} end_to_end rows: slower {v.count('slower')}, inconclusive "
          f"{v.count('inconclusive')}, same {v.count('same')}, faster {v.count('faster')}; "
          f"median change {100 * st.median(ch) if ch else float('nan'):+.1f}%")
    other = [r for _, r in rows(pat) if r["measurement"] != "end_to_end" and r["regression"]]
    print(f"    other measurements failing: {len(other)}")
print("== per-process medians of every GPU measurement (10 base runs; 4 with CUBLAS_WORKSPACE_CONFIG)")
def load(prefix):
    data = {}
    for p in sorted(glob.glob(os.path.join(runs_dir, prefix + "-*.json"))):
        doc = json.load(open(p))
        for r in doc["results"]:
            label = r["benchmark"] + " " + " ".join(f"{k}={r['params'][k]}" for k in ("dtype", "kernel", "scenario") if k in r["params"])
            for m in r.get("measurements", []):
                if m["clock"] != "gpu":
                    continue
                d = data.setdefault((label, m["name"]), {"med": [], "hb": 0, "enq": []})
                d["med"].append(st.median(m["samples"]))
                d["hb"] += 1 if m.get("host_bound") else 0
                if m.get("host_enqueue_s"):
                    d["enq"].append(m["host_enqueue_s"] / st.median(m["samples"]))
    return data
base, ws = load("base"), load("cublasws")
print(f"  {'measurement':<58} {'median':>9} {'spread':>7} {'host_bound':>10} {'enq/gpu':>8} {'ws spread':>9}")
for key, d in base.items():
    meds = d["med"]
    spread = 100 * (max(meds) / min(meds) - 1)
    w = ws.get(key, {}).get("med", [])
    wsp = f"{100 * (max(w) / min(w) - 1):.1f}%" if len(w) > 1 else "-"
    enq = f"{st.median(d['enq']):.2f}" if d["enq"] else "-"
    print(f"  {key[0] + ' ' + key[1]:<58} {1e6 * st.median(meds):8.1f}u {spread:6.1f}% {d['hb']:>7}/{len(meds)} {enq:>8} {wsp:>9}")
PY
