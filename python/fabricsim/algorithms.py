"""Collective algorithms written in Python.

An algorithm is a function given the ranks (each with its endpoint, its node and its
place in the node, which is its rail on a rail-optimized cluster) and the operation; it
returns a Program, one list of steps per rank over the operation's buffer cut into
`chunks` slots (plus scratch slots):

    @fabricsim.algorithm(name="my_ring")
    def my_ring(ranks, op):
        n = len(ranks)
        p = fabricsim.Program(op, ranks=n, chunks=n)
        ...  # p.send(r, peer, chunk), p.recv(r, peer, chunk), p.recv_reduce(...), ...
        return p

    fabricsim.collective(scenario, algo=my_ring, sizes=("1MiB", "1GiB"))

Sends and receives match in order per (sender, receiver, channel); `after` lists steps
of the same rank that must finish first. Before it runs, the engine checks the program
as it checks every custom algorithm (docs/collectives.md): matched sends and receives,
no cycle, and a symbolic run of the data, so a wrong algorithm is refused with the rank
and chunk it gets wrong. `to_steps_yaml()` and `to_msccl_xml()` export it for the CLI
(`--algo steps --file F.yaml`, `--algo msccl --file F.xml`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, Iterable

OPS = ("all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "all_to_all", "send_recv")


@dataclass(frozen=True)
class Rank:
    rank: int
    endpoint: str  # the endpoint's name in the fabric (results name links by it)
    node: int      # ranks of a node share its NVSwitch domain
    local: int     # its place in the node: its rail on a rail-optimized cluster


@dataclass
class Step:
    kind: str  # send, recv, recv_reduce, copy, reduce, nop
    peer: int = -1
    src: int = -1
    dst: int = -1
    count: int = 1
    channel: int = 0
    after: tuple = ()


@dataclass
class Program:
    """Per-rank steps over `slots` buffer slots, of which the operation's buffer is the
    `chunks` from `output_offset` (more slots are scratch). Each method adds a step to
    rank `rank`'s program and returns its index there, for `after` lists."""

    op: str
    ranks: int
    chunks: int
    slots: int | None = None
    output_offset: int = 0
    root: int = 0
    name: str = "python"
    steps: list = field(default_factory=list)

    def __post_init__(self):
        if self.op not in OPS:
            raise ValueError(f"op: expected one of {', '.join(OPS)}, got {self.op!r}")
        if self.ranks < 2:
            raise ValueError(f"ranks: expected at least 2, got {self.ranks}")
        if self.slots is None:
            self.slots = self.chunks
        self.steps = [[] for _ in range(self.ranks)]

    def _add(self, rank: int, step: Step) -> int:
        if not 0 <= rank < self.ranks:
            raise ValueError(f"rank {rank}: expected 0..{self.ranks - 1}")
        for d in step.after:
            if not 0 <= d < len(self.steps[rank]):
                raise ValueError(f"rank {rank}: `after` names step {d}, which it does not have yet")
        self.steps[rank].append(step)
        return len(self.steps[rank]) - 1

    def send(self, rank: int, peer: int, chunk: int, count: int = 1, channel: int = 0, after: Iterable[int] = ()) -> int:
        return self._add(rank, Step("send", peer=peer, src=chunk, count=count, channel=channel, after=tuple(after)))

    def recv(self, rank: int, peer: int, chunk: int, count: int = 1, channel: int = 0, after: Iterable[int] = ()) -> int:
        return self._add(rank, Step("recv", peer=peer, dst=chunk, count=count, channel=channel, after=tuple(after)))

    def recv_reduce(self, rank: int, peer: int, chunk: int, count: int = 1, channel: int = 0,
                    after: Iterable[int] = ()) -> int:
        return self._add(rank, Step("recv_reduce", peer=peer, dst=chunk, count=count, channel=channel, after=tuple(after)))

    def copy(self, rank: int, src: int, to: int, count: int = 1, after: Iterable[int] = ()) -> int:
        return self._add(rank, Step("copy", src=src, dst=to, count=count, after=tuple(after)))

    def reduce(self, rank: int, src: int, to: int, count: int = 1, after: Iterable[int] = ()) -> int:
        return self._add(rank, Step("reduce", src=src, dst=to, count=count, after=tuple(after)))

    def nop(self, rank: int, after: Iterable[int] = ()) -> int:
        return self._add(rank, Step("nop", after=tuple(after)))

    def to_steps_yaml(self) -> str:
        """Our YAML steps (docs/collectives.md), for `--algo steps --file`."""
        lines = [f"name: {json.dumps(self.name)}", f"op: {self.op}", f"ranks: {self.ranks}", f"chunks: {self.chunks}",
                 f"slots: {self.slots}", f"output_offset: {self.output_offset}", f"root: {self.root}", "programs:"]
        for rank, steps in enumerate(self.steps):
            lines.append(f"  - rank: {rank}")
            lines.append("    steps:" + (" []" if not steps else ""))
            for s in steps:
                if s.kind == "send":
                    keys = [f"send: {s.peer}", f"chunk: {s.src}"]
                elif s.kind in ("recv", "recv_reduce"):
                    keys = [f"recv: {s.peer}", f"chunk: {s.dst}"] + (["reduce: true"] if s.kind == "recv_reduce" else [])
                elif s.kind in ("copy", "reduce"):
                    keys = [f"{'copy' if s.kind == 'copy' else 'add'}: {s.src}", f"to: {s.dst}"]
                else:
                    keys = ["nop: true"]
                if s.count != 1:
                    keys.append(f"count: {s.count}")
                if s.channel != 0 and s.kind in ("send", "recv", "recv_reduce"):
                    keys.append(f"channel: {s.channel}")
                if s.after:
                    keys.append(f"after: [{', '.join(str(d) for d in s.after)}]")
                lines.append("      - {" + ", ".join(keys) + "}")
        return "\n".join(lines) + "\n"

    def to_msccl_xml(self) -> str:
        """MSCCL's XML (docs/collectives.md), for `--algo msccl --file`.

        Each rank's steps go to thread blocks by (send peer, receive peer, channel) as
        MSCCL's are, local copies and reductions to a block of their own; a step waits
        for its block's earlier steps in order, and for each step of another block it
        names in `after` through a nop carrying that one dependency (MSCCL's steps have
        one each). In-place algorithms only: the buffer is `i`, scratch slots `s`.
        """
        if self.output_offset != 0:
            raise ValueError("to_msccl_xml: expected an in-place program (output_offset 0)")
        scratch = self.slots - self.chunks

        def where(slot: int):
            return ("i", slot) if slot < self.chunks else ("s", slot - self.chunks)

        out = [f'<algo name="{self.name}" nchunksperloop="{self.chunks}" nchannels="1" proto="Simple" '
               f'ngpus="{self.ranks}" coll="{self.op.replace("_", "")}" inplace="1">']
        for rank, steps in enumerate(self.steps):
            blocks: dict[tuple, int] = {}
            block_steps: list[list[str]] = []
            placed: dict[int, tuple[int, int]] = {}  # step -> (block, its index there)
            for index, s in enumerate(steps):
                if s.kind == "send":
                    key = ("send", s.peer, s.channel)
                elif s.kind in ("recv", "recv_reduce"):
                    key = ("recv", s.peer, s.channel)
                else:
                    key = ("local",)
                if key not in blocks:
                    blocks[key] = len(block_steps)
                    block_steps.append([])
                b = blocks[key]
                body = block_steps[b]
                foreign = [placed[d] for d in s.after if placed[d][0] != b]
                for dep_block, dep_index in foreign[:-1] if foreign else []:
                    body.append(f'<step s="{len(body)}" type="nop" srcbuf="i" srcoff="-1" dstbuf="i" dstoff="-1" cnt="0" '
                                f'depid="{dep_block}" deps="{dep_index}" hasdep="0"/>')
                dep_block, dep_index = foreign[-1] if foreign else (-1, -1)
                kind = {"send": "s", "recv": "r", "recv_reduce": "rrc", "copy": "cpy", "reduce": "re", "nop": "nop"}[s.kind]
                src = where(s.src) if s.src >= 0 else ("i", -1)
                dst = where(s.dst) if s.dst >= 0 else ("i", -1)
                if s.kind == "send":
                    dst = src
                if s.kind in ("recv", "recv_reduce"):
                    src = dst
                cnt = s.count if s.kind != "nop" else 0
                body.append(f'<step s="{len(body)}" type="{kind}" srcbuf="{src[0]}" srcoff="{src[1]}" dstbuf="{dst[0]}" '
                            f'dstoff="{dst[1]}" cnt="{cnt}" depid="{dep_block}" deps="{dep_index}" hasdep="0"/>')
                placed[index] = (b, len(body) - 1)
            # hasdep: some step elsewhere waits for this one.
            waited = {placed[d] for s in steps for d in s.after}
            out.append(f'  <gpu id="{rank}" i_chunks="{self.chunks}" o_chunks="0" s_chunks="{scratch}">')
            for key, b in blocks.items():
                send = key[1] if key[0] == "send" else -1
                recv = key[1] if key[0] == "recv" else -1
                channel = key[2] if len(key) > 2 else 0
                out.append(f'    <tb id="{b}" send="{send}" recv="{recv}" chan="{channel}">')
                for i, line in enumerate(block_steps[b]):
                    if (b, i) in waited:
                        line = line.replace('hasdep="0"', 'hasdep="1"')
                    out.append("      " + line)
                out.append("    </tb>")
            out.append("  </gpu>")
        out.append("</algo>")
        return "\n".join(out) + "\n"


