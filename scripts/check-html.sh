#!/bin/bash
# Renders the three HTML reports (a run, a comparison, a history) from tests/data in headless
# Chromium (Debian's `chromium`) and checks each page: the screenshot is not blank, the DOM has
# every chart the page was written with (one <svg> each), and the browser logged no console error.
# usage: scripts/check-html.sh BUILD_DIR   (BUILD_DIR/app/gpubench built; python3-matplotlib)
# Exit 0 all pass, 1 a check failed, 2 usage or a missing tool. docs/development.md.
set -euo pipefail
build=${1:?usage: scripts/check-html.sh BUILD_DIR}
source_dir=$(cd "$(dirname "$0")/.." && pwd)
gpubench=$build/app/gpubench
[[ -x $gpubench ]] || { echo "check-html: $gpubench is not built" >&2; exit 2; }
browser=$(command -v chromium || true)
if [[ -z $browser ]]; then
  echo "check-html: chromium not found: apt-get install chromium" >&2
  exit 2
fi
python=/usr/bin/python3
[[ -x $python ]] || python=python3
work=$(mktemp -d "${TMPDIR:-/tmp}/gpubench-check-html-XXXXXX")
trap 'rm -rf "$work"' EXIT
export GPUBENCH_PYTHON=$python

"$python" "$source_dir/tests/data/make_history.py" "$work/history" 8 --slow 5
"$gpubench" report "$source_dir/tests/data/synthetic-h200.json" --format html \
  --output "$work/run.html"
rc=0
"$gpubench" compare "$work/history/run-004.json" "$work/history/run-005.json" --format html \
  --output "$work/compare.html" || rc=$?
[[ $rc -le 1 ]] || { echo "check-html: compare exited $rc" >&2; exit 1; }
"$gpubench" report "$work"/history/run-*.json --format html --output "$work/history.html"

failed=0
for page in run compare history; do
  file=$work/$page.html
  expected=$(grep -o '<svg ' "$file" | wc -l)
  # --enable-logging=stderr --v=0 prints the page's console messages ("CONSOLE(...)") on stderr.
  flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run
         --user-data-dir="$work/profile-$page" --enable-logging=stderr --v=0)
  "$browser" "${flags[@]}" --dump-dom "file://$file" >"$work/$page.dom" 2>"$work/$page.log" || true
  "$browser" "${flags[@]}" --window-size=1280,2400 --screenshot="$work/$page.png" \
    "file://$file" >/dev/null 2>>"$work/$page.log" || true
  found=$(grep -o '<svg ' "$work/$page.dom" | wc -l || true)
  errors=$(grep -E 'CONSOLE|Uncaught|ERR_FILE_NOT_FOUND|net::ERR' "$work/$page.log" |
           grep -vi dbus || true)
  verdict=$("$python" - "$work/$page.png" <<'PY'
import sys
try:
    import matplotlib.image as image
except ImportError:
    print("no matplotlib to read the screenshot"); sys.exit()
try:
    pixels = image.imread(sys.argv[1])
except (OSError, ValueError, SyntaxError) as e:
    print(f"no screenshot ({e})"); sys.exit()
flat = pixels.reshape(-1, pixels.shape[-1])[:, :3]
share = float((flat.min(axis=1) < 0.9).mean())  # pixels that are not white
print("ok" if share > 0.02 else f"blank ({100 * share:.2f}% non-white pixels)")
PY
)
  status=ok
  [[ $expected -gt 0 && $found -eq $expected ]] || status="charts: $found of $expected in the DOM"
  [[ -z $errors ]] || status="console: $errors"
  [[ $verdict == ok ]] || status="screenshot: $verdict"
  printf '%-8s %8d bytes  %3d charts  %s\n' "$page" "$(stat -c %s "$file")" "$found" "$status"
  [[ $status == ok ]] || failed=1
done
exit $failed
