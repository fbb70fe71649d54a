#!/usr/bin/env bash
# The regression gate's false-alarm and detection rates (docs/ci.md), from runs of
# configs/ci-smoke.json by one binary: every pair of base-1..10.json and 45 five-a-side splits,
# judged with no options (compare's defaults) and with `--clock gpu --threshold 10%`; then base
# against runs slowed by the calibrated test-only delay (GPUBENCH_TEST_SLOWDOWN on end_to_end):
# slow20-* one run a side and slow10-* five a side at the defaults (slow5-*, where present, as
# before). Writes OUT_DIR/summary.md (the tables, also printed), gate-rates.log and cmp/ (every
# comparison's JSON, and exits.txt with each exit code).
#   scripts/gate-rates.sh --record OUT_DIR     on a GPU: record the runs into OUT_DIR, then judge
#                                              (about 2-3 minutes on an H200)
#   scripts/gate-rates.sh RUNS_DIR [OUT_DIR]   no GPU: judge recorded runs (OUT_DIR default
#                                              RUNS_DIR), e.g. with another build of `compare`
# GPUBENCH: the binary (default build-gpu/app/gpubench); CONFIG: default configs/ci-smoke.json.
# Exits 0 when every target of the table is met, 1 when one is missed, 2 without the runs, and a
# run's own code (3, 77, ...) when a run fails.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${GPUBENCH:-$root/build-gpu/app/gpubench}
cfg=${CONFIG:-$root/configs/ci-smoke.json}
record=0
if [[ ${1:-} == --record ]]; then
  record=1
  shift
fi
runs_dir=${1:?usage: $0 --record OUT_DIR | $0 RUNS_DIR [OUT_DIR]}
out=${2:-$runs_dir}
mkdir -p "$out/cmp" || exit 2
log="$out/gate-rates.log"
: >"$log"
: >"$out/cmp/exits.txt"
t_start=$(date +%s)
say() { echo "[gate-rates $(($(date +%s) - t_start))s] $*" | tee -a "$log"; }

# ---- 1. on the GPU: 10 runs of one binary, 8 with +10% and 6 with +20% on end_to_end ----
if ((record)); then
  {
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
      --format=csv
    date -u +%Y-%m-%dT%H:%M:%SZ
    "$bin" --version
  } >"$out/machine.txt" 2>&1
  one_run() { # name [VAR=value...]
    local name=$1 t0 rc
    shift
    t0=$(date +%s%N)
    env "$@" "$bin" run "$cfg" --output "$runs_dir/$name.json" -q >>"$log" 2>&1
    rc=$?
    say "$name: exit $rc, $((($(date +%s%N) - t0) / 1000000)) ms"
    # 1 is a verification failure, still a timing; anything else leaves no run to judge.
    if ((rc != 0 && rc != 1)); then
      say "run $name exited $rc: stopping"
      exit "$rc"
    fi
  }
  # Interleaved, so that drift of clocks or temperature falls on every kind of run alike.
  for ((i = 1; i <= 10; i++)); do
    one_run "base-$i"
    ((i <= 8)) && one_run "slow10-$i" GPUBENCH_TEST_SLOWDOWN=end_to_end:0.10
    ((i <= 6)) && one_run "slow20-$i" GPUBENCH_TEST_SLOWDOWN=end_to_end:0.20
  done
  say "runs done"
fi
for i in 1 2 3 4 5 6 7 8 9 10; do
  [[ -r $runs_dir/base-$i.json ]] || { echo "gate-rates: no $runs_dir/base-$i.json" >&2; exit 2; }
done
count_of() { # prefix: how many PREFIX-N.json there are, N from 1 without a gap
  local n=0
  while [[ -r $runs_dir/$1-$((n + 1)).json ]]; do n=$((n + 1)); done
  echo "$n"
}

# ---- 2. comparisons; each line of exits.txt: KIND MODE A B exit CODE ----
# Modes: "default" is `compare` with no options, "gpu10" is --clock gpu --threshold 10%.
judge() { # kind mode a b args...
  local kind=$1 mode=$2 a=$3 b=$4 extra=()
  shift 4
  [[ $mode == gpu10 ]] && extra=(--clock gpu --threshold 10%)
  "$bin" compare "$@" "${extra[@]}" --format json >"$out/cmp/$kind-$mode-$a-$b.json" 2>>"$log"
  echo "$kind $mode $a $b exit $?" >>"$out/cmp/exits.txt"
}
for mode in default gpu10; do
  for ((i = 1; i <= 10; i++)); do
    for ((j = i + 1; j <= 10; j++)); do
      judge pair "$mode" "$i" "$j" "$runs_dir/base-$i.json" "$runs_dir/base-$j.json"
    done
  done