class Algorithm:
    """A collective algorithm written in Python: `build(ranks, op)` returns a Program."""

    def __init__(self, build: Callable[[list, str], Program], name: str | None = None):
        self.build = build
        self.name = name or build.__name__

    def program(self, scenario, op: str, ranks: int | None = None) -> Program:
        placed = scenario.ranks()
        if ranks is not None:
            placed = placed[:ranks]
        p = self.build(placed, op)
        if not isinstance(p, Program):
            raise TypeError(f"algorithm {self.name}: expected a Program, got {type(p).__name__}")
        if p.op != op:
            raise ValueError(f"algorithm {self.name}: built a {p.op} program, asked for {op}")
        p.name = self.name
        return p

    def write_steps(self, path: str, scenario, op: str, ranks: int | None = None) -> None:
        with open(path, "w") as f:
            f.write(self.program(scenario, op, ranks).to_steps_yaml())

    def __call__(self, ranks, op):
        return self.build(ranks, op)

    def __repr__(self) -> str:
        return f"Algorithm({self.name!r})"


def algorithm(fn: Callable | None = None, *, name: str | None = None):
    """Makes a function (ranks, op) -> Program an algorithm `collective(algo=...)` runs."""
    if fn is None:
        return lambda f: Algorithm(f, name)
    return Algorithm(fn, name)
