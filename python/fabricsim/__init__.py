"""fabricsim from Python: load a scenario, run it, sweep it, and read its results as
pandas DataFrames; write collective algorithms in Python (fabricsim.algorithms).

    import fabricsim
    s = fabricsim.load("configs/dgx_h100_2node_allreduce.yaml")
    table = fabricsim.collective(s, op="all_reduce", algo="auto", sizes=("1MiB", "1GiB"))

Every figure comes from the same engine as the `fabricsim` command: a run's `results`
is the dict `fabricsim run` writes as results.json. docs/python.md has the whole API.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Callable, Iterable, Mapping

from . import _fabricsim
from ._frames import Result, collective_table, dataframe, pandas
from .algorithms import Algorithm, Rank, Program, algorithm

__version__ = _fabricsim.version
__all__ = [
    "ConfigError", "Scenario", "Result", "load", "run", "collective", "sweep", "topo", "topo_graph",
    "algorithm", "Algorithm", "Rank", "Program", "algorithm_names",
]


class ConfigError(ValueError):
    """A config the engine refuses, located as the command line locates it.

    `file`, `line` and `column` say where (None where an override gave the value; then
    `where` names it), `key` is the key's path and `detail` what was expected.
    """

    def __init__(self, message: str, where: str, key: str, detail: str):
        super().__init__(message)
        self.where, self.key, self.detail = where, key, detail
        self.file, self.line, self.column = _split_where(where)


def _split_where(where: str):
    parts = where.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return parts[0], int(parts[1]), int(parts[2])
    return (where or None), None, None


def _engine(call, *args, **kwargs):
    """Calls the engine, turning its config errors into ConfigError."""
    try:
        return call(*args, **kwargs)
    except _fabricsim.ConfigError as e:
        raise ConfigError(str(e), e.where, e.key, e.detail) from None


def _override_text(key: str, value: Any) -> str:
    if isinstance(value, bool):
        value = "true" if value else "false"
    elif isinstance(value, (dict, list, tuple)):
        value = json.dumps(value)  # YAML reads JSON
    return f"{key}={value}"


class Scenario:
    """A validated scenario: a config file or dict with its overrides applied.

    `with_overrides` gives a variant; the original is unchanged.
    """

    def __init__(self, source: str | Mapping, overrides: Mapping[str, Any] | Iterable[str] | None = None,
                 name: str | None = None):
        self.source = source
        if overrides is None:
            self.overrides: list[str] = []
        elif isinstance(overrides, Mapping):
            self.overrides = [_override_text(k, v) for k, v in overrides.items()]
        else:
            self.overrides = list(overrides)
        if isinstance(source, Mapping):
            # Errors locate the key in the dict's JSON text, one key a line.
            self._name = name or str(source.get("name", "<dict>"))
            self.config = _engine(_fabricsim.load_text, json.dumps(source, indent=1), self._name, self.overrides)
        else:
            self._name = None
            self.config = _engine(_fabricsim.load_file, os.fspath(source), self.overrides)

    def with_overrides(self, overrides: Mapping[str, Any] | Iterable[str]) -> "Scenario":
        more = [_override_text(k, v) for k, v in overrides.items()] if isinstance(overrides, Mapping) else list(overrides)
        return Scenario(self.source, self.overrides + more, self._name)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def workload_kind(self) -> str:
        return self.config.workload_kind

    def ranks(self) -> list[Rank]:
        """Each endpoint as a rank, with its node and its place in the node (its rail)."""
        return [Rank(r, endpoint, node, local) for r, endpoint, node, local in _engine(_fabricsim.ranks, self.config)]

    def __repr__(self) -> str:
        return f"Scenario({self.name!r}, overrides={self.overrides!r})"


def load(path_or_dict: str | os.PathLike | Mapping, overrides: Mapping[str, Any] | Iterable[str] | None = None) -> Scenario:
    """A validated scenario from a YAML file or a dict shaped like one.

    `overrides` maps keys to values as `--set KEY=VALUE` does ({"network.mtu": 4096}).
    Raises ConfigError with the file, line, column and key of what is wrong.
    """
    return Scenario(path_or_dict, overrides)


def _progress_callback(progress):
    if progress is None or progress is False:
        return None, None
    if callable(progress):
        return progress, None
    try:  # progress=True: a bar where tqdm is present, else a line now and then
        from tqdm.auto import tqdm
    except ImportError:
        def say(p):
            print(f"fabricsim: {p['events']:,} events, {p['sim_time_ps'] / 1e6:.1f} us simulated, "
                  f"{p['messages_finished']:,}/{p['messages_total']:,} messages", flush=True)
        return say, None
    bar = tqdm(total=None, unit="msg", desc="fabricsim")

    def update(p):
        bar.total = p["messages_total"]
        bar.n = p["messages_finished"]
        bar.refresh()
    return update, bar


def run(scenario: Scenario | str | Mapping, threads: int | None = None, partitions: int | None = None,
        fidelity: str | None = None, progress: Callable[[dict], None] | bool | None = None,
        records: bool = False) -> Result:
    """Runs a scenario as `fabricsim run` does and returns its Result.

    threads/partitions split the run (identical results); fidelity "packet" or "flow"
    overrides network.fidelity; progress is a callback given a dict (sim_time_ps,
    events, messages_finished, messages_total, wall_seconds), or True for a bar;
    records=True keeps every message's record (Result.messages). The GIL is released
    while the engine runs.
    """
    if not isinstance(scenario, Scenario):
        scenario = load(scenario)
    if fidelity is not None:
        scenario = scenario.with_overrides({"network.fidelity": fidelity})
    callback, bar = _progress_callback(progress)
    records_path = ""
    folder = None
    if records:
        folder = tempfile.TemporaryDirectory(prefix="fabricsim-")
        records_path = os.path.join(folder.name, "messages.jsonl")
    try:
        text = _engine(_fabricsim.run, scenario.config, threads or 0, partitions or 0, callback, records_path)
        messages = None
        if records:
            with open(records_path) as f:
                messages = [json.loads(line) for line in f if line.strip()]
    finally:
        if folder is not None:
            folder.cleanup()
    results = json.loads(text)
    if callback is not None:  # the end, however short the run (the engine reports every 4 M events)
        callback({k: results.get(k, 0) for k in ("sim_time_ps", "events", "messages_finished", "messages_total",
                                                   "wall_seconds")})
    if bar is not None:
        bar.close()
    return Result(results, messages)


def collective(scenario: Scenario | str | Mapping, op: str = "all_reduce", algo: str | Algorithm | None = None,
               proto: str | None = None, sizes: Iterable | None = None, factor: int = 2,
               ranks: int | None = None, channels: int | None = None, nccl_version: str | None = None,
               check: bool = False, **run_options):
    """An nccl-tests-style table on the scenario's fabric, as `fabricsim collective` gives.

    sizes: (min, max) swept by `factor`, as nccl-tests' -b/-e/-f, or one size. algo: a
    built-in algorithm, "auto" (NCCL's choice per size), or an algorithm written in
    Python (fabricsim.algorithm). One row per size: size, count, type, time_us, algbw
    and busbw (GB/s), and what the engine adds (the algorithm and protocol that ran,
    NCCL's own prediction). The Result is in the table's `attrs["result"]`.
    """
    if not isinstance(scenario, Scenario):
        scenario = load(scenario)
    lo, hi = _size_range(sizes)
    request: dict[str, Any] = {"op": op, "protocol": proto, "nccl_version": nccl_version, "min_bytes": lo,
                               "max_bytes": hi, "step_factor": factor, "ranks": ranks, "channels": channels,
                               "check_data": check}
    files = None
    if isinstance(algo, Algorithm):
        files = tempfile.TemporaryDirectory(prefix="fabricsim-algo-")
        path = os.path.join(files.name, f"{algo.name}.yaml")
        algo.write_steps(path, scenario, op, ranks)
        request.update(algorithm="steps", file=path)
    elif algo is not None:
        request["algorithm"] = algo
    try:
        overrides = _engine(_fabricsim.collective_overrides, scenario.config, request)
        variant = scenario.with_overrides(overrides)
        result = run(variant, **run_options)
    finally:
        if files is not None:
            files.cleanup()
    table = collective_table(result, variant.config.collective_root)
    if isinstance(algo, Algorithm):
        table["algorithm"] = algo.name
    return table


def _size_range(sizes):
    if sizes is None:
        return "8", "128MiB"
    if isinstance(sizes, (str, int)):
        return str(sizes), str(sizes)
    sizes = list(sizes)
    if len(sizes) == 1:
        return str(sizes[0]), str(sizes[0])
    if len(sizes) != 2:
        raise ValueError(f"sizes: expected (min, max) or one size, got {sizes!r}")
    return str(sizes[0]), str(sizes[1])


def sweep(base: Scenario | str | Mapping, grid: Mapping[str, Iterable], **run_options):
    """Runs every combination of `grid`'s values (keys as in `overrides`) on `base`.

    One DataFrame row per variant, or per variant and size when the workload is a
    collective sweep: the variant's values, then its key figures (complete,
    sim_time_ps, events, and the collective's size, time_us, algbw_GBps, busbw_GBps or
    the traffic's FCT percentiles).
    """
    import itertools

    if not isinstance(base, Scenario):
        base = load(base)
    keys = list(grid)
    rows = []
    for values in itertools.product(*(list(grid[k]) for k in keys)):
        variant = dict(zip(keys, values))
        result = run(base.with_overrides(variant), **run_options)
        for figures in result.key_figures():
            rows.append({**variant, **figures})
    return dataframe(rows)


def topo(scenario: Scenario | str | Mapping) -> dict:
    """`fabricsim topo --json`: endpoints, switches, links by tier, diameter, bisection."""
    if not isinstance(scenario, Scenario):
        scenario = load(scenario)
    return json.loads(_engine(_fabricsim.topology, scenario.config))


def topo_graph(scenario: Scenario | str | Mapping):
    """The fabric as a networkx MultiGraph (edges carry bandwidth_bps, latency_ps, tier);
    needs networkx (Debian's python3-networkx)."""
    import networkx as nx

    if not isinstance(scenario, Scenario):
        scenario = load(scenario)
    g = nx.MultiGraph(name=scenario.name)
    for a, b, bandwidth, latency, tier in _engine(_fabricsim.links, scenario.config):
        g.add_edge(a, b, bandwidth_bps=bandwidth, latency_ps=latency, tier=tier)
    return g


def algorithm_names() -> list[str]:
    """The built-in collective algorithms (`algo=`), besides "auto"."""
    return list(_fabricsim.algorithm_names())
