#!/usr/bin/env bash
# Issue 14 on one H200: launch-free warm/cold timing, telemetry, --energy and a contended run.
# Usage: scripts/device/issue14.sh OUT_DIR   (binary: ${GPUBENCH:-build-gpu/app/gpubench})
# Runs in about 2-3 minutes; prints the figures and the targets at the end.
set -uo pipefail
out=${1:?usage: issue14.sh OUT_DIR}
mkdir -p "$out"
bin=${GPUBENCH:-build-gpu/app/gpubench}
started=$(date +%s)
log() { echo "[issue14 $(($(date +%s) - started))s] $*" >&2; }

nvidia-smi -q -d CLOCK,POWER,PERFORMANCE > "$out/nvidia-smi-before.txt" 2>&1

# 1. Warm vs cold, per launch and batched, over sizes inside and beyond the 60 MB L2.
sizes=1Mi,2Mi,4Mi,16Mi,64Mi,2^28
log "vecadd cold $sizes"
"$bin" vecadd --n "$sizes" --timeout 0.5 --format json --output "$out/vecadd-cold.json" \
  > "$out/vecadd-cold.txt" 2> "$out/vecadd-cold.err"
log "vecadd warm $sizes (with --batch-time 0.01)"
"$bin" vecadd --n "$sizes" --timeout 0.5 --warm --batch-time 0.01 --format json \
  --output "$out/vecadd-warm.json" > "$out/vecadd-warm.txt" 2> "$out/vecadd-warm.err"

# 2. The default run, timed (target < 5 s), with its telemetry lines.
log "vecadd --n 10M (default options)"
t0=$(date +%s.%N)
"$bin" vecadd --n 10M --output "$out/vecadd-10M.json" > "$out/vecadd-10M.txt" 2>&1
t1=$(date +%s.%N)
echo "$t0 $t1" | awk '{printf "%.2f\n", $2 - $1}' > "$out/vecadd-10M.seconds"

# 3. Energy per operation.
log "--energy vecadd 2^24"
"$bin" vecadd --n 2^24 --energy --output "$out/energy-vecadd.json" > "$out/energy-vecadd.txt" 2>&1
log "--energy augment batch 256"
"$bin" augment --batch 256 --impl fused --energy --output "$out/energy-augment.json" \
  > "$out/energy-augment.txt" 2>&1
log "--energy pipeline batch 32"
"$bin" pipeline --batch 32 --energy --output "$out/energy-pipeline.json" \
  > "$out/energy-pipeline.txt" 2>&1

# 4. Contention: a second gpubench keeps the GPU busy while the first measures.
log "contended run"
"$bin" vecadd --n 2^26 --warm --min-samples 10000000 --max-samples 10000000 --timeout 30 \
  --no-verify -q --format json > "$out/contender.json" 2> "$out/contender.err" &
contender=$!
sleep 1.5
"$bin" vecadd --n 2^24 --timeout 0.5 --output "$out/contended.json" > "$out/contended.txt" 2>&1
kill -INT "$contender" 2>/dev/null
wait "$contender"

nvidia-smi -q -d CLOCK,POWER,PERFORMANCE > "$out/nvidia-smi-after.txt" 2>&1
log "done; summary:"

python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, sys
out = sys.argv[1]
def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except Exception as e:  # noqa: BLE001 - the summary reports whatever is there
        print(f"{name}: unreadable ({e})")
        return None
def row(doc, name):
    return {r["params"]["n"]: next((m for m in r["measurements"] if m["name"] == name), None)
            for r in (doc or {}).get("results", [])}
ok = True
def target(cond, text):
    global ok
    ok = ok and cond
    print(f"  [{'PASS' if cond else 'FAIL'}] {text}")

cold, warm = load("vecadd-cold.json"), load("vecadd-warm.json")
c, w, b = row(cold, "kernel"), row(warm, "kernel"), row(warm, "kernel (batch)")
print("vecadd f32 kernel: n, cold TB/s (rel.sd, stop), warm TB/s (rel.sd, stop), batch TB/s")
for n in sorted(c):
    def f(m):
        if not m: return "-"
        return (f"{m['rates'].get('bytes_per_s', 0) / 1e12:.2f} "
                f"({m['stats']['rel_stddev'] * 100:.1f}%, {m.get('stop_reason', '?')})")
    print(f"  {n:>10}  {f(c.get(n)):>22}  {f(w.get(n)):>22}  {f(b.get(n)):>22}")
