#!/usr/bin/env bash
# Device call for gpubench check (and the open before/after rows), binaries carried in .deps/bin
# (gpubench-new: 7711d51 plus the roofline grid, gpubench_gpu_tests of the same tree, gpubench-old e1202f4). In priority order, each bounded:
#   1. GPU tests (the [check] case included);
#   2. check: default timed, quick timed, stream 2^28 beside it (figures within 2%), 10 repeats,
#      a reference from them, 3 held to it, triad slowed 5% (FAIL), a second process (WARN/FAIL),
#      mpirun -np 2 on one GPU with rank 1 slowed (named outlier);
#   3. augment fused/staged old vs new, 4 rounds (the rows that moved 0.57% and 1.53%).
# Everything lands in one archive: the device tool returns a bounded number of files.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; cap=${CAP:-560}
left() { echo $((cap - (SECONDS - t0))); }
export LD_LIBRARY_PATH="$root/.deps/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
new=$root/.deps/bin/gpubench-new; old=$root/.deps/bin/gpubench-old
w=$o/work; mkdir -p $w
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,power.default_limit,uuid,persistence_mode,pcie.link.gen.max,pcie.link.width.max --format=csv
  nproc; date -u +%Y-%m-%dT%H:%M:%SZ; } > $o/machine.txt 2>&1
$new --version > $o/version.txt 2>&1
( time timeout 90 $root/.deps/bin/gpubench_gpu_tests ) > $o/gpu-tests.txt 2>&1
echo "gpu tests rc $? at $((SECONDS-t0)) s"; tail -4 $o/gpu-tests.txt
c() { # name, timeout, args...
  local name=$1 t=$2; shift 2
  local s=$SECONDS
  timeout $t "$@" > $w/$name.txt 2>&1
  echo "$name rc $? in $((SECONDS-s)) s" | tee -a $o/summary.txt
}
c check-default 150 $new check --output $w/check-default.json
tail -25 $w/check-default.txt
c check-quick 60 $new check --quick --output $w/check-quick.json
c stream-beside 30 $new stream --n 2^28 --output $w/stream-beside.json
for i in 1 2 3 4 5 6 7 8 9 10; do
  (( $(left) > 200 )) || break
  c check-repeat-$i 40 $new check --quick --output $w/check-repeat-$i.json
  grep -E "^Fleet|FAIL|WARN" $w/check-repeat-$i.txt | head -3
done
$new check --save-reference $w/reference.json --from $w/check-repeat-*.json > $w/save-reference.txt 2>&1
echo "save-reference rc $?"
c check-held 40 $new check --quick --reference $w/reference.json --output $w/check-held.json
GPUBENCH_TEST_SLOWDOWN=triad:0.05 c check-slow-hbm 60 $new check --quick --reference $w/reference.json --output $w/check-slow-hbm.json
grep -E "hbm_triad|^Fleet" $w/check-slow-hbm.txt
$new stream --n 2^30 --min-time 30 --timeout 40 --max-samples 100000 -q > /dev/null 2>&1 &
hog=$!; sleep 3
c check-contention 60 $new check --quick --reference $w/reference.json --output $w/check-contention.json
kill $hog 2>/dev/null; wait $hog 2>/dev/null
grep -E "throttling|^Fleet" $w/check-contention.txt
if (( $(left) > 80 )); then
  timeout 70 mpirun --allow-run-as-root --oversubscribe -np 1 $new check --quick --device 0 \
    --output $w/check-fleet.json : -np 1 -x GPUBENCH_TEST_SLOWDOWN=triad:0.05 $new check --quick \
    --device 0 > $w/check-fleet.txt 2>&1
  echo "mpirun rc $?"; grep -E "outlier|^Fleet" $w/check-fleet.txt | head -5
fi
if [[ -x $old ]] && (( $(left) > 60 )); then
  AB_ONLY=1 AB_EXTRA=$'augment|augment --batch 32,256 --impl fused,staged' \
    timeout $(( $(left) - 10 )) scripts/figures-ab.sh "$old" "$new" $w/ab 4 > $w/ab.log 2>&1
  echo "ab rc $?"; tail -12 $w/ab.log
fi
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
