"""A run's results: results.json as a dict, and its tables as pandas DataFrames whose
column names carry their units as results.json's keys do (time_us, busbw_GBps, ...)."""

from __future__ import annotations

import os
import sys
from typing import Any

from . import _fabricsim

_DEBIAN_PACKAGES = "/usr/lib/python3/dist-packages"


def pandas():
    """pandas, from this interpreter or, failing that, from Debian's python3-pandas
    (scripts/install-deps installs it there, which another Python 3 may not search)."""
    try:
        import pandas as pd
    except ImportError:
        if os.path.isdir(_DEBIAN_PACKAGES) and _DEBIAN_PACKAGES not in sys.path:
            sys.path.append(_DEBIAN_PACKAGES)
            try:
                import pandas as pd
            except ImportError:
                pd = None
        else:
            pd = None
        if pd is None:
            raise ImportError("fabricsim's tables need pandas: install python3-pandas (scripts/install-deps does)") from None
    return pd


def dataframe(rows, columns=None):
    return pandas().DataFrame(rows, columns=columns)


def _flat(record: dict, prefix: str = "") -> dict:
    """Nested objects as `outer.inner` columns, as pandas.json_normalize names them."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


class Result:
    """One run's results.

    `results` is the dict `fabricsim run` writes as results.json; `result["key"]` reads
    it too. The tables (pandas DataFrames): `collectives` (a row per size),
    `links` (a row per link direction), `flows` (the traffic's flow statistics by size),
    `training` (a row per rank of a training step), `endpoints` (a row per counter),
    and `messages` (a row per message, when run with records=True).
    """

    def __init__(self, results: dict, messages: list | None = None):
        self.results = results
        self._messages = messages

    def __getitem__(self, key: str):
        return self.results[key]

    def __contains__(self, key: str) -> bool:
        return key in self.results

    def sections(self) -> list[str]:
        return list(self.results)

    @property
    def complete(self) -> bool:
        return bool(self.results.get("complete"))

    @property
    def collectives(self):
        section = self.results.get("collective")
        if section is None:
            return dataframe([])
        rows = []
        for row in section["rows"]:
            rows.append(_flat(row))
        return dataframe(rows)

    @property
    def links(self):
        return dataframe([_flat(link) for link in self.results.get("links", [])])

    @property
    def flows(self):
        workload = self.results.get("workload")
        if workload is None:
            return dataframe([])
        return dataframe([_flat(bucket) for bucket in workload.get("by_size", [])])

    @property
    def training(self):
        training = self.results.get("training")
        if training is None:
            return dataframe([])
        return dataframe([_flat(rank) for rank in training.get("per_rank", [])])

    @property
    def endpoints(self):
        counters = self.results.get("endpoints", {})
        return dataframe([{"counter": k, "value": v} for k, v in counters.items()])

    @property
    def messages(self):
        if self._messages is None:
            raise ValueError("no message records: run with records=True")
        return dataframe([_flat(m) for m in self._messages])

    def key_figures(self) -> list[dict]:
        """What a sweep keeps of a run: its outcome, and a row per collective size or
        the traffic's FCT percentiles."""
        base = {"complete": self.complete, "sim_time_ps": self.results.get("sim_time_ps"),
                "events": self.results.get("events")}
        section = self.results.get("collective")
        if section is not None:
            return [{**base, "size_bytes": r["size_bytes"], "time_us": r["time_us"], "algbw_GBps": r["algbw_GBps"],
                     "busbw_GBps": r["busbw_GBps"], "algorithm": r.get("algorithm"), "nccl_proto": r.get("nccl_proto")}
                    for r in section["rows"]]
        workload = self.results.get("workload")
        if workload is not None and "fct_us" in workload:
            return [{**base, **{f"fct_us.{k}": v for k, v in workload["fct_us"].items()}}]
        training = self.results.get("training")
        if training is not None:
            return [{**base, **{k: v for k, v in training.items() if not isinstance(v, (dict, list))}}]
        return [base]

    def __repr__(self) -> str:
        return f"Result({self.results.get('config_name')!r}, complete={self.complete})"


def collective_table(result: Result, root: int = 0):
    """The collective's rows as nccl-tests prints them: size, count, type, redop, root,
    time_us, algbw_GBps, busbw_GBps, then what the engine adds (`root`: the config's,
    for broadcast and reduce)."""
    section = result.results["collective"]
    op, ranks = section["op"], section["ranks"]
    rows = []
    for row in section["rows"]:
        size, count, kind, redop, shown_root = _fabricsim.nccl_tests_columns(op, row["size_bytes"], ranks, root)
        flat = _flat(row)
        rows.append({"size": size, "count": count, "type": kind, "redop": redop, "root": shown_root,
                     "time_us": flat.pop("time_us"), "algbw_GBps": flat.pop("algbw_GBps"),
                     "busbw_GBps": flat.pop("busbw_GBps"), **flat})
    table = dataframe(rows)
    table.attrs["op"] = op
    table.attrs["ranks"] = ranks
    table.attrs["model"] = section.get("model")
    table.attrs["result"] = result
    return table
