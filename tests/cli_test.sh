#!/usr/bin/env bash
# The fabricsim command end to end: exit codes, error lines, results written whole or
# not at all, determinism across runs.
set -u
bin=$1; test_configs=$2; examples=$3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail=0
bin_abs=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
examples_abs=$(cd "$examples" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

"$bin" --help >"$work/help" 2>&1; rc=$?
check "--help exits 0 and shows usage" '[ $rc -eq 0 ] && grep -q "usage: fabricsim run" "$work/help"'
"$bin" --version >"$work/version"; rc=$?
check "--version prints the version" '[ $rc -eq 0 ] && grep -Eq "^fabricsim [0-9]+\.[0-9]+\.[0-9]+$" "$work/version"'

for cmd in run validate topo collective workload scale sweep compare whatif calibrate; do
  "$bin" $cmd --help >"$work/help_$cmd" 2>&1; rc=$?
  check "fabricsim $cmd --help prints its own usage and options" \
    '[ $rc -eq 0 ] && grep -q "^usage: fabricsim $cmd" "$work/help_$cmd" && grep -q "^fabricsim $cmd options:" "$work/help_$cmd"'
done
check "run --help lists --trace and not collective's --op" 'grep -q -- "--trace FILE" "$work/help_run" && ! grep -q -- "--op" "$work/help_run"'
"$bin" run "$examples/dumbbell.yaml" --op all_reduce --out "$work/wrongopt" >"$work/wrongopt.out" 2>&1; rc=$?
check "an option of another command exits 2 naming it, and runs nothing" \
  '[ $rc -eq 2 ] && grep -q "^fabricsim run: unrecognised option .--op." "$work/wrongopt.out" && [ ! -e "$work/wrongopt" ]'

"$bin" run --set workload.sizes.to=2MiB --out "$work/default" >"$work/run.out" 2>&1; rc=$?
check "run with no config runs the default scenario (a collective sweep)" \
  '[ $rc -eq 0 ] && grep -q "collective all_reduce (ring) over 16 ranks" "$work/run.out" && grep -q "2097152 " "$work/run.out" && [ -s "$work/default/results.json" ]'

"$bin" run --set workload.sizes.to=2MiB --out "$work/again" >/dev/null 2>&1
check "two runs give identical results except wall_seconds" \
  'diff <(grep -v wall_seconds "$work/default/results.json") <(grep -v wall_seconds "$work/again/results.json") >/dev/null'

"$bin" run "$test_configs/bad/mtu_zero.yaml" --out "$work/bad" >"$work/bad.out" 2>&1; rc=$?
check "a bad config exits 2 with file:line:col: error: key" \
  '[ $rc -eq 2 ] && grep -q "mtu_zero.yaml:10:8: error: network.mtu: expected" "$work/bad.out"'
check "a bad config writes no output" '[ ! -e "$work/bad" ]'

"$bin" run "$test_configs/good/two_hosts_one_switch.yaml" --out "$work/set" --set network.mtu=0 >"$work/set.out" 2>&1; rc=$?
check "--set errors exit 2 and name the option" '[ $rc -eq 2 ] && grep -q "^--set network.mtu=0: error: network.mtu" "$work/set.out"'

"$bin" run "$test_configs/good/two_hosts_one_switch.yaml" --out "$work/seeded" --seed 42 >/dev/null 2>&1; rc=$?
check "--seed is recorded" '[ $rc -eq 0 ] && grep -q "\"seed\": 42" "$work/seeded/results.json"'

"$bin" validate "$test_configs/good/two_hosts_one_switch.yaml" >"$work/val.out" 2>&1; rc=$?
check "validate accepts a good config" '[ $rc -eq 0 ] && grep -q "ok" "$work/val.out"'
"$bin" validate "$test_configs/bad/message_unknown_host.yaml" >"$work/val2.out" 2>&1; rc=$?
check "validate rejects a bad one with exit 2" '[ $rc -eq 2 ] && grep -q "messages\[1\].dst" "$work/val2.out"'

"$bin" run "$examples/pfc_ring_deadlock.yaml" --out "$work/dl" >"$work/dl.out" 2>&1; rc=$?
check "a PFC deadlock exits 3, prints the cycle and marks the results" \
  '[ $rc -eq 3 ] && grep -q "DEADLOCK .* cycle: t" "$work/dl.out" && grep -q "\"deadlock\": true" "$work/dl/results.json" && grep -q "\"complete\": false" "$work/dl/results.json"'

"$bin" workload gen --model "$test_configs/../models/tiny.yaml" --gpu "$examples/gpus/h100.yaml" --tp 2 --pp 2 --microbatches 2 -o "$work/tiny.jsonl" >"$work/gen.out" 2>&1; rc=$?
check "workload gen writes a trace" '[ $rc -eq 0 ] && head -1 "$work/tiny.jsonl" | grep -q "\"fabricsim_trace\": 1, \"ranks\": 4"'
printf 'workload: {kind: trace, file: %s}\n' "$work/tiny.jsonl" | cat "$test_configs/good/four_hosts.yaml" - > "$work/replay.yaml"
"$bin" run "$work/replay.yaml" --out "$work/replay" >"$work/replay.out" 2>&1; rc=$?
check "a generated trace replays and reports the iteration" '[ $rc -eq 0 ] && grep -q "training  4 ranks, iteration" "$work/replay.out" && grep -q "\"iteration_time_us\"" "$work/replay/results.json"'
"$bin" scale "$test_configs/good/four_hosts.yaml" --model "$test_configs/../models/tiny.yaml" --gpu "$examples/gpus/h100.yaml" --tp 1 --pp 1 --microbatches 2 --dp-list 1,2,4 >"$work/scale.out" 2>&1; rc=$?
check "scale prints one row per data-parallel size, the first at 100%" '[ $rc -eq 0 ] && [ $(grep -cE "^ +[0-9]+ +[0-9]+ " "$work/scale.out") -eq 3 ] && grep -qE "^ +1 +1 .* 100.0%$" "$work/scale.out"'

"$bin" frobnicate >/dev/null 2>&1; rc=$?
check "an unknown command exits 2" '[ $rc -eq 2 ]'

"$bin" topo "$examples/fat_tree_k8.yaml" --json --dot "$work/ft.dot" >"$work/topo.json" 2>&1; rc=$?
# k=8: 128 hosts, 80 switches, 384 links, 6 hops, 64 x 100G across the middle.
check "topo --json reports the k=8 fat-tree by hand count" \
  '[ $rc -eq 0 ] && grep -q "\"endpoints\": 128" "$work/topo.json" && grep -q "\"switches\": 80" "$work/topo.json" && grep -q "\"links\": 384" "$work/topo.json" && grep -q "\"diameter_hops\": 6" "$work/topo.json" && grep -q "\"bisection_bandwidth_gbps\": 6400" "$work/topo.json"'
check "topo --dot writes a Graphviz graph" '[ -s "$work/ft.dot" ] && head -1 "$work/ft.dot" | grep -q "^graph fabric" && [ $(grep -c -- " -- " "$work/ft.dot") -eq 384 ]'
"$bin" topo "$test_configs/bad/fat_tree_k_odd.yaml" >"$work/topo_bad.out" 2>&1; rc=$?
check "topo on a bad config exits 2" '[ $rc -eq 2 ] && grep -q "topology.k: expected an even integer" "$work/topo_bad.out"'

# Calibration import: a profile on success, exit 2 with the log's line otherwise, and
# nothing written then.
cal="$test_configs/../calibration"
"$bin" calibrate import --nccl-tests "$cal/synthetic_allreduce_8gpu.log" --perftest "$cal/perftest_write_bw.log" \
  --out "$work/profile.yaml" >"$work/cal.out" 2>&1; rc=$?
check "calibrate import writes a profile and prints the fit with residuals" \
  '[ $rc -eq 0 ] && grep -q "^nvlink: {bandwidth: " "$work/profile.yaml" && grep -q "^nic: {bandwidth: " "$work/profile.yaml" && grep -q "fit  time = " "$work/cal.out" && grep -qE "^  4294967296 .*%$" "$work/cal.out"'
printf '# size count type redop root time algbw busbw\n1048576 262144 float sum -1 31.99\n' >"$work/broken.log"
"$bin" calibrate import --nccl-tests "$work/broken.log" --ranks 8 --out "$work/broken_profile.yaml" >"$work/calbad.out" 2>&1; rc=$?
check "calibrate import on a malformed log exits 2 naming the line, writing nothing" \
  '[ $rc -eq 2 ] && grep -q "broken.log:2: expected at least 8 columns, got 6" "$work/calbad.out" && [ ! -e "$work/broken_profile.yaml" ]'
"$bin" calibrate import --nccl-tests "$cal/h100-1node-nvls-allreduce.txt" --out "$work/noranks.yaml" >"$work/noranks.out" 2>&1; rc=$?
check "calibrate import asks for --ranks when the log does not say" '[ $rc -eq 2 ] && grep -q "pass --ranks N" "$work/noranks.out" && [ ! -e "$work/noranks.yaml" ]'

# The probes without hardware: one line, exit 5, nothing written. CUDA_VISIBLE_DEVICES=""
# hides any GPU, and a device name that cannot exist hides any RDMA NIC.
CUDA_VISIBLE_DEVICES="" "$bin" calibrate gpu --out "$work/gpu_profile.yaml" >"$work/gpu.out" 2>"$work/gpu.err"; rc=$?
check "calibrate gpu without a GPU says so in one line, exits 3, writes nothing" \
  '[ $rc -eq 5 ] && [ $(wc -l <"$work/gpu.err") -eq 1 ] && grep -qE "^fabricsim calibrate gpu: no (CUDA device|CUDA support)" "$work/gpu.err" && [ ! -s "$work/gpu.out" ] && [ ! -e "$work/gpu_profile.yaml" ]'
"$bin" calibrate nic --client localhost --device fabricsim-no-such-device --out "$work/nic_profile.yaml" >"$work/nic.out" 2>"$work/nic.err"; rc=$?
check "calibrate nic without that RDMA device says so in one line, exits 3, writes nothing" \
  '[ $rc -eq 5 ] && [ $(wc -l <"$work/nic.err") -eq 1 ] && grep -q "^fabricsim calibrate nic: no RDMA device" "$work/nic.err" && [ ! -e "$work/nic_profile.yaml" ]'
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
  "$bin" calibrate nic --server --out "$work/nic_profile.yaml" >"$work/nic2.out" 2>"$work/nic2.err"; rc=$?
  check "calibrate nic --server on a host without RDMA devices exits 3 before listening" \
    '[ $rc -eq 5 ] && [ $(wc -l <"$work/nic2.err") -eq 1 ] && grep -q "libibverbs found none" "$work/nic2.err"'
fi
"$bin" calibrate nic --device x >/dev/null 2>&1; rc=$?
check "calibrate nic needs --server or --client (exit 2)" '[ $rc -eq 2 ]'

# The simulator itself loads neither CUDA nor verbs: the probes are their own executables.
check "fabricsim links no CUDA, cuBLAS, verbs or MPI library" '! ldd "$bin" | grep -Eq "libcublas|libcudart|libcuda\.|libibverbs|libmpi"'
check "the probes sit beside it" '[ -x "$(dirname "$bin")/fabricsim-probe-gpu" ] && [ -x "$(dirname "$bin")/fabricsim-probe-nic" ]'

# Misspellings get the name meant: an option, and a config file's extension.
"$bin" run "$examples/dumbbell.yaml" --output "$work/x" >"$work/dym.out" 2>&1; rc=$?
check "--output is refused (exit 2) with: did you mean --out?" '[ $rc -eq 2 ] && grep -q "did you mean --out?" "$work/dym.out"'
"$bin" validate "$examples/dumbbell.yml" >"$work/dym2.out" 2>&1; rc=$?
check "dumbbell.yml is refused (exit 2) naming dumbbell.yaml" '[ $rc -eq 2 ] && grep -q "cannot read the file; did you mean .*dumbbell.yaml" "$work/dym2.out"'

# Memory known before it is spent: printed by validate, and a run that cannot fit is refused.
"$bin" validate "$examples/scale/fat_tree_k8_permutation.yaml" >"$work/mem.out" 2>&1; rc=$?
check "validate prints the memory estimate" '[ $rc -eq 0 ] && grep -q "memory estimate .* GiB" "$work/mem.out"'
# A permutation of 128 hosts: one message from each, made before the run; its config turns PFC on (class 0).
check "validate counts a workload's messages" 'grep -q "128 messages made before the run" "$work/mem.out" && grep -q "lossless    PFC on classes 0;" "$work/mem.out"'
"$bin" validate "$examples/scale/fat_tree_k64_permutation.yaml" --memory-limit 1GiB >"$work/mem2.out" 2>&1; rc=$?
check "a 65,536-host fabric over --memory-limit 1GiB is refused with the estimate (exit 2)" \
  '[ $rc -eq 2 ] && grep -q "fat_tree_k64_permutation.yaml:.*topology: this run needs about .* GiB" "$work/mem2.out"'
# A ring over 1,024 GPUs at flow fidelity step by step is 2 x 1,023 steps of 1,024 sends a
# channel; coupled, a flow a channel: the refusal says so, with the coupled run's estimate.
"$bin" validate "$examples/scale/dgx_h100_2048node_allreduce.yaml" --set topology.nodes=128 --set network.fidelity=flow \
  --set network.flow_rings=steps --set workload.algorithm=ring --set workload.sizes.from=256MiB --set workload.sizes.to=256MiB --memory-limit 2GiB \
  >"$work/mem3.out" 2>&1; rc=$?
check "a step-by-step flow ring over --memory-limit is refused naming network.flow_rings: coupled (exit 2)" \
  '[ $rc -eq 2 ] && grep -q "with network.flow_rings: coupled, a ring as one flow per channel, about .* GiB" "$work/mem3.out"'
# By default a ring at flow fidelity is a flow per channel: 16,384 GPUs' 256 MiB ring fits in 1 GiB.
"$bin" validate "$examples/scale/dgx_h100_2048node_allreduce.yaml" --set network.fidelity=flow \
  --set workload.algorithm=ring --set workload.sizes.from=256MiB --set workload.sizes.to=256MiB --memory-limit 1GiB \
  >"$work/mem4.out" 2>&1; rc=$?
check "a ring over 16,384 GPUs at flow fidelity runs coupled by default, within --memory-limit 1GiB" '[ $rc -eq 0 ]'
"$bin" validate "$examples/scale/fat_tree_k8_permutation.yaml" --memory-limit lots >/dev/null 2>&1; rc=$?
check "--memory-limit that is not a size is exit 2" '[ $rc -eq 2 ]'

# Per-message records only on request, streamed to their own file.
"$bin" run "$test_configs/good/two_hosts_one_switch.yaml" --out "$work/rec" --records messages >/dev/null 2>&1; rc=$?
check "run --records messages writes one JSON line per message beside results.json" \
  '[ $rc -eq 0 ] && [ -s "$work/rec/messages.jsonl" ] && ! grep -q "\"start_ps\"" "$work/rec/results.json" && [ "$(wc -l <"$work/rec/messages.jsonl")" -eq "$(grep -c "src:" "$test_configs/good/two_hosts_one_switch.yaml")" ]'

# The 70B example replays a generated trace (not shipped): make it as its header says.
"$bin" workload gen --model "$examples/models/llama_70b.yaml" --tp 8 --pp 4 --dp 4 --microbatches 8 \
  --gpu "$examples/gpus/h100.yaml" -o "$work/llama70b.jsonl" >/dev/null 2>&1
for f in "$examples"/*.yaml; do
  extra=()
  [ "$(basename "$f")" = dgx_h100_16node_llama70b.yaml ] && extra=(--set "workload.file=$work/llama70b.jsonl")
  "$bin" validate "$f" "${extra[@]}" >/dev/null 2>&1; rc=$?
  check "example $(basename "$f") validates" '[ $rc -eq 0 ]'
done

# The collective command: the config's channels hold unless --channels says otherwise (8
# rings over 8 NICs are 8x one ring's busbw), and under the default `auto` each row says
# what NCCL would run: on 2 x DGX H100 with NVLS, NVLS-tree.
cat >"$work/two_dgx.yaml" <<'YAML'
name: two_dgx
topology:
  kind: cluster
  nodes: 2
  node: {preset: dgx_h100}
  nics_per_node: 8
  nic: {bandwidth: 400Gbps, latency: 500ns, kind: infiniband}
  fabric: {kind: rail_optimized, spines: 2, fabric_link: {bandwidth: 400Gbps, latency: 500ns}}
network: {mtu: 64KiB}
workload: {kind: collective, op: all_reduce, algorithm: ring, channels: 8, bytes: 1MiB}
YAML
"$bin" collective "$work/two_dgx.yaml" -b 256M -e 256M --json >"$work/coll8.json" 2>&1; rc8=$?
"$bin" collective "$work/two_dgx.yaml" -b 256M -e 256M --channels 1 --json >"$work/coll1.json" 2>&1; rc1=$?
busbw() { grep -o '"busbw_GBps": *[0-9.]*' "$1" | grep -o '[0-9.]*$'; }
check "collective keeps the config's channels (8 rings: busbw over 7x one ring's)" \
  '[ $rc8 -eq 0 ] && [ $rc1 -eq 0 ] && awk -v a="$(busbw "$work/coll8.json")" -v b="$(busbw "$work/coll1.json")" "BEGIN { exit !(a > 7 * b) }"'
sed -i '/^workload:/d' "$work/two_dgx.yaml"
"$bin" collective "$work/two_dgx.yaml" -b 1G -e 1G >"$work/auto.out" 2>&1; rc=$?
check "collective --algo auto (the default) picks NVLS-tree on 2 x DGX H100 and says so, with the protocol" \
  '[ $rc -eq 0 ] && grep -q "algo      proto" "$work/auto.out" && grep -q "NVLSTree  Simple" "$work/auto.out"'
"$bin" collective "$work/two_dgx.yaml" -b 1M -e 1M --algo ring --proto LL >"$work/proto.out" 2>&1; rc=$?
check "collective --algo ring --proto LL runs NCCL's LL protocol and says so" '[ $rc -eq 0 ] && grep -q "Ring      LL  " "$work/proto.out"'
"$bin" collective "$work/two_dgx.yaml" -b 1M -e 1M --proto LL64 >"$work/proto.out" 2>&1; rc=$?
check "collective --proto LL64 is refused, exit 2" '[ $rc -eq 2 ] && grep -q "expected auto, simple, ll, ll128 or none" "$work/proto.out"'
# A --set of a workload key holds on a config without a workload, as its flag does.
"$bin" collective "$work/two_dgx.yaml" -b 256M -e 256M --algo ring --set workload.channels=1 --json >"$work/set1.json" 2>&1; rc=$?
"$bin" collective "$work/two_dgx.yaml" -b 256M -e 256M --algo ring --channels 1 --json >"$work/flag1.json" 2>&1; rc1=$?
"$bin" collective "$work/two_dgx.yaml" -b 256M -e 256M --algo ring --json >"$work/nccl8.json" 2>&1; rc8=$?
check "collective --set workload.channels=1 runs one channel, as --channels 1 does (NCCL's default: 8 times faster)" \
  '[ $rc -eq 0 ] && [ $rc1 -eq 0 ] && [ $rc8 -eq 0 ] && [ "$(busbw "$work/set1.json")" = "$(busbw "$work/flag1.json")" ] && awk -v a="$(busbw "$work/nccl8.json")" -v b="$(busbw "$work/set1.json")" "BEGIN { exit !(a > 7 * b) }"'

# Split runs: the same results.json but for wall times and the parallel section, and
# the same messages.jsonl; validate shows the split and warns of a tiny lookahead.
"$bin" run "$examples/dumbbell.yaml" --out "$work/serial" --records messages >/dev/null 2>&1; rc0=$?
"$bin" run "$examples/dumbbell.yaml" --out "$work/split" --records messages --threads 2 >/dev/null 2>&1; rc2=$?
strip() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); [d.pop(k, None) for k in ('wall_seconds','setup_wall_seconds','parallel')]; print(json.dumps(d))" "$1"; }
check "run --threads 2 writes the serial run's results (and records), with a parallel section" \
  '[ $rc0 -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(strip "$work/serial/results.json")" = "$(strip "$work/split/results.json")" ] && cmp -s "$work/serial/messages.jsonl" "$work/split/messages.jsonl" && grep -q "\"partitions\": 2" "$work/split/results.json"'
# collective --threads 2: two DGX nodes split at the network, the same rows as one queue.
"$bin" collective "$examples/dgx_h100_2node_allreduce.yaml" --op all_reduce --algo auto -b 1M -e 4M --json >"$work/coll_one.json" 2>/dev/null; rc0=$?
"$bin" collective "$examples/dgx_h100_2node_allreduce.yaml" --op all_reduce --algo auto -b 1M -e 4M --json --threads 2 --out "$work/coll_two" >"$work/coll_two.json" 2>/dev/null; rc2=$?
check "collective --threads 2 prints the one-queue rows and splits the run in two" \
  '[ $rc0 -eq 0 ] && [ $rc2 -eq 0 ] && [ -s "$work/coll_one.json" ] && cmp -s "$work/coll_one.json" "$work/coll_two.json" && grep -q "\"partitions\": 2" "$work/coll_two/results.json"'
# A packet-level run of 128 hosts (two partitions of 64) splits itself unasked over the
# cores it may use (FABRICSIM_CORES here), with the one-queue run's results;
# FABRICSIM_CORES=1 keeps one queue.
k8="$examples/scale/fat_tree_k8_permutation.yaml"
FABRICSIM_CORES=1 "$bin" run "$k8" --set workload.bytes=64000 --out "$work/k8_one" >/dev/null 2>&1; rc0=$?
FABRICSIM_CORES=4 "$bin" run "$k8" --set workload.bytes=64000 --out "$work/k8_two" >"$work/k8_two.out" 2>&1; rc2=$?
check "run on 128 hosts splits itself unasked into 2 (FABRICSIM_CORES=4, 64 hosts a partition) and writes the one-queue run's results" \
  '[ $rc0 -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(strip "$work/k8_one/results.json")" = "$(strip "$work/k8_two/results.json")" ] && grep -q "\"partitions\": 2" "$work/k8_two/results.json" && grep -q "on 2 threads" "$work/k8_two.out" && ! grep -q "\"parallel\"" "$work/k8_one/results.json"'
cat >"$work/tiny.yaml" <<'YAML'
topology:
  kind: custom
  hosts: [a, b]
  switches: [s]
  links:
    - {a: a, b: s, bandwidth: 100Gbps, latency: 1ns}
    - {a: s, b: b, bandwidth: 100Gbps, latency: 1ns}
messages:
  - {src: a, dst: b, bytes: 1MiB}
YAML
"$bin" validate "$work/tiny.yaml" --threads 2 >"$work/tiny.out" 2>&1; rc=$?
check "validate --threads 2 shows the split and warns of a 1 ns lookahead" \
  '[ $rc -eq 0 ] && grep -q "split       2 partitions" "$work/tiny.out" && grep -q "warning     the lookahead is tiny" "$work/tiny.out"'
{ cat "$work/two_dgx.yaml"; echo "workload: {kind: collective, op: all_reduce, bytes: 1MiB}"; } >"$work/two_dgx_coll.yaml"
"$bin" run "$work/two_dgx_coll.yaml" --threads 2 --out "$work/coll_split" >"$work/coll_split.out" 2>&1; rc=$?
check "run --threads with a data-checked collective checks its data" '[ $rc -eq 0 ] && grep -q "\"data_check\": \"passed\"" "$work/coll_split/results.json"'
{ cat "$work/two_dgx.yaml"; echo "workload: {kind: collective, op: all_reduce, algorithm: ring, channels: 8, check_data: false, sizes: {from: 1MiB, to: 4MiB}}"; } >"$work/two_dgx_sweep.yaml"
"$bin" run "$work/two_dgx_sweep.yaml" --out "$work/sweep1" >/dev/null 2>&1; rc1=$?
"$bin" run "$work/two_dgx_sweep.yaml" --threads 2 --out "$work/sweep2" >/dev/null 2>&1; rc2=$?
check "run --threads 2 with a collective sweep: the serial run's results.json" \
  '[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(strip "$work/sweep1/results.json")" = "$(strip "$work/sweep2/results.json")" ] && grep -q "\"partitions\": 2" "$work/sweep2/results.json"'
# One model everywhere: run and collective on the same config give the same busbw at
# every size (both run NCCL's model by default), and say which model ran.
"$bin" collective "$work/two_dgx_sweep.yaml" -b 1M -e 4M --json >"$work/sweep_coll.json" 2>&1; rc=$?
busbws() { grep -o '"busbw_GBps": *[0-9.eE+-]*' "$1" | grep -o '[0-9.eE+-]*$' | tr '\n' ' '; }
check "run and collective give the same busbw at every size on the same config (ring)" \
  '[ $rc -eq 0 ] && [ -n "$(busbws "$work/sweep1/results.json")" ] && [ "$(busbws "$work/sweep1/results.json")" = "$(busbws "$work/sweep_coll.json")" ]'
check "results.json names the model that ran and NCCL's own prediction per row" \
  'grep -q "\"model\": \"NCCL 2.28 tuning rules, protocol auto\"" "$work/sweep1/results.json" && grep -q "\"nccl_model_us\": [0-9]" "$work/sweep1/results.json"'
{ cat "$work/two_dgx.yaml"; echo "workload: {kind: collective, op: all_reduce, algorithm: auto, check_data: false, sizes: {from: 1MiB, to: 4MiB}}"; } >"$work/two_dgx_auto.yaml"
"$bin" run "$work/two_dgx_auto.yaml" --out "$work/auto_run" >/dev/null 2>&1; rc1=$?
"$bin" collective "$work/two_dgx_auto.yaml" -b 1M -e 4M --json >"$work/auto_coll.json" 2>&1; rc2=$?
check "run and collective give the same busbw at every size on the same config (auto)" \
  '[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(busbws "$work/auto_run/results.json")" = "$(busbws "$work/auto_coll.json")" ]'
"$bin" collective "$work/two_dgx_auto.yaml" -b 1M -e 1M --nccl-version 2.21.5 >"$work/v221.out" 2>&1; rc=$?
check "collective --nccl-version 2.21.5 runs 2.21's rules and says so" '[ $rc -eq 0 ] && grep -q "model: NCCL 2.21 tuning rules" "$work/v221.out"'
"$bin" collective "$work/two_dgx_auto.yaml" -b 1M -e 1M --nccl-version 2.9 >"$work/v29.out" 2>&1; rc=$?
check "collective --nccl-version 2.9 is refused, exit 2, blaming the flag" '[ $rc -eq 2 ] && grep -q "^fabricsim collective: --nccl-version 2.9: error" "$work/v29.out"'
"$bin" run "$work/two_dgx_sweep.yaml" --records messages --out "$work/sweep3" >/dev/null 2>&1; rc1=$?
"$bin" run "$work/two_dgx_sweep.yaml" --threads 2 --records messages --out "$work/sweep4" >/dev/null 2>&1; rc2=$?
check "run --threads with a collective writes the serial run's messages.jsonl (made during the run: id null, named by source and sequence)" \
  '[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && cmp -s "$work/sweep3/messages.jsonl" "$work/sweep4/messages.jsonl" && grep -q "\"id\":null,\"sequence\":" "$work/sweep4/messages.jsonl"'

printf 'topology: {kind: leaf_spine, leaves: 2, spines: 1, hosts_per_leaf: 1, host_link: {bandwidth: 100Gbps}}\n' >"$work/nofab.yaml"
"$bin" validate "$work/nofab.yaml" >"$work/nofab.out" 2>&1; rc=$?
check "a leaf-spine without fabric_link derives it (oversubscription 1), not exit 1" '[ $rc -eq 0 ]'
printf 'topology: {kind: leaf_spine, leaves: 2, spines: 1, hosts_per_leaf: 1, host_link: {bandwidth: 100Gbps}, fabic_link: {bandwidth: 100Gbps}}\n' >"$work/fabic.yaml"
"$bin" validate "$work/fabic.yaml" >"$work/fabic.out" 2>&1; rc=$?
check "a misspelt fabric_link gets did you mean, exit 2" '[ $rc -eq 2 ] && grep -q "topology.fabic_link: unknown key; did you mean .fabric_link." "$work/fabic.out"'
mkdir -p "$work/adir"
"$bin" validate "$work/adir" >"$work/adir.out" 2>&1; rc=$?
check "a config that is a directory says so, exit 2" '[ $rc -eq 2 ] && grep -q "is a directory; expected a YAML config file" "$work/adir.out"'
printf 'name: ../../escaped\ntopology: {kind: custom, hosts: [a, b], switches: [s], links: [{a: a, b: s, bandwidth: 100Gbps}, {a: b, b: s, bandwidth: 100Gbps}]}\nmessages: [{src: a, dst: b, bytes: 1KiB}]\n' >"$work/escape.yaml"
(cd "$work" && "$bin_abs" run "$work/escape.yaml" >"$work/escape.out" 2>&1); rc=$?
check "a config name with ../ stays inside out/" '[ $rc -eq 0 ] && [ ! -e "$work/../escaped" ] && ls "$work"/out/*/results.json >/dev/null 2>&1'
"$bin" workload gen --model "$examples/models/llama_70b.yaml" --tp 3 --pp 1 --dp 1 --microbatches 1 --gpu "$examples/gpus/h100.yaml" -o "$work/tp3.jsonl" >"$work/tp3.out" 2>&1; rc=$?
check "workload gen --tp 3 for a 64-head model exits 2 naming the heads" '[ $rc -eq 2 ] && grep -q "must divide the model.s attention heads (64)" "$work/tp3.out" && [ ! -e "$work/tp3.jsonl" ]'

printf '134217728 613.3 218.85 382.99\n268435456 1e308 235.63 412.35\n536870912 2175.8 246.75 431.81\n' >"$work/huge_time.log"
"$bin" calibrate import --nccl-tests "$work/huge_time.log" --ranks 8 --out "$work/huge_profile.yaml" >"$work/huge.out" 2>&1; rc=$?
check "calibrate import of a log with a 1e308 time exits 2 and writes no profile" \
  '[ $rc -eq 2 ] && grep -q "fitted bandwidth is" "$work/huge.out" && [ ! -e "$work/huge_profile.yaml" ]'
"$bin" run "$examples/dgx_h100_2node_allreduce.yaml" --set workload.op=broadcast --set workload.root=65536 --out "$work/root" >"$work/root.out" 2>&1; rc=$?
check "a collective root beyond its ranks exits 2 naming workload.root" '[ $rc -eq 2 ] && grep -q "workload.root: expected a rank below 16" "$work/root.out"'

"$bin" collective "$examples/dgx_h100_2node_allreduce.yaml" -e 0 >"$work/flag.out" 2>&1; rc=$?
check "a bad collective flag is reported as the flag (-e 0), exit 2" '[ $rc -eq 2 ] && grep -q "^fabricsim collective: -e 0: error: expected a size" "$work/flag.out"'
printf 'topology:\n  kind: nvswitch\n  preset: dgx_h100\n  profile: /nonexistent/p.yaml\n' >"$work/noprofile.yaml"
"$bin" validate "$work/noprofile.yaml" >"$work/noprofile.out" 2>&1; rc=$?
check "a missing profile file is located at the config's profile key, exit 2" '[ $rc -eq 2 ] && grep -q "noprofile.yaml:4:12: error: topology.profile: cannot read" "$work/noprofile.out"'

"$bin" run "$examples/dumbbell.yaml" --out "$work/cmp_a" >/dev/null 2>&1
"$bin" run "$examples/dumbbell.yaml" --fidelity flow --out "$work/cmp_b" >/dev/null 2>&1
"$bin" compare "$work/cmp_a/results.json" "$work/cmp_b/results.json" >"$work/cmp.out" 2>&1; rc=$?
check "compare prints two runs side by side with ratios" '[ $rc -eq 0 ] && grep -q "sim_time_us" "$work/cmp.out" && grep -q "ratio" "$work/cmp.out"'
"$bin" compare "$work/cmp_a/results.json" "$work/cmp_b/results.json" --json >"$work/cmp.json" 2>&1; rc=$?
check "compare --json is one JSON object with ratios_to_first" '[ $rc -eq 0 ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"figures\"][0][\"ratios_to_first\"][0] == 1.0" "$work/cmp.json"'
"$bin" compare "$work/cmp_a/results.json" "$examples/dumbbell.yaml" >"$work/cmp_bad.out" 2>&1; rc=$?
check "compare of something that is not results.json exits 2 naming it" '[ $rc -eq 2 ] && grep -q "dumbbell.yaml: expected a fabricsim results.json" "$work/cmp_bad.out"'

(cd "$work" && "$bin_abs" run "$examples_abs/dumbbell.yaml" >/dev/null 2>&1 && "$bin_abs" run "$examples_abs/dumbbell.yaml" --set network.mtu=9000 >/dev/null 2>&1); rc=$?
check "a --set variant writes beside the plain run (out/NAME-HASH), recording its overrides and config hash" \
  '[ $rc -eq 0 ] && [ -s "$work/out/dumbbell/results.json" ] && ls "$work"/out/dumbbell-*/results.json >/dev/null 2>&1 && grep -q "^ *\"network.mtu=9000\"$" "$work"/out/dumbbell-*/results.json && grep -q "\"config_hash\"" "$work/out/dumbbell/results.json"'

"$bin" validate "$examples/fat_tree_k8.yaml" --progress >/dev/null 2>"$work/progress.err"; rc=$?
check "--progress reports route compilation as plain lines when stderr is not a terminal" \
  '[ $rc -eq 0 ] && grep -q "^fabricsim: routing 32 of 32 destination groups$" "$work/progress.err"'
"$bin" validate "$examples/fat_tree_k8.yaml" >/dev/null 2>"$work/quiet.err"; rc=$?
check "without --progress a non-terminal stderr stays quiet" '[ $rc -eq 0 ] && [ ! -s "$work/quiet.err" ]'

printf 'config: %s\nset: [workload.algorithm=ring, workload.sizes=null]\ngrid:\n  topology.nic.bandwidth: [200Gbps, 400Gbps]\n  workload.bytes: [1MiB, 2MiB]\n' \
  "$examples_abs/dgx_h100_2node_allreduce.yaml" >"$work/sweep.yaml"
"$bin" sweep "$work/sweep.yaml" --jobs 2 --out "$work/sweep" >"$work/sweep.out" 2>&1; rc=$?
check "sweep runs a 2 x 2 grid, two at a time, each variant in its own folder, with sweep.csv" \
  '[ $rc -eq 0 ] && grep -q "4 variants: 4 run, 0 already done, 0 failed" "$work/sweep.out" && [ "$(ls "$work"/sweep/*/results.json | wc -l)" -eq 4 ] && [ "$(wc -l <"$work/sweep/sweep.csv")" -eq 5 ]'
rm -rf "$work/sweep/bandwidth=200Gbps__bytes=2MiB"
"$bin" sweep "$work/sweep.yaml" --jobs 2 --out "$work/sweep" >"$work/sweep2.out" 2>&1; rc=$?
check "sweep resumes: only the missing variant runs again" '[ $rc -eq 0 ] && grep -q "4 variants: 1 run, 3 already done, 0 failed" "$work/sweep2.out"'
printf 'config: %s\ngrid:\n  network.mtu: [0]\n' "$examples_abs/dumbbell.yaml" >"$work/badsweep.yaml"
"$bin" sweep "$work/badsweep.yaml" --out "$work/badsweep" >"$work/badsweep.out" 2>&1; rc=$?
check "a sweep with a bad value fails before running anything, exit 2" '[ $rc -eq 2 ] && grep -q "network.mtu" "$work/badsweep.out" && [ ! -e "$work/badsweep" ]'
if "$root/scripts/plot" busbw "$work/sweep" -o "$work/busbw.png" >"$work/plot.out" 2>&1; then
  check "scripts/plot turns the sweep into a busbw-vs-size PNG" '[ "$(head -c 4 "$work/busbw.png" | od -An -c | tr -d " ")" = "211PNG" ]'
else
  check "scripts/plot turns the sweep into a busbw-vs-size PNG (needs python3-matplotlib)" 'grep -q "needs python3-matplotlib" "$work/plot.out"'
fi

printf '#       size         count      type   redop    root     time   algbw   Busbw #wrong     time   algbw   busbw #wrong\n     1048576        262144     float     sum      -1    31.99   32.78   57.36      0    31.83   32.94   57.65      0\n     4194304       1048576     float     sum      -1    52.96   79.19  138.59      0    52.70   79.59  139.29      0\n' >"$work/odd_header.log"
"$bin" calibrate import --nccl-tests "$work/odd_header.log" --ranks 8 --out "$work/odd.yaml" >"$work/odd.out" 2>&1; rc=$?
check "an nccl-tests header naming one busbw column does not crash the import (fuzz finding)" '[ $rc -eq 0 ] || [ $rc -eq 2 ]'

"$bin" run "$examples/dumbbell.yaml" --seed -1 --out "$work/seed" >"$work/seed.out" 2>&1; rc=$?
check "--seed -1 exits 2 naming the option (it does not wrap to 2^64 - 1)" '[ $rc -eq 2 ] && grep -q "^fabricsim: --seed: expected a whole number" "$work/seed.out" && [ ! -e "$work/seed" ]'
"$bin" run "$examples/dumbbell.yaml" --set stop.time=1us --out "$work/short" >"$work/short.out" 2>&1; rc=$?
check "a run stopped by its time limit exits 4 and writes complete: false" \
  '[ $rc -eq 4 ] && grep -q "\"complete\": false" "$work/short/results.json" && grep -q INCOMPLETE "$work/short.out"'

"$bin" whatif "$examples/whatif_leaf_spine.yaml" --set workload.bytes=4MiB --out "$work/whatif" >"$work/whatif.out" 2>&1; rc=$?
check "whatif runs the baseline and each scenario and writes whatif.json" \
  '[ $rc -eq 0 ] && [ "$(grep -o "\"name\":" "$work/whatif/whatif.json" | wc -l)" -eq 4 ] && grep -q "h3 cable at 50G" "$work/whatif.out"'
"$bin" whatif "$examples/dumbbell.yaml" --out "$work/whatif_none" >"$work/whatif_none.out" 2>&1; rc=$?
check "whatif on a config without a whatif list exits 2" '[ $rc -eq 2 ] && grep -q "whatif: expected a list" "$work/whatif_none.out" && [ ! -e "$work/whatif_none" ]'

"$bin" run "$examples/dumbbell.yaml" --fidelity flow --out "$work/flow" >"$work/flow.out" 2>&1; rc=$?
check "run --fidelity flow finishes, says so, and writes fidelity and the solver's figures" \
  '[ $rc -eq 0 ] && grep -q "flow fidelity" "$work/flow.out" && grep -q "\"fidelity\": *\"flow\"" "$work/flow/results.json" && grep -q "\"rate_solves\"" "$work/flow/results.json"'
"$bin" run "$examples/fat_tree_k8.yaml" --fidelity flow --out "$work/flow_serial" >/dev/null 2>&1; rc0=$?
"$bin" run "$examples/fat_tree_k8.yaml" --fidelity flow --threads 2 --out "$work/flow_threads" >/dev/null 2>&1; rc2=$?
check "run --fidelity flow --threads 2 compiles its routes on two threads and writes the serial run's results, with no parallel section" \
  '[ $rc0 -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(strip "$work/flow_serial/results.json")" = "$(strip "$work/flow_threads/results.json")" ] && ! grep -q "\"parallel\"" "$work/flow_threads/results.json"'
"$bin" run "$examples/dumbbell.yaml" --fidelity flows --out "$work/flow_bad" >"$work/flow_bad.out" 2>&1; rc=$?
check "--fidelity with an unknown value exits 2 naming network.fidelity, and writes nothing" \
  '[ $rc -eq 2 ] && grep -q "network.fidelity" "$work/flow_bad.out" && [ ! -e "$work/flow_bad" ]'

"$bin" run "$examples/dgx_h100_2node_allreduce.yaml" --set workload.sizes.to=4MiB --out "$work/timeline" --trace "$work/timeline/trace.json" >"$work/timeline.out" 2>&1; rc=$?
check "run --trace writes a Chrome trace whose slices nest per track (tests/check_chrome_trace.py)" \
  '[ $rc -eq 0 ] && [ ! -e "$work/timeline/trace.json.partial" ] && python3 "$root/tests/check_chrome_trace.py" "$work/timeline/trace.json" --max-mb 100 --expect-endpoints 16 --expect-links --expect-kinds communication,steps'
"$bin" run "$examples/pfc_ring_deadlock.yaml" --out "$work/pfc_tl" --trace "$work/pfc_tl/trace.json" --trace-interval 1us >/dev/null 2>&1
if "$root/scripts/plot" queues "$work/pfc_tl/trace.json" -o "$work/queues.png" >"$work/plotq.out" 2>&1; then
  check "scripts/plot queues draws queue depth and PFC pauses from a timeline" \
    '[ "$(head -c 4 "$work/queues.png" | od -An -c | tr -d " ")" = "211PNG" ] && grep -q "\"ph\":\"X\",\"pid\":2" "$work/pfc_tl/trace.json"'
else
  check "scripts/plot queues (needs python3-matplotlib)" 'grep -q "needs python3-matplotlib" "$work/plotq.out"'
fi
if "$root/scripts/plot" breakdown "$work/replay/results.json" -o "$work/breakdown.png" >"$work/plotb.out" 2>&1; then
  check "scripts/plot breakdown draws a training step per rank" '[ "$(head -c 4 "$work/breakdown.png" | od -An -c | tr -d " ")" = "211PNG" ]'
else
  check "scripts/plot breakdown (needs python3-matplotlib)" 'grep -q "needs python3-matplotlib" "$work/plotb.out"'
fi
# scripts/bench-scale's CSV (these rows written by hand) as one picture of cost against size.
cat >"$work/bench-scale.csv" <<'CSV'
case,command,hosts,threads,processes,wall_seconds,setup_seconds,peak_mb,estimate_mb,events,events_per_second,results_mb
fat_tree_k8,run a,128,1,1,0.18,0.01,12,11,100,1000,1
fat_tree_k16,run b,1024,1,1,2.8,0.1,36,35,1000,1000,2
fat_tree_k16_threads2,run b --threads 2,1024,2,1,1.9,0.1,40,35,1000,1000,2
fat_tree_k64_validate,validate c,65536,1,1,9.0,9.0,900,880,,,
CSV
if "$root/scripts/plot" scale "$work/bench-scale.csv" -o "$work/scale.png" >"$work/plots.out" 2>&1; then
  check "scripts/plot scale draws bench-scale's wall and peak memory against hosts" '[ "$(head -c 4 "$work/scale.png" | od -An -c | tr -d " ")" = "211PNG" ]'
  "$root/scripts/plot" scale "$work/replay/results.json" >"$work/plots2.out" 2>&1; rc=$?
  check "scripts/plot scale refuses what is not bench-scale's CSV" '[ $rc -ne 0 ]'
else
  check "scripts/plot scale (needs python3-matplotlib)" 'grep -q "needs python3-matplotlib" "$work/plots.out"'
fi
"$bin" collective "$examples/dgx_h100_2node_allreduce.yaml" -b 1M -e 2M --trace "$work/coll_trace.json" >/dev/null 2>&1; rc=$?
check "collective --trace writes a timeline of its sizes too" \
  '[ $rc -eq 0 ] && python3 "$root/tests/check_chrome_trace.py" "$work/coll_trace.json" --expect-endpoints 16 --expect-kinds communication,steps >/dev/null'
"$bin" run "$examples/dumbbell.yaml" --trace-limit 5 --out "$work/nolimit" >"$work/nolimit.out" 2>&1; rc=$?
check "a --trace bound without --trace exits 2 naming it" '[ $rc -eq 2 ] && grep -q "^fabricsim: --trace-limit: expected --trace FILE too" "$work/nolimit.out" && [ ! -e "$work/nolimit" ]'
"$bin" run "$examples/dumbbell.yaml" --trace "$work/tw.json" --trace-window 5us:1us --out "$work/tw" >"$work/tw.out" 2>&1; rc=$?
check "--trace-window with TO before FROM exits 2 naming the option, and writes nothing" \
  '[ $rc -eq 2 ] && grep -q "^fabricsim: --trace-window: expected FROM:TO" "$work/tw.out" && [ ! -e "$work/tw" ] && [ ! -e "$work/tw.json" ]'
"$bin" run "$examples/dumbbell.yaml" --trace "$work/ti.json" --trace-interval 0ns --out "$work/ti" >"$work/ti.out" 2>&1; rc=$?
check "--trace-interval 0 exits 2 naming the option" '[ $rc -eq 2 ] && grep -q "^fabricsim: --trace-interval: expected" "$work/ti.out"'
"$bin" run "$examples/dumbbell.yaml" --trace "$work/tl.json" --trace-limit 5 --out "$work/tl" >"$work/tl.out" 2>&1; rc=$?
check "--trace-limit bounds the events and says what was left out" \
  '[ $rc -eq 0 ] && grep -q "events over the limit left out" "$work/tl.out" && grep -q "\"events_written\":5" "$work/tl.json"'

# One run split over MPI processes (mpirun, Open MPI from scripts/install-deps): the
# serial run's results and records, from one writer; other commands are refused.
if command -v mpirun >/dev/null && [ -e "$(dirname "$bin_abs")/libfabricsim_mpi.so" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  mpi() { local np=$1; shift; timeout 300 mpirun --oversubscribe -np "$np" "$bin_abs" "$@"; }
  # 2 ms of the workload's 10 (567 flows) keeps all 8 partitions busy (0.5-1.0 M events each).
  short=(--set workload.duration=2ms)
  "$bin" run "$examples/fat_tree_k8_websearch.yaml" "${short[@]}" --out "$work/ws1" --records messages >/dev/null 2>&1; rc0=$?
  mpi 2 run "$examples/fat_tree_k8_websearch.yaml" "${short[@]}" --out "$work/ws2" --records messages >"$work/ws2.out" 2>&1; rc2=$?
  mpi 4 run "$examples/fat_tree_k8_websearch.yaml" "${short[@]}" --out "$work/ws4" --records messages --threads 2 >/dev/null 2>&1; rc4=$?
  check "mpirun -np 2 and -np 4 (x 2 threads) write the serial run's results and records, with an mpi parallel section" \
    '[ $rc0 -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc4 -eq 0 ] && [ "$(strip "$work/ws1/results.json")" = "$(strip "$work/ws2/results.json")" ] && [ "$(strip "$work/ws1/results.json")" = "$(strip "$work/ws4/results.json")" ] && cmp -s "$work/ws1/messages.jsonl" "$work/ws2/messages.jsonl" && cmp -s "$work/ws1/messages.jsonl" "$work/ws4/messages.jsonl" && grep -q "\"backend\": \"mpi\"" "$work/ws4/results.json" && grep -q "\"partitions\": 8" "$work/ws4/results.json"'
  check "mpirun -np 2: one summary, from the first process" '[ $(grep -c "^fabricsim: fat_tree_k8_websearch" "$work/ws2.out") -eq 1 ]'
  "$bin" run "$examples/pfc_ring_deadlock.yaml" --out "$work/dl1" >/dev/null 2>&1; rc0=$?
  mpi 2 run "$examples/pfc_ring_deadlock.yaml" --out "$work/dl2" >/dev/null 2>&1; rc2=$?
  check "mpirun -np 2 finds the serial run's PFC deadlock (exit 3, the same cycle)" \
    '[ $rc0 -eq 3 ] && [ $rc2 -eq 3 ] && [ "$(strip "$work/dl1/results.json")" = "$(strip "$work/dl2/results.json")" ] && grep -q "deadlock_cycle" "$work/dl2/results.json"'
  mpi 2 validate "$examples/dumbbell.yaml" >"$work/mpival.out" 2>&1; rc=$?
  check "mpirun -np 2 fabricsim validate is refused, exit 2, once" '[ $rc -eq 2 ] && [ $(grep -c "only \`fabricsim run\` splits over processes" "$work/mpival.out") -eq 1 ]'
  mpi 2 run "$work/two_dgx_coll.yaml" --out "$work/mpicoll" >"$work/mpicoll.out" 2>&1; rc=$?
  check "mpirun with a data-checked collective is refused, exit 2, naming workload.check_data, once" '[ $rc -eq 2 ] && [ $(grep -c "workload.check_data" "$work/mpicoll.out") -eq 1 ] && [ ! -e "$work/mpicoll" ]'
  mpi 2 run "$work/two_dgx_sweep.yaml" --records messages --out "$work/mpirec" >"$work/mpirec.out" 2>&1; rc=$?
  check "mpirun with a collective and --records is refused, exit 2, nothing written" '[ $rc -eq 2 ] && grep -q "expected no --records under mpirun" "$work/mpirec.out" && [ ! -e "$work/mpirec" ]'
  mpi 2 run "$work/two_dgx_sweep.yaml" --out "$work/mpisweep" >/dev/null 2>&1; rc=$?
  check "mpirun -np 2 with a collective sweep: the serial run's results.json" \
    '[ $rc -eq 0 ] && [ "$(strip "$work/sweep1/results.json")" = "$(strip "$work/mpisweep/results.json")" ] && grep -q "\"processes\": 2" "$work/mpisweep/results.json"'
  mpi 2 run "$examples/dumbbell.yaml" --trace "$work/mpitrace.json" --out "$work/mpitrace" >"$work/mpitrace.out" 2>&1; rc=$?
  check "mpirun with --trace is refused, exit 2" '[ $rc -eq 2 ] && grep -q "expected no --trace under mpirun" "$work/mpitrace.out"'
else
  echo "FAIL mpirun or the MPI plugin is missing (scripts/install-deps installs libopenmpi-dev and openmpi-bin)"; fail=1
fi

[ $fail -eq 0 ] && echo "cli: all checks passed" || echo "cli: some checks FAILED"
exit $fail
