#!/usr/bin/env bash
# Commands that agree (issue 42): sweep against stale results, collective's results.json
# read by compare and plot, compare saying what each run was, flags blamed for their values.
set -u
bin=$1; examples=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail=0
root=$(cd "$(dirname "$0")/.." && pwd)
examples=$(cd "$examples" && pwd)
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

# sweep: a variant's folder holds results of the config it ran; a spec that changes what
# the variant means (a new `set:` key) makes it run again.
printf 'config: %s\ngrid:\n  network.mtu: [1KiB, 4KiB]\n' "$examples/dumbbell.yaml" >"$work/s.yaml"
"$bin" sweep "$work/s.yaml" --out "$work/s" >"$work/s1.out" 2>&1; rc1=$?
"$bin" sweep "$work/s.yaml" --out "$work/s" >"$work/s2.out" 2>&1; rc2=$?
check "a sweep run twice reuses its variants" '[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && grep -q "2 variants: 0 run, 2 already done" "$work/s2.out"'
echo 'set: [network.queue_capacity=256KiB]' >>"$work/s.yaml"
"$bin" sweep "$work/s.yaml" --out "$work/s" >"$work/s3.out" 2>&1; rc=$?
check "a sweep whose set: changed reruns the variants whose config hash changed" \
  '[ $rc -eq 0 ] && grep -q "2 variants: 2 run (2 again: their config changed" "$work/s3.out" && grep -q "network.queue_capacity=256KiB" "$work/s/mtu=1KiB/results.json"'
# 16 MiB and 32 MiB over a 256 KiB queue on the 100G bottleneck: drops, where 64 MiB had none.
check "a sweep ends with a table: a row per variant with its key figures" \
  'grep -q "^  variant *exit *complete *sim_time_us" "$work/s3.out" && grep -Eq "^  mtu=1KiB +0 +1 +[0-9.]+" "$work/s3.out" && grep -Eq "^  mtu=4KiB +0 +1 " "$work/s3.out"'

# collective --out: the results.json that run writes, which compare and plot read.
two="$examples/dgx_h100_2node_allreduce.yaml"
"$bin" collective "$two" -b 1M -e 4M --out "$work/coll" >"$work/coll.out" 2>&1; rc=$?
check "collective --out DIR writes DIR/results.json with its rows (1, 2, 4 MiB) and says where" \
  '[ $rc -eq 0 ] && grep -q "results   $work/coll/results.json" "$work/coll.out" && [ "$(grep -c "\"size_bytes\":" "$work/coll/results.json")" -eq 3 ]'
"$bin" run "$two" --set workload.sizes.from=1MiB --set workload.sizes.to=4MiB \
  --set workload.protocol=auto --out "$work/run" >/dev/null 2>&1
busbws() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print([x["busbw_GBps"] for x in r["collective"]["rows"]])' "$1"; }
check "collective --out and run on the same settings write the same busbw at every size" \
  '[ "$(busbws "$work/coll/results.json")" = "$(busbws "$work/run/results.json")" ]'
"$bin" collective "$two" -b 1M -e 4M --json >"$work/rows.json" 2>/dev/null
"$bin" collective "$two" -b 1M -e 4M --set network.mtu=1KiB --out "$work/coll_mtu" >/dev/null 2>&1
"$bin" compare "$work/coll/results.json" "$work/coll_mtu/results.json" "$work/rows.json" >"$work/cmp.out" 2>&1; rc=$?
check "compare reads collective's results.json and its --json rows" '[ $rc -eq 0 ] && grep -q "^  busbw_GBps @ 2 MiB " "$work/cmp.out"'
check "compare labels its columns by run, not [0] [1]" \
  'grep -Eq "^  figure +coll +coll_mtu +ratio +rows +ratio" "$work/cmp.out" && ! grep -q "\[0\]" "$work/cmp.out"'
check "compare shows each run's config, fidelity and the overrides that set it apart" \
  'grep -q "config    dgx_h100_2node_allreduce   fidelity packet" "$work/cmp.out" && grep -q "overrides network.mtu=1KiB" "$work/cmp.out"'
check "compare gives every size of a collective, with ratios (the rows file equals the reference)" \
  '[ "$(grep -c "^  time_us @ " "$work/cmp.out")" -eq 3 ] && grep -Eq "^  busbw_GBps @ 4 MiB .* 1.000x$" "$work/cmp.out"'
"$bin" run "$examples/dumbbell.yaml" --out "$work/pkt" >/dev/null 2>&1
"$bin" run "$examples/dumbbell.yaml" --fidelity flow --out "$work/flow" >/dev/null 2>&1
"$bin" compare "$work/pkt/results.json" "$work/flow/results.json" >"$work/fid.out" 2>&1
check "compare tells a packet run from a flow run of the same config" \
  'grep -q "fidelity packet" "$work/fid.out" && grep -q "fidelity flow" "$work/fid.out" && grep -Eq "^  figure +pkt +flow" "$work/fid.out"'
