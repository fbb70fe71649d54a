#!/usr/bin/env bash
# The multi-GPU paths (docs/multi-gpu.md) on a machine with one GPU or more, from the repo root,
# with build-gpu/ built:
#   scripts/multi-gpu-check.sh OUT_DIR
# 1. --concurrent on the one GPU against the plain run: vecadd 2^28, augment batch 256, pipeline
#    batch 32; every GPU-clock median must agree within 1% (the start gate and the threads must
#    cost nothing inside the timed regions).
# 2. The start gate's GPU tests ([multi_gpu]).
# 3. mpirun -np 2 with both ranks on GPU 0 (flagged as sharing it) for vecadd, augment, pipeline:
#    one merged file each, checked. Skipped with a note when build-gpu has no MPI or no mpirun.
# Prints a summary at the end; under 4 minutes.
set -uo pipefail
out=${1:?usage: $0 OUT_DIR}
mkdir -p "$out"
bin=${GPUBENCH:-build-gpu/app/gpubench}
tests=${GPUBENCH_GPU_TESTS:-build-gpu/tests/gpubench_gpu_tests}
python=/usr/bin/python3
[[ -x $python ]] || python=python3
start=$SECONDS
status=0
note() { echo "multi-gpu-check: $*" | tee -a "$out/summary.txt"; }
: >"$out/summary.txt"

"$bin" --version | tee "$out/version.txt"
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm,clocks.mem,temperature.gpu --format=csv \
  >"$out/machine.txt" 2>&1

# Bounded measurements: each one at most 2 s.
bounded=(--max-samples 200 --timeout 2 -q)
declare -A args=(
  [vecadd]="vecadd --n 2^28"
  [augment]="augment --batch 256"
  [pipeline]="pipeline --batch 32"
)
for b in vecadd augment pipeline; do
  # shellcheck disable=SC2086
  "$bin" ${args[$b]} "${bounded[@]}" --output "$out/$b-plain.json" >"$out/$b-plain.txt" 2>&1 ||
    { note "$b plain run failed (exit $?)"; status=1; }
  # shellcheck disable=SC2086
  "$bin" ${args[$b]} "${bounded[@]}" --device 0 --concurrent --output "$out/$b-concurrent.json" \
    >"$out/$b-concurrent.txt" 2>&1 || { note "$b concurrent run failed (exit $?)"; status=1; }
done
echo "multi-gpu-check: single-GPU runs done at $((SECONDS - start)) s"

"$tests" "[multi_gpu]" >"$out/gpu-tests.txt" 2>&1 || { note "start gate GPU tests FAILED"; status=1; }
tail -2 "$out/gpu-tests.txt"

# MPI: two ranks, both on GPU 0 (the machine has one).
mpi_ran=0
if grep -q "MPI: built in" "$out/version.txt" && command -v mpirun >/dev/null; then
  as_root=()
  [[ $(id -u) -eq 0 ]] && as_root=(--allow-run-as-root)
  for b in vecadd augment pipeline; do
    # shellcheck disable=SC2086
    timeout 90 mpirun "${as_root[@]}" --oversubscribe -np 2 "$bin" ${args[$b]} "${bounded[@]}" \
      --sync-timeout 60 --output "$out/$b-mpi2.json" >"$out/$b-mpi2.txt" 2>&1 ||
      { note "$b under mpirun -np 2 failed (exit $?)"; status=1; }
  done
  mpi_ran=1
else
  note "MPI part skipped: build-gpu has no MPI built in or mpirun is missing"
fi
echo "multi-gpu-check: MPI runs done at $((SECONDS - start)) s"

"$python" - "$out" "$mpi_ran" <<'PY' | tee -a "$out/summary.txt"
import json, os, sys
out, mpi_ran = sys.argv[1], sys.argv[2] == "1"
bad = 0
def load(name):
    path = os.path.join(out, name)
    return json.load(open(path)) if os.path.exists(path) else None
print("concurrent (--device 0 --concurrent) vs plain, GPU-clock medians (target: within 1%):")
for b in ("vecadd", "augment", "pipeline"):
    plain, conc = load(f"{b}-plain.json"), load(f"{b}-concurrent.json")
    if not plain or not conc:
        print(f"  {b}: missing result"); bad += 1; continue
    p = {m["name"]: m for r in plain["results"] for m in r["measurements"]}
    c = {m["name"]: m for r in conc["results"] for m in r["measurements"]}
    for name, m in p.items():
        if name not in c:
            continue
        ratio = c[name]["stats"]["median"] / m["stats"]["median"]
        judged = m["clock"] == "gpu" and name != "cpu_augment"
        ok = abs(ratio - 1) <= 0.01
        if judged and not ok:
            bad += 1
        print(f"  {b:9} {name:24} plain {m['stats']['median']*1e3:9.4f} ms  concurrent "
              f"{c[name]['stats']['median']*1e3:9.4f} ms  ratio {ratio:.4f}"
              f"{'' if not judged else ('  ok' if ok else '  OUTSIDE 1%')}")
    agg = conc.get("aggregate", {})
    for pt in agg.get("points", []):
        for m in pt["measurements"]:
            if "start_skew_s" in m:
                print(f"  {b:9} {m['name']:24} start skew {m['start_skew_s']*1e6:.2f} us "
                      f"({m['start_skew_clock']})")
if mpi_ran:
    print("mpirun -np 2, both ranks on GPU 0:")
    for b in ("vecadd", "augment", "pipeline"):
        doc = load(f"{b}-mpi2.json")
        if not doc:
            print(f"  {b}: no merged file"); bad += 1; continue
        ranks = doc.get("ranks", [])
        flagged = all(r.get("shares_gpu") for r in ranks) and len(ranks) == 2
        merged = len({r["rank"] for r in doc["results"]}) == 2
        if not (flagged and merged):
            bad += 1
        print(f"  {b:9} ranks {len(ranks)} shared-GPU flag {'yes' if flagged else 'NO'} "
              f"merged {'yes' if merged else 'NO'} uuid {ranks[0].get('uuid', '') if ranks else ''}")
        for pt in doc["aggregate"]["points"]:
            for m in pt["measurements"]:
                bps = m["rates"].get("bytes_per_s", {}).get("sum")
                ips = m["rates"].get("items_per_s", {}).get("sum")
                print(f"    {m['name']:24} median {m['median_s']['median']*1e3:9.4f} ms  straggler "
                      f"{m['straggler_ratio']:.3f}  sum {bps/1e9 if bps else 0:8.1f} GB/s "
                      f"{ips if ips else 0:12.4g} items/s")
            print(f"    start skew {pt.get('start_skew_s', 0)*1e6:.1f} us (host clocks)")
print(f"checks failed: {bad}")
sys.exit(1 if bad else 0)
PY
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
echo "multi-gpu-check: total $((SECONDS - start)) s, status $status"
exit $status
