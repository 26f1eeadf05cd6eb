#!/usr/bin/env bash
# `fabricsim report DIR`: one self-contained HTML file for a run, a sweep or a what-if
# folder, opened in headless Chromium (Debian's chromium): it loads without console
# errors and its screenshot is not blank (issue 42, scope 8). Exit 77 (skipped) without
# chromium.
set -u
bin=$1; examples=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
examples=$(cd "$examples" && pwd)

# A collective run with its timeline in the folder, a flow workload, a sweep and a what-if.
"$bin" run "$examples/dgx_h100_2node_allreduce.yaml" --set workload.sizes.to=4MiB --trace "$work/coll/trace.json" --out "$work/coll" >/dev/null 2>&1
"$bin" report "$work/coll" >"$work/report.out" 2>&1; rc=$?
html="$work/coll/report.html"
check "report DIR writes DIR/report.html and says so" '[ $rc -eq 0 ] && [ -s "$html" ] && grep -q "wrote $html" "$work/report.out"'
check "the report is self-contained: no script, no stylesheet or image fetched" \
  '! grep -Eq "<script|<link |src=\"http|url\(http" "$html"'
check "it has the run's facts, the collective's rows and the busbw chart as inline SVG" \
  'grep -q "dgx_h100_2node_allreduce" "$html" && grep -q "<td>4 MiB</td>" "$html" && grep -q "busbw by size</text>" "$html" && [ "$(grep -o "<svg " "$html" | wc -l)" -ge 2 ]'
check "it links the timeline for Perfetto" 'grep -q "<a href=\"trace.json\">trace.json</a>" "$html" && grep -q "ui.perfetto.dev" "$html"'
"$bin" run "$examples/fat_tree_k8_websearch.yaml" --set workload.duration=100us --out "$work/flows" >/dev/null 2>&1
"$bin" report "$work/flows" >/dev/null 2>&1; rc=$?
check "a traffic workload's report shows FCT by flow size with the flow count per bucket" \
  '[ $rc -eq 0 ] && grep -q "FCT slowdown by flow size" "$work/flows/report.html" && grep -Eq ">n=[0-9]+</text>" "$work/flows/report.html"'
printf 'config: %s\ngrid:\n  network.mtu: [1KiB, 4KiB]\n' "$examples/dumbbell.yaml" >"$work/s.yaml"
"$bin" sweep "$work/s.yaml" --out "$work/sweep" >/dev/null 2>&1
"$bin" report "$work/sweep" >/dev/null 2>&1; rc=$?
check "a sweep folder's report has a row per variant" '[ $rc -eq 0 ] && grep -q "<td>mtu=1KiB</td>" "$work/sweep/report.html" && grep -q "<td>mtu=4KiB</td>" "$work/sweep/report.html"'
"$bin" whatif "$examples/whatif_leaf_spine.yaml" --set workload.bytes=1MiB --out "$work/whatif" >/dev/null 2>&1
"$bin" report "$work/whatif" --out "$work/whatif.html" >/dev/null 2>&1; rc=$?
check "a what-if folder's report lists its scenarios (--out FILE)" '[ $rc -eq 0 ] && grep -q "<td>spine0 down</td>" "$work/whatif.html"'
"$bin" report "$work" >"$work/none.out" 2>&1; rc=$?
check "a folder with no results exits 2 and says what it expected" '[ $rc -eq 2 ] && grep -q "expected a folder with results.json" "$work/none.out"'

chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
  echo "skip: no chromium (scripts/install-deps installs it) for the browser checks"
  [ $fail -eq 0 ] && exit 77
  exit $fail
fi
# Debian's python3 has python3-matplotlib (a pyenv or venv one first on PATH may not).
py=/usr/bin/python3; [ -x "$py" ] || py=python3
for page in "$html" "$work/flows/report.html"; do
  name=$(basename "$(dirname "$page")")
  timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 \
    --window-size=1100,1600 --screenshot="$work/$name.png" "file://$page" >"$work/$name.log" 2>&1
  check "Chromium loads the $name report without console errors" \
    '[ -s "$work/$name.png" ] && ! grep -Eiq "CONSOLE.*(error|uncaught)|Uncaught|Failed to load resource" "$work/$name.log"'
  check "the $name report's screenshot is not blank (several colours, over 2% of it not white)" "$py -c '
import sys
import matplotlib.image as im
px = im.imread(sys.argv[1])[:, :, :3]
inked = (px.sum(axis=2) < 2.9).mean()
colours = len({tuple((p * 255).astype(int)) for p in px.reshape(-1, 3)[::37]})
assert inked > 0.02 and colours > 20, (inked, colours)' '$work/$name.png'"
done
exit $fail
