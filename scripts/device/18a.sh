#!/usr/bin/env bash
# Issue 18 (parsing side), on one H200: verification now fails on any NaN or infinity (either side)
# and sigma/lr/degrees must not round to 0 in float32. Checks that the GPU paths still verify on
# default and edge inputs, and that the refused values are refused before any device work.
#   scripts/device/18a.sh OUT_DIR        (binary: ${GPUBENCH:-build-gpu/app/gpubench})
set -uo pipefail
out=${1:?usage: scripts/device/18a.sh OUT_DIR}
bin=${GPUBENCH:-build-gpu/app/gpubench}
mkdir -p "$out"
fast=(--min-samples 3 --max-samples 5 --min-time 0 --warmup 1)
summary=()
check() { # name, expected exit, command...
  local name=$1 want=$2
  shift 2
  "$@" >"$out/$name.out" 2>"$out/$name.err"
  local rc=$?
  local verdict=PASS
  [[ $rc -eq $want ]] || verdict=FAIL
  summary+=("$verdict $name: exit $rc (want $want)")
}
check vecadd-f32 0 "$bin" vecadd --n 16M --dtype f32,f16,bf16 "${fast[@]}" --output "$out/vecadd.json"
check augment-default 0 "$bin" augment --batch 32 "${fast[@]}" --output "$out/augment.json"
check augment-small-sigma 0 "$bin" augment --batch 8 --sigma 1e-30:1e-20 "${fast[@]}" \
  --output "$out/augment-small-sigma.json"
check augment-sigma-underflow 2 "$bin" augment --batch 8 --sigma 1e-50 "${fast[@]}"
check pipeline-default 0 "$bin" pipeline --scenario augment-train --batch 32 "${fast[@]}" \
  --output "$out/pipeline.json"
check pipeline-lr-underflow 2 "$bin" pipeline --lr 1e-320 "${fast[@]}"
python3 - "$out" <<'PY' >"$out/verification.txt" 2>&1
import json, os, sys
for name in ("vecadd", "augment", "augment-small-sigma", "pipeline"):
    path = os.path.join(sys.argv[1], name + ".json")
    if not os.path.exists(path):
        print(f"{name}: no result file"); continue
    doc = json.load(open(path))
    for r in doc["results"]:
        v = r["verification"]
        print(f"{name} {r['status']} passed={v['passed']} checked={v['checked']} "
              f"mismatches={v['mismatches']} non_finite={v.get('details', {}).get('non_finite')}")
PY
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
cat "$out/verification.txt"