for n in sorted(c):
    if 12 * n > 60e6 or not c.get(n) or not w.get(n):
        continue
    cb, wb = c[n]["rates"]["bytes_per_s"], w[n]["rates"]["bytes_per_s"]
    target(wb >= cb, f"n={n}: warm {wb/1e12:.2f} >= cold {cb/1e12:.2f} TB/s")
    target(w[n]["stats"]["rel_stddev"] <= 0.02,
           f"n={n}: warm rel.sd {w[n]['stats']['rel_stddev']*100:.2f}% <= 2%")
if w.get(1 << 20):
    target(w[1 << 20]["rates"]["bytes_per_s"] >= 3e12, "1Mi warm >= 3 TB/s")
if c.get(1 << 28):
    v = c[1 << 28]["rates"]["bytes_per_s"] / 1e12
    target(abs(v - 4.40) / 4.40 <= 0.01, f"2^28 cold {v:.3f} TB/s within 1% of 4.40")

secs = float(open(os.path.join(out, "vecadd-10M.seconds")).read())
target(secs < 5, f"vecadd --n 10M took {secs:.2f} s (< 5 s)")
d = load("vecadd-10M.json")
if d:
    for m in d["results"][0]["measurements"]:
        t = m.get("telemetry", {})
        print(f"  10M {m['name']:<24} stop={m.get('stop_reason')} timing={m.get('timing')} "
              f"sm={t.get('sm_clock_mhz')} mem={t.get('mem_clock_mhz')} "
              f"temp={t.get('temperature_c')} throttle={t.get('throttle')} "
              f"others={t.get('other_processes')} flags={t.get('flags')} "
              f"{'' if t.get('available', True) else t.get('reason')}")

print("energy:")
for name, rows in (("energy-vecadd.json", ["kernel", "cpu_reference"]),
                   ("energy-augment.json", ["fused", "cpu_reference"]),
                   ("energy-pipeline.json", ["serial", "streams", "graph"])):
    d = load(name)
    if not d:
        continue
    for r in d["results"]:
        for m in r["measurements"]:
            e = m.get("energy")
            if not e or m["name"] not in rows:
                continue
            if not e.get("supported"):
                print(f"  {name} {m['name']}: unsupported ({e.get('reason')})")
                continue
            print(f"  {name} {m['name']}: {e['j_per_op']:.4g} J/{e['op_unit']} "
                  f"(net {e['j_per_op_net']:.4g}), {e['mean_w']:.1f} W, idle {e['idle_w']:.1f} W, "
                  f"tick {e['tick_s']*1e3:.1f} ms, window {e['window_s']:.2f} s x {e['windows']}, "
                  f"CV {e['cv']*100:.2f}%, 95% +-{e['ci95_rel']*100:.2f}%, "
                  f"counter vs integral {e.get('counter_vs_integral')}, "
                  f"bytes/J {e.get('bytes_per_j')}")
            if e.get("source") == "nvml_total_energy_counter" and m["name"] in ("kernel", "fused", "streams"):
                target(e["cv"] <= 0.01, f"{name} {m['name']}: energy/op CV {e['cv']*100:.2f}% <= 1%")
                cvi = e.get("counter_vs_integral")
                target(cvi is not None and cvi <= 0.03,
                       f"{name} {m['name']}: counter vs integral {cvi} <= 3%")
    print(f"  derived: { {k: v for r in d['results'] for k, v in r['derived'].items() if 'energy' in k} }")

d = load("contended.json")
if d:
    flags = [f for m in d["results"][0]["measurements"] for f in m.get("telemetry", {}).get("flags", [])]
    target("contention" in flags, f"contended run flagged (flags seen: {sorted(set(flags))})")
print("ALL TARGETS MET" if ok else "SOME TARGETS MISSED")
PY
log "finished in $(($(date +%s) - started)) s"
