#!/usr/bin/env bash
# Issue 18 (items 2-5, 9-11) and issue 13 (items 3-4) on one H200: the per-point error policy with
# a real out-of-memory point in the middle of an augment and a pipeline sweep, SIGTERM during a GPU
# sweep, and the writers on GPU results. Usage: scripts/device/18b.sh OUT_DIR (from the repo root,
# build-gpu/ already built). About 1-2 minutes.
set -uo pipefail
out=${1:?usage: scripts/device/18b.sh OUT_DIR}
mkdir -p "$out"
bin=${GPUBENCH:-build-gpu/app/gpubench}
tests=${GPUBENCH_GPU_TESTS:-build-gpu/tests/gpubench_gpu_tests}
fast=(--min-samples 3 --max-samples 10 --min-time 0 --timeout 1)
summary="$out/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
status_of() { # FILE -> "ok,skipped,ok"
  python3 -c 'import json,sys; print(",".join(r["status"] for r in json.load(open(sys.argv[1]))["results"]))' "$1" 2>/dev/null
}

# 1. augment --batch 32,400000,64: batch 400000 (about 320 GB) is skipped, 32 and 64 measured, exit 3
#    (before: exit 2 at planning and no result at all).
"$bin" augment --batch 32,400000,64 "${fast[@]}" --output "$out/augment-oom-sweep.json" \
  >"$out/augment-oom-sweep.txt" 2>"$out/augment-oom-sweep.err"
rc=$?
st=$(status_of "$out/augment-oom-sweep.json")
[[ $rc == 3 && $st == ok,skipped,ok ]] && v=PASS || v=FAIL
say "augment OOM mid-sweep: exit $rc (want 3), statuses $st (want ok,skipped,ok): $v"
grep -m1 "400000" "$out/augment-oom-sweep.err" | tee -a "$summary"

# 2. The GPU tests of the policy (augment and pipeline OOM points in the middle of a sweep; the
#    pipeline one holds all but 4 GB of the device) and the augment test changed with it.
"$tests" "[policy]" >"$out/gpu-tests-policy.txt" 2>&1
say "gpu tests [policy]: exit $? ($(tail -2 "$out/gpu-tests-policy.txt" | tr '\n' ' '))"
"$tests" "augment: a batch that cannot fit*" >"$out/gpu-tests-augment-fit.txt" 2>&1
say "gpu test augment fit: exit $? ($(tail -2 "$out/gpu-tests-augment-fit.txt" | tr '\n' ' '))"

# 3. SIGTERM during a GPU sweep: exit 143, the results so far written, marked incomplete.
"$bin" vecadd --n 1M,1G,1G --min-samples 100000 --max-samples 100000 --min-time 0 --timeout 20 \
  --output "$out/vecadd-sigterm.json" >"$out/vecadd-sigterm.txt" 2>"$out/vecadd-sigterm.err" &
pid=$!
sleep 6
kill -TERM "$pid"
wait "$pid"
rc=$?
inc=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["meta"]; print(m.get("incomplete"), m.get("incomplete_reason"))' "$out/vecadd-sigterm.json" 2>/dev/null)
[[ $rc == 143 && $inc == True*SIGTERM* ]] && v=PASS || v=FAIL
say "vecadd SIGTERM: exit $rc (want 143), incomplete: $inc, statuses $(status_of "$out/vecadd-sigterm.json"): $v"
ls -a "$out" | grep -q '^\.vecadd' && say "  a temporary file was left" || true

# 4. Writers on GPU results: the file's format follows --format, '-' is stdout, the compare table
#    fits 120 columns, verification passed is true/false only when performed.
"$bin" vecadd --n 1M,16M "${fast[@]}" -q --format csv --output "$out/vecadd.csv" >/dev/null
head -1 "$out/vecadd.csv" | grep -q '^benchmark,device,status' && v=PASS || v=FAIL
say "vecadd --format csv --output x.csv is CSV: $v"
"$bin" augment --batch 32,64 "${fast[@]}" -q --output - >"$out/augment-stdout.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(all(r["verification"]["passed"] in (True, False) for r in d["results"]))' "$out/augment-stdout.json" | grep -q True && v=PASS || v=FAIL
say "augment --output - is the JSON on stdout, verification passed is a boolean when performed: $v"
"$bin" compare "$out/augment-stdout.json" "$out/augment-stdout.json" >"$out/compare-table.txt"
w=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$out/compare-table.txt")
[[ $w -le 120 ]] && v=PASS || v=FAIL
say "compare table width $w columns (want <= 120): $v"
"$bin" vecadd --n 1M "${fast[@]}" -q --output "$out/v.json" | head -c 1 >/dev/null
say "vecadd | head -c 1: exit ${PIPESTATUS[0]} (2 when the pipe closed before stdout was written, 0 if it was written in time); file written: $([[ -s $out/v.json ]] && echo yes || echo NO)"

echo
echo "== 18b summary =="
cat "$summary"