if "$root/scripts/plot" busbw "$work/rows.json" "$work/coll/results.json" -o "$work/busbw.png" >"$work/plot.out" 2>&1; then
  check "scripts/plot busbw reads collective --json rows and collective --out results" '[ "$(head -c 4 "$work/busbw.png" | od -An -c | tr -d " ")" = "211PNG" ]'
else
  check "scripts/plot busbw reads collective output (needs python3-matplotlib)" 'grep -q "needs python3-matplotlib" "$work/plot.out"'
fi

# Plots that show what matters (scope 7): each draws, and the choices they offer work.
png() { [ "$(head -c 4 "$1" | od -An -c | tr -d " ")" = "211PNG" ]; }
if "$root/scripts/plot" util "$work/coll/results.json" -o "$work/util.png" >"$work/util.out" 2>&1; then
  "$bin" run "$examples/fat_tree_k8_websearch.yaml" --set workload.duration=100us --out "$work/ws" >/dev/null 2>&1
  "$root/scripts/plot" fct "$work/ws/results.json" -o "$work/fct.png" >/dev/null 2>&1; rc_fct=$?
  "$bin" run "$examples/pfc_ring_deadlock.yaml" --out "$work/pfc" --trace "$work/pfc/trace.json" --trace-interval 1us >/dev/null 2>&1
  "$root/scripts/plot" queues "$work/pfc/trace.json" --match 't0\.0\.0' -o "$work/q.png" >/dev/null 2>&1; rc_q=$?
  "$root/scripts/plot" queues "$work/pfc/trace.json" --match nothing-like-this -o "$work/q2.png" >"$work/q2.out" 2>&1; rc_q2=$?
  check "scripts/plot util, fct and queues --match draw" 'png "$work/util.png" && [ $rc_fct -eq 0 ] && png "$work/fct.png" && [ $rc_q -eq 0 ] && png "$work/q.png"'
  check "scripts/plot queues --match with no link matching says how links are named" \
    '[ $rc_q2 -ne 0 ] && grep -q "no link in .* matches --match nothing-like-this; its links are named like" "$work/q2.out"'
else
  check "scripts/plot (needs python3-matplotlib)" 'grep -q "needs python3-matplotlib" "$work/util.out"'
fi

# --trace on a message workload: a slice per message with its bytes and ends, and a flow
# arrow from its sending to its arrival (scope 7).
"$bin" run "$examples/dumbbell.yaml" --trace "$work/db/trace.json" --out "$work/db" >/dev/null 2>&1
check "a message workload's timeline has per-message slices with args and flow arrows (16 MiB a -> c)" \
  'python3 "$root/tests/check_chrome_trace.py" "$work/db/trace.json" --expect-kinds "messages sent,messages received" | grep -q ", 2 flow arrows" && grep -q "\"name\":\"message 0 to c\",\"args\":{\"message\":0,\"bytes\":16777216,\"source\":\"a\",\"destination\":\"c\"" "$work/db/trace.json"'

"$bin" collective "$two" -b 1M -e 1M --algo ring --trace "$work/ct.json" >/dev/null 2>&1
check "a collective's step slices carry args: bytes, peer rank, step and channel" \
  'grep -Eq "\"name\":\"send to rank [0-9]+ ch[0-9]+ [0-9]+ B\",\"args\":\{\"bytes\":[0-9]+,\"peer_rank\":[0-9]+,\"step\":[0-9]+,\"channel\":[0-9]+\}" "$work/ct.json"'

# A flag's value is the flag's: an error found while building the run blames it too.
"$bin" collective "$examples/dumbbell.yaml" --ranks 32 -e 1M >"$work/ranks.out" 2>&1; rc=$?
check "collective --ranks 32 on 4 hosts blames --ranks, not workload.ranks in the config" \
  '[ $rc -eq 2 ] && grep -q "^fabricsim collective: --ranks 32: error: expected at most 4 ranks" "$work/ranks.out" && ! grep -q "dumbbell.yaml" "$work/ranks.out"'

# validate says what will run: the oversubscription per tier (the leaf-spine sweep config's
# own comment: 800 Gb/s per leaf up against 3.2 Tb/s of NICs, 4:1) and the ECN settings.
"$bin" validate "$examples/sweeps/dgx_h100_2node_leaf_spine.yaml" >"$work/val.out" 2>&1; rc=$?
check "validate prints the oversubscription per tier (leaf 4:1 on the 2-node leaf-spine)" \
  '[ $rc -eq 0 ] && grep -q "^  oversubscription .*leaf 4.00:1 (2 switches)" "$work/val.out"'
"$bin" validate "$examples/dumbbell.yaml" --set 'network.ecn={kmin: 10KB}' >"$work/ecn.out" 2>&1; rc=$?
check "validate prints the ECN marking thresholds when ECN is on" '[ $rc -eq 0 ] && grep -q "ECN on (marking from 10000 B to 200000 B queued" "$work/ecn.out"'

exit $fail
