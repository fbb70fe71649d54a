#!/usr/bin/env bash
# Device call: gpubench check (GPU tests, default and quick timed, ranks sharing one GPU with one
# slowed, a reference from 8 default runs held and slowed), the `of roof` column on vecadd,
# stream, gemm and roofline (gemm's defaults timed), then figures-ab old e1202f4 vs new.
# Binaries come xz-packed in .deps/c6 (the carry limit); one archive out.
set -uo pipefail
root=$PWD; o=$OUT; t0=$SECONDS; cap=${CAP:-540}
left() { echo $((cap - (SECONDS - t0))); }
g=/tmp/gb; mkdir -p $g; tar -C $g -xJf $root/.deps/c6/bins.tar.xz
export LD_LIBRARY_PATH="$g/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
new=$g/gpubench-new; old=$g/gpubench-old
w=$o/work; mkdir -p $w
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,uuid,persistence_mode --format=csv
  nproc; date -u +%Y-%m-%dT%H:%M:%SZ; } > $w/machine.txt 2>&1
$new --version > $w/version.txt 2>&1; $old --version > $w/version-old.txt 2>&1
echo "unpacked at $((SECONDS-t0)) s"
( time timeout 90 $g/gpubench_gpu_tests ) > $w/gpu-tests.txt 2>&1
echo "gpu tests rc $? at $((SECONDS-t0)) s"; grep -E "^test cases|^assertions|FAILED" $w/gpu-tests.txt | head
c() { # name, timeout, args...
  local name=$1 t=$2; shift 2
  local s=$SECONDS
  timeout $t "$@" > $w/$name.txt 2>&1
  echo "$name rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
}
c check-default 120 $new check --output $w/check-default.json
c check-quick 60 $new check --quick --output $w/check-quick.json
s=$SECONDS
timeout 90 mpirun --allow-run-as-root --oversubscribe -np 1 $new check --quick --device 0 \
  --output $w/check-fleet.json : -np 1 -x GPUBENCH_TEST_SLOWDOWN=triad:0.05 $new check --quick \
  --device 0 > $w/check-fleet.txt 2>&1
echo "mpirun rc $? in $((SECONDS-s)) s" | tee -a $w/summary.txt
grep -E "outlier|^Fleet|gpu_turn" $w/check-fleet.txt | head -8
$new report $w/check-fleet.json --format prometheus > $w/check-fleet.prom 2>&1; echo "prom rc $?"
for i in 1 2 3 4 5 6 7 8; do
  (( $(left) > 330 )) || break
  c check-repeat-$i 60 $new check --output $w/check-repeat-$i.json
done
$new check --save-reference $w/reference.json --from $w/check-repeat-*.json > $w/save-reference.txt 2>&1
echo "save-reference rc $?"
c check-held-1 60 $new check --reference $w/reference.json --output $w/check-held-1.json
c check-held-2 60 $new check --reference $w/reference.json --output $w/check-held-2.json
c check-held-quick 60 $new check --quick --reference $w/reference.json --output $w/check-held-quick.json
GPUBENCH_TEST_SLOWDOWN=triad:0.05 c check-slow-hbm 60 $new check --quick --reference $w/reference.json --output $w/check-slow-hbm.json
grep -E "hbm_triad|^Fleet" $w/check-slow-hbm.txt | head -3
c roof-vecadd 60 $new vecadd --n 2^28 --output $w/roof-vecadd.json
c roof-stream 60 $new stream --n 2^28 --output $w/roof-stream.json
c gemm-default 90 $new gemm --output $w/gemm-default.json
c roof-roofline 60 $new roofline --dtype f32 --intensity 0.25,16,1024 --output $w/roof-roofline.json
grep -E "of roof|kernel" $w/roof-roofline.txt | head -8
if (( $(left) > 60 )); then
  timeout $(( $(left) - 12 )) scripts/figures-ab.sh "$old" "$new" $w/ab 3 > $w/ab.log 2>&1
  echo "ab rc $?"; tail -20 $w/ab.log
fi
tar -C $w -cJf $o/results.tar.xz . && echo "packed $(du -h $o/results.tar.xz | cut -f1)"
echo "total $((SECONDS-t0)) s"