done
# 5 runs against 5: 45 of the 126 splits of the ten runs (those with run 1 in BASE, in order).
python3 - <<'PY' >"$out/cmp/splits.txt"
import itertools
for k, a in enumerate(c for c in itertools.combinations(range(1, 11), 5) if 1 in c):
    if k >= 45:
        break
    print(" ".join(map(str, a)), "|", " ".join(str(x) for x in range(1, 11) if x not in a))
PY
k=0
while IFS='|' read -r a b; do
  k=$((k + 1))
  base_files=()
  new_files=()
  for x in $a; do base_files+=("$runs_dir/base-$x.json"); done
  for x in $b; do new_files+=("$runs_dir/base-$x.json"); done
  judge split default "$k" 0 --base "${base_files[@]}" --new "${new_files[@]}"
done <"$out/cmp/splits.txt"
window() { # prefix start total: 5 consecutive runs, wrapping
  local x files=()
  for ((x = 0; x < 5; x++)); do files+=("$runs_dir/$1-$((($2 - 1 + x) % $3 + 1)).json"); done
  echo "${files[@]}"
}
# detection at the defaults: every slowed run against every base run (1 vs 1), and windows of 5
# consecutive base runs against windows of 5 slowed runs (5 vs 5)
for slow in slow20 slow10 slow5; do
  total=$(count_of "$slow")
  ((total == 0)) && continue
  for ((i = 1; i <= 10; i++)); do
    for ((j = 1; j <= total; j++)); do
      judge "$slow-1v1" default "$i" "$j" "$runs_dir/base-$i.json" "$runs_dir/$slow-$j.json"
    done
    [[ $slow == slow20 ]] && continue # one run a side is its case
    ((total < 5)) && continue
    for ((j = 1; j <= total / 2; j++)); do
      # shellcheck disable=SC2046
      judge "$slow-5v5" default "$i" "$j" --base $(window base "$i" 10) \
        --new $(window "$slow" "$j" "$total")
    done
  done
done
say "comparisons done"

# ---- 3. summary ----
python3 - "$out" "$runs_dir" <<'PY' >"$out/summary.md"
import collections, glob, json, os, statistics as st, sys
out, runs_dir = sys.argv[1], sys.argv[2]
exits = collections.defaultdict(list)  # (kind, mode) -> [(file, code)]
for line in open(os.path.join(out, "cmp", "exits.txt")):
    kind, mode, a, b, _, code = line.split()
    exits[kind, mode].append((os.path.join(out, "cmp", f"{kind}-{mode}-{a}-{b}.json"), int(code)))
def rows(kind, mode):
    for path, _ in exits[kind, mode]:
        try:
            doc = json.load(open(path))
        except (OSError, ValueError):
            continue
        yield from doc["rows"]
def label(r):
    p = r["params"]
    point = " ".join(f"{k}={p[k]}" for k in ("dtype", "kernel", "scenario", "batch") if k in p)
    return f"{r['benchmark']} {point} {r['measurement']}"

print("# Regression gate on one H200: false alarms and detection\n")
def caught(kind, mode):
    """Comparisons in which an end_to_end row (the delayed one) is a regression."""
    n = 0
    for path, _ in exits[kind, mode]:
        try:
            doc = json.load(open(path))
        except (OSError, ValueError):
            continue
        n += any(r["measurement"] == "end_to_end" and r["regression"] for r in doc["rows"])
    return n
print("| comparison | options | count | exit 0 | exit 1 | exit 2 | target | met |")
print("|---|---|---|---|---|---|---|---|")
plan = [("pair", "default", "one binary, 1 run vs 1 (45 pairs)", "no exit 1", "none"),
        ("pair", "gpu10", "one binary, 1 run vs 1 (45 pairs)", "no exit 1", "none"),
        ("split", "default", "one binary, 5 runs vs 5 (45 splits)", "no exit 1", "none"),
        ("slow20-1v1", "default", "end_to_end +20%, 1 run vs 1", "exit 1 in >= 95%", "most"),
        ("slow10-5v5", "default", "end_to_end +10%, 5 runs vs 5", "exit 1 in >= 95%", "most"),
        ("slow10-1v1", "default", "end_to_end +10%, 1 run vs 1", "(limit 15%: not expected)", ""),
        ("slow5-5v5", "default", "end_to_end +5%, 5 runs vs 5", "(at the threshold)", ""),
        ("slow5-1v1", "default", "end_to_end +5%, 1 run vs 1", "(not expected)", "")]
