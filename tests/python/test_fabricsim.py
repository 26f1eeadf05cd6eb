"""The Python package against the command line and against hand-worked values.

Run by ctest (tests/CMakeLists.txt) with the build's python/ on PYTHONPATH and
FABRICSIM (the executable) and FABRICSIM_SOURCE_DIR set.
"""

import json
import os
import subprocess
import threading
import time

import pytest

import fabricsim as fs

ROOT = os.environ.get("FABRICSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("FABRICSIM", os.path.join(ROOT, "build", "fabricsim"))
FAT_TREE = os.path.join(ROOT, "configs", "fat_tree_k8.yaml")
FOUR_HOSTS = os.path.join(ROOT, "tests", "configs", "good", "four_hosts.yaml")
DGX_2NODE = os.path.join(ROOT, "configs", "dgx_h100_2node_allreduce.yaml")
# What differs between two runs of one config: the clock, and the version string.
UNTIMED = {"wall_seconds", "setup_wall_seconds", "events_per_second", "fabricsim_version"}


def untimed(results):
    """results.json without what the machine's timing sets: the wall times and, in a split
    run's parallel section, the seconds each thread waited and the window from which one
    thread ran every partition (docs/parallel.md)."""
    kept = {k: v for k, v in results.items() if k not in UNTIMED}
    if "parallel" in kept:
        timed = {"blocked_seconds_per_thread", "one_thread_from_window"}
        kept["parallel"] = {k: v for k, v in kept["parallel"].items() if k not in timed}
    return kept


@fs.algorithm(name="py_ring")
def py_ring(ranks, op):
    """NCCL's ring AllReduce on one channel: a reduce-scatter, then an all-gather, each
    n - 1 steps round the ring (ring.cpp's program, written again by hand)."""
    n = len(ranks)
    p = fs.Program(op, ranks=n, chunks=n)
    for i in range(n):
        nxt, prv = (i + 1) % n, (i - 1) % n
        last = None
        for t in range(n - 1):
            s = p.send(i, nxt, (i - 1 - t) % n, channel=0, after=[] if last is None else [last])
            last = p.recv_reduce(i, prv, (i - 2 - t) % n, channel=0, after=[s])
        for t in range(n - 1):
            s = p.send(i, nxt, (i - t) % n, channel=1, after=[last])
            last = p.recv(i, prv, (i - 1 - t) % n, channel=1, after=[s])
    return p


@fs.algorithm(name="half_ring")
def half_ring(ranks, op):
    """Wrong on purpose: the all-gather is left out, so ranks end with one reduced chunk."""
    n = len(ranks)
    p = fs.Program(op, ranks=n, chunks=n)
    for i in range(n):
        last = None
        for t in range(n - 1):
            s = p.send(i, (i + 1) % n, (i - 1 - t) % n, after=[] if last is None else [last])
            last = p.recv_reduce(i, (i - 1) % n, (i - 2 - t) % n, after=[s])
    return p


def test_load_errors_name_file_line_column_and_key():
    bad = os.path.join(ROOT, "tests", "configs", "bad", "bandwidth_bad_unit.yaml")
    with pytest.raises(fs.ConfigError) as e:
        fs.load(bad)
    assert (e.value.file, e.value.line, e.value.column) == (bad, 7, 26)
    assert e.value.key == "topology.host_link.bandwidth"
    assert "expected a bandwidth" in e.value.detail
    # As the CLI prints it, and the CLI exits 2.
    cli = subprocess.run([CLI, "validate", bad], capture_output=True, text=True)
    assert cli.returncode == 2
    assert str(e.value) in cli.stderr
    # An override is named as --set names it; a dict's keys are located in its JSON.
    with pytest.raises(fs.ConfigError) as e:
        fs.load(FOUR_HOSTS, {"network.mtu": "abc"})
    assert e.value.where == "--set network.mtu=abc" and e.value.key == "network.mtu" and e.value.line is None
    with pytest.raises(fs.ConfigError) as e:
        fs.load({"topology": {"kind": "leaf_spine", "leaves": 1, "spines": 1}})
    assert e.value.key == "topology.hosts_per_leaf"
    assert e.value.file == "<dict>" and e.value.line == 2


def test_a_run_is_the_cli_run(tmp_path):
    result = fs.run(FAT_TREE)
    subprocess.run([CLI, "run", FAT_TREE, "--out", str(tmp_path / "default")], check=True, capture_output=True)
    with open(tmp_path / "default" / "results.json") as f:
        cli = json.load(f)
    assert untimed(result.results) == untimed(cli)  # both split as the machine's cores allow
    assert result.complete
    # One queue (FABRICSIM_CORES=1) and a split over threads: the same figures (docs/parallel.md).
    subprocess.run([CLI, "run", FAT_TREE, "--out", str(tmp_path / "one")], check=True, capture_output=True,
                   env={**os.environ, "FABRICSIM_CORES": "1"})
    with open(tmp_path / "one" / "results.json") as f:
        one = untimed(json.load(f))
    assert "parallel" not in one
    split = untimed(fs.run(FAT_TREE, threads=2).results)
    assert split.pop("parallel")["threads"] == 2  # how the run was split, and nothing else, differs
    assert split == one


def test_a_dict_config_runs_like_its_file():
    # Four hosts on one switch: a 1 MiB message from h0 to h1 at 100 Gb/s with 64 KiB
    # MTU takes its serialisation (16 packets of 64 KiB + headers) plus two hops.
    config = {
        "name": "pair",
        "topology": {"kind": "leaf_spine", "leaves": 1, "spines": 1, "hosts_per_leaf": 4,
                     "host_link": {"bandwidth": "100Gbps", "latency": "500ns"}, "fabric_link": {"bandwidth": "100Gbps"}},
        "network": {"mtu": "64KiB", "buffer": {"size": "16MiB"}, "pfc": {}},
        "messages": [{"src": "h0", "dst": "h1", "bytes": "1MiB"}],
    }
    result = fs.run(config)
    assert result.complete and result["messages_finished"] == 1
    links = result.links
    for column in ("from", "to", "bandwidth_bps", "latency_ps", "bytes", "utilization"):
        assert column in links.columns
    first_hop = links[(links["from"] == "h0")]
    assert int(first_hop["packets"].sum()) == 16


def test_python_ring_is_the_built_in_ring_to_the_picosecond():
    s = fs.load(FAT_TREE)
    mine = fs.collective(s, algo=py_ring, proto="none", sizes=("64KiB", "4MiB"), factor=8, ranks=8, channels=1, check=True)
    ring = fs.collective(s, algo="ring", proto="none", sizes=("64KiB", "4MiB"), factor=8, ranks=8, channels=1, check=True)
    assert list(mine["size"]) == [65536, 524288, 4194304]
    assert list(mine["time_us"]) == list(ring["time_us"])
    assert list(mine["busbw_GBps"]) == list(ring["busbw_GBps"])
    assert set(mine["data_check"]) == {"passed"}
    assert set(mine["algorithm"]) == {"py_ring"}
    # And at flow fidelity, where an algorithm written in Python runs a flow per send, as
    # the built-in ring does with network.flow_rings: steps.
    steps = s.with_overrides({"network.flow_rings": "steps"})
    flows = [fs.collective(steps, algo=a, proto="none", sizes="512KiB", ranks=8, channels=1, fidelity="flow")["time_us"][0]
             for a in (py_ring, "ring")]
    assert flows[0] == flows[1]


def test_a_wrong_python_algorithm_is_refused_by_the_data_check():
    with pytest.raises(fs.ConfigError) as e:
        fs.collective(FAT_TREE, algo=half_ring, proto="none", sizes="64KiB", ranks=4, check=True)
    assert "rank 0 chunk" in str(e.value) and "expected {0,1,2,3}" in str(e.value)


def test_exports_run_from_the_cli(tmp_path):
    s = fs.load(FAT_TREE)
    program = py_ring.program(s, "all_reduce", ranks=8)
    steps, xml = tmp_path / "ring.yaml", tmp_path / "ring.xml"
    steps.write_text(program.to_steps_yaml())
    xml.write_text(program.to_msccl_xml())
    table = fs.collective(s, algo=py_ring, proto="none", sizes="512KiB", ranks=8, channels=1)
    for algo, path in (("steps", steps), ("msccl", xml)):
        out = subprocess.run([CLI, "collective", FAT_TREE, "--algo", algo, "--file", str(path), "--proto", "none",
                              "-b", "512KiB", "-e", "512KiB", "--ranks", "8", "--channels", "1", "--check", "--json"],
                             capture_output=True, text=True, check=True)
        row = json.loads(out.stdout)[0]
        assert row["data_check"] == "passed"
        if algo == "steps":
            assert row["time_us"] == pytest.approx(table["time_us"][0], rel=1e-12)


def test_collective_table_is_nccl_tests_shaped():
    table = fs.collective(DGX_2NODE, op="all_gather", algo="ring", sizes=("1MiB", "2MiB"))
    assert list(table.columns[:8]) == ["size", "count", "type", "redop", "root", "time_us", "algbw_GBps", "busbw_GBps"]
    # nccl-tests' all_gather: count per rank, 16 ranks of floats (1 MiB / 4 / 16).
    assert list(table["count"]) == [16384, 32768]
    assert set(table["redop"]) == {"none"} and set(table["type"]) == {"float"}
    # busbw = algbw * (n - 1) / n for AllGather (nccl-tests' PERFORMANCE.md).
    for _, row in table.iterrows():
        assert row["busbw_GBps"] == pytest.approx(row["algbw_GBps"] * 15 / 16, rel=1e-6)
        assert row["algbw_GBps"] == pytest.approx(row["size"] / row["time_us"] / 1e3, rel=1e-6)
    # The CLI's rows for the same request.
    out = subprocess.run([CLI, "collective", DGX_2NODE, "--op", "all_gather", "--algo", "ring", "-b", "1MiB", "-e", "2MiB",
                          "--json"], capture_output=True, text=True, check=True)
    assert [r["time_us"] for r in json.loads(out.stdout)] == list(table["time_us"])


def test_sweep_has_a_row_per_variant_and_size():
    table = fs.sweep(fs.load(DGX_2NODE, {"workload.sizes.from": "1MiB", "workload.sizes.to": "2MiB"}),
                     {"topology.nic.bandwidth": ["200Gbps", "400Gbps"]})
    assert len(table) == 4
    assert list(table["topology.nic.bandwidth"]) == ["200Gbps", "200Gbps", "400Gbps", "400Gbps"]
    assert {"size_bytes", "time_us", "busbw_GBps", "complete"} <= set(table.columns)
    slow, fast = table[table["size_bytes"] == 2097152]["time_us"]
    assert slow > fast


def test_topo_is_the_cli_topo():
    out = subprocess.run([CLI, "topo", FAT_TREE, "--json"], capture_output=True, text=True, check=True)
    assert fs.topo(FAT_TREE) == json.loads(out.stdout)
    # k = 8 fat tree: 128 hosts, 80 switches (k^2/2 edge and aggregation, k^2/4 core).
    assert fs.topo(FAT_TREE)["endpoints"] == 128 and fs.topo(FAT_TREE)["switches"] == 80


def test_progress_is_heard_and_the_gil_is_free_while_it_runs():
    heard = []
    ticks = 0
    done = threading.Event()

    def work():
        fs.run(FAT_TREE, progress=heard.append)
        done.set()

    thread = threading.Thread(target=work)
    thread.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    thread.join()
    assert ticks > 10  # this thread ran Python while the engine worked
    assert heard and heard[-1]["messages_finished"] <= heard[-1]["messages_total"]
