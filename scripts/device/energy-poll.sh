#!/usr/bin/env bash
# Issue 14, one device call: the --timestamps CLI tests on the GPU, repeated L2 sweeps with
# --timestamps, and whether the energy counter's poller slows a host-launched pipeline.
#   scripts/device/energy-poll.sh OUT_DIR
# The energy part needs a binary that reads GPUBENCH_EXP_POLL_US (the pause between counter
# reads, 250 us in the code): an experiment build, not the committed code.
set -uo pipefail
source "$(dirname "$0")/common.sh"
device_start energy-poll "${1:?usage: energy-poll.sh OUT_DIR}"

log "CLI tests of --timestamps"
cli_tests "$out/cli-tests.txt" test_timestamps

log "L2 sizes, 3 rounds, warm and cold, with --timestamps"
for r in 1 2 3; do
  for t in warm cold; do
    extra=()
    [[ $t == warm ]] && extra=(--warm)
    "$bin" vecadd --n 1Mi,2Mi,4Mi "${extra[@]}" --timestamps --timeout 0.5 -q --format json \
      --output "$out/l2-$t-$r.json" >/dev/null 2>>"$out/l2.err"
  done
done

log "pipeline --energy, counter poll pause 250 us vs 20 ms, alternating"
for r in 1 2; do
  for us in 250 20000; do
    GPUBENCH_EXP_POLL_US=$us "$bin" pipeline --batch 32 --energy -q --format json \
      --output "$out/pipe-$us-$r.json" >/dev/null 2>>"$out/pipe.err"
    log "poll $us round $r: exit $?"
  done
done
log "done"
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import glob, json, os, sys
out = sys.argv[1]
print("## L2 sizes: median us, TB/s, rel.sd %")
for path in sorted(glob.glob(f"{out}/l2-*.json")):
    for r in json.load(open(path))["results"]:
        for m in r["measurements"]:
            if m["name"].startswith("kernel"):
                s = m["stats"]
                print(f"{os.path.basename(path):<14} {r['params']['n']:>8} {m['name']:<20} "
                      f"{s['median']*1e6:8.3f} {m['rates']['bytes_per_s']/1e12:6.3f} "
                      f"{100*s['stddev']/s['mean']:5.2f}")
print("## pipeline energy: row, CV %, us/step in the energy loop, busy, counter read ms, timed us")
for path in sorted(glob.glob(f"{out}/pipe-*.json")):
    for r in json.load(open(path))["results"]:
        for m in r["measurements"]:
            e = m.get("energy") or {}
            if e.get("supported"):
                print(f"{os.path.basename(path):<16} {r['params']['scenario']:<16} {m['name']:<12} "
                      f"cv {100*e['cv']:5.2f} us/step {1e6/e['ops_per_s']:7.1f} busy "
                      f"{e.get('busy_fraction', 0):5.2f} read {1e3*e.get('counter_read_s', 0):5.2f} "
                      f"timed {m['stats']['median']*1e6:7.1f} J/step {e['j_per_op']:.5f}")
PY
