#!/usr/bin/env bash
# Before/after check for a change to GPU code or the measurement engine: runs the benchmarks whose
# figures docs/results records with an old and a new binary, alternating, ROUNDS times each, and
# prints one table of medians (scripts/doc_tables.py render ab). Both binaries run on the same GPU in the
# same call, so drift in clocks or temperature falls on both.
#
#   scripts/figures-ab.sh OLD_BIN NEW_BIN OUT_DIR [ROUNDS]
#
# AB_EXTRA adds cases, one "name|arguments" a line, for paths the recorded figures do not cover
# (a generic kernel, a small size).
set -uo pipefail
old=${1:?usage: scripts/figures-ab.sh OLD_BIN NEW_BIN OUT_DIR [ROUNDS]}
new=${2:?}
out=${3:?}
rounds=${4:-3}
mkdir -p "$out"
# name | arguments: the figures README and docs/results quote.
cases=(
  "vecadd-2p28|vecadd --n 2^28"
  "vecadd-10M|vecadd --n 10M"
  "augment|augment --batch 32,256 --impl all"
  "pipeline|pipeline --batch 32"
)
# AB_ONLY=1: only the AB_EXTRA cases.
[[ ${AB_ONLY:-0} == 1 ]] && cases=()
while IFS= read -r line; do [[ -n $line ]] && cases+=("$line"); done <<<"${AB_EXTRA:-}"
for ((r = 1; r <= rounds; ++r)); do
  for c in "${cases[@]}"; do
    name=${c%%|*}
    read -r -a args <<<"${c#*|}"
    for side in old new; do
      bin=$old
      [[ $side == new ]] && bin=$new
      "$bin" "${args[@]}" -q --output "$out/$name-$side-$r.json" >/dev/null 2>>"$out/ab.err" ||
        echo "$side $name round $r: exit $?" | tee -a "$out/ab.err"
    done
  done
done
python3 "$(dirname "$0")/doc_tables.py" render ab "$out" | tee "$out/ab-table.md"
