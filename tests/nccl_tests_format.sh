#!/usr/bin/env bash
# `fabricsim collective` prints nccl-tests' table: the same header lines, columns ending
# where a real all_reduce_perf output's end, per-rank counts as nccl-tests computes them,
# and its footer (issue 42, scope 4).
set -u
bin=$1; examples=$2
here=$(cd "$(dirname "$0")" && pwd)
real="$here/nccl_tests/all_reduce_perf_4x_rtx4090.txt"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
two="$examples/dgx_h100_2node_allreduce.yaml"

"$bin" collective "$two" -b 1M -e 4M --check >"$work/ar.txt" 2>&1; rc=$?
check "collective runs (all_reduce 1 to 4 MiB, data checked)" '[ $rc -eq 0 ]'
# The header: nccl-tests' three lines, byte for byte.
check "the three header lines are nccl-tests' own" \
  'diff <(grep -A2 "out-of-place" "$real") <(grep -A2 "out-of-place" "$work/ar.txt") >/dev/null'
# The rows: every column ends at the column where the real output's ends.
ends() { python3 -c '
import re, sys
for line in open(sys.argv[1]):
    if line.strip() and not line.startswith("#"):
        print(" ".join(str(m.end()) for m in re.finditer(r"\S+", line.rstrip("\n"))))' "$1" | sort -u; }
check "every row's 13 columns end where a real all_reduce_perf row's do" \
  '[ "$(ends "$real")" = "$(ends "$work/ar.txt")" ] && [ "$(ends "$work/ar.txt" | wc -w)" -eq 13 ]'
check "counts are elements (floats): 1 MiB of all_reduce is 262144" 'grep -Eq "^ +1048576 +262144 +float +sum +-1 " "$work/ar.txt"'
check "the footer is nccl-tests': out of bounds values, then the average bus bandwidth" \
  'grep -q "^# Out of bounds values : 0 OK$" "$work/ar.txt" && grep -Eq "^# Avg bus bandwidth    : [0-9.e+-]+ $" "$work/ar.txt"'
# The average is over every printed busbw, out-of-place and in-place (nccl-tests' bw[0]).
check "the average bus bandwidth is the mean of the busbw columns" 'python3 -c "
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith(\"#\")]
bw = [float(r[7]) for r in rows] + [float(r[11]) for r in rows]
avg = [float(l.split(\":\")[1]) for l in open(sys.argv[1]) if l.startswith(\"# Avg bus bandwidth\")][0]
assert abs(avg - sum(bw) / len(bw)) < 0.01, (avg, bw)" "$work/ar.txt"'

# Per-rank counts (nccl-tests' GetCollByteCount): the split operations print what one rank
# sends or receives: 1 MiB / 4 B / 8 ranks = 32768.
for op in all_gather reduce_scatter all_to_all; do
  "$bin" collective "$two" --op $op --algo auto --ranks 8 -b 1M -e 1M >"$work/$op.txt" 2>&1
  redop=none; [ $op = reduce_scatter ] && redop=sum
  check "$op at 1 MiB on 8 ranks prints count 32768 (per rank), redop $redop" "grep -Eq '^ +1048576 +32768 +float +$redop +-1 ' '$work/$op.txt'"
done
"$bin" collective "$two" --op broadcast --ranks 8 -b 1M -e 1M >"$work/bc.txt" 2>&1
check "broadcast prints its root (0) and count 262144" 'grep -Eq "^ +1048576 +262144 +float +none +0 " "$work/bc.txt"'
"$bin" collective "$two" -b 1M -e 1M >"$work/nocheck.txt" 2>&1
check "without --check, #wrong is N/A, as nccl-tests -c 0 prints it" 'grep -Eq "^ +1048576 .* N/A .* N/A$" "$work/nocheck.txt"'

# What nccl-tests parsers read, ours reads back: the log importer fits our own table.
"$bin" calibrate import --nccl-tests "$work/ar.txt" --ranks 16 --out "$work/fit.yaml" >"$work/import.out" 2>&1; rc=$?
check "calibrate import reads the table back as an nccl-tests log (3 sizes)" '[ $rc -eq 0 ] && grep -q "all_reduce, 16 ranks, 3 sizes" "$work/import.out"'
exit $fail