options = {"default": "(none)", "gpu10": "--clock gpu --threshold 10%"}
for kind, mode, what, target, rule in plan:
    codes = [c for _, c in exits[kind, mode]]
    if not codes:
        continue
    n = {c: codes.count(c) for c in (0, 1, 2)}
    if rule == "none":
        met = "yes" if n[1] == 0 else "NO"
    elif rule == "most":
        c = caught(kind, mode)  # exit 1 for the delayed row, not another
        met = f"{'yes' if c >= 0.95 * len(codes) else 'NO'} ({c} with end_to_end REGRESSION)"
    else:
        met = "-"
    print(f"| {what} | {options[mode]} | {len(codes)} | {n[0]} | {n[1]} | {n[2]} | {target} | {met} |")

print("\n## Same build: rows judged 'slower', by class (gated ones are what exit 1 counts)\n")
for kind, mode in (("pair", "default"), ("pair", "gpu10"), ("split", "default")):
    slow = collections.Counter()
    for r in rows(kind, mode):
        if r["verdict"] == "slower":
            slow[label(r), r.get("gate_class", "?"), r["gated"]] += 1
    print(f"- {kind} {options[mode]}: {sum(slow.values())} rows 'slower', "
          f"{sum(v for k, v in slow.items() if k[2])} gated")
    for (name, cls, gated), v in sorted(slow.items(), key=lambda kv: -kv[1]):
        print(f"  - {v} x {name} [{cls}{', GATED' if gated else ', not gated'}]")

print("\n## Detection: the end_to_end rows (4 vecadd points a comparison)\n")
for kind in ("slow20-1v1", "slow10-5v5", "slow10-1v1", "slow5-5v5", "slow5-1v1"):
    e2e = [r for r in rows(kind, "default") if r["measurement"] == "end_to_end"]
    if not e2e:
        continue
    v = collections.Counter(r["verdict"] for r in e2e)
    other = sum(1 for r in rows(kind, "default") if r["measurement"] != "end_to_end"
                and r["regression"])
    print(f"- {kind}: {len(e2e)} rows: slower {v['slower']}, inconclusive {v['inconclusive']}, "
          f"same {v['same']}, faster {v['faster']}; median change "
          f"{100 * st.median(r['change'] for r in e2e):+.1f}%; other rows failing: {other}")

print("\n## Spread between the 10 processes (max/min of per-process medians)\n")
data = {}
for p in sorted(glob.glob(os.path.join(runs_dir, "base-*.json"))):
    for r in json.load(open(p))["results"]:
        for m in r.get("measurements", []):
            if not m.get("samples"):
                continue
            key = label({"benchmark": r["benchmark"], "params": r["params"],
                         "measurement": m["name"]})
            d = data.setdefault(key, {"med": [], "hb": 0, "clock": m["clock"]})
            d["med"].append(st.median(m["samples"]))
            d["hb"] += 1 if m.get("host_bound") else 0
def cls(d):
    return "host" if d["clock"] == "host" else "host-bound" if d["hb"] else "gpu"
spreads = collections.defaultdict(list)
print("| measurement | class | median | spread | host-bound in |")
print("|---|---|---|---|---|")
for key, d in data.items():
    spread = 100 * (max(d["med"]) / min(d["med"]) - 1)
    spreads[cls(d)].append(spread)
    print(f"| {key} | {cls(d)} | {1e6 * st.median(d['med']):.1f} us | {spread:.1f}% | "
          f"{d['hb']}/{len(d['med'])} |")
print()
for c, s in sorted(spreads.items()):
    print(f"- {c} rows ({len(s)}): spread median {st.median(s):.1f}%, max {max(s):.1f}%")
PY
tee -a "$log" <"$out/summary.md"
if grep -q '| NO' "$out/summary.md"; then
  say "a target was missed (NO above): exit 1"
  exit 1
fi
say "done, every target met: $out/summary.md"
