"""A hierarchical AllReduce written in Python, against NCCL's ring and NCCL's own
choice (`auto`) on four DGX H100 nodes: inside each node a reduce-scatter over NVSwitch,
between nodes a ring per rail, inside each node an all-gather. Writes the busbw table
(hierarchical_allreduce.csv) and a plot (hierarchical_allreduce.png) to the folder given
(default: the current one).

    python3 examples/python/hierarchical_allreduce.py [OUT_DIR]
"""
import os
import sys

import fabricsim as fs

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


@fs.algorithm(name="hierarchical")
def hierarchical(ranks, op):
    n, nodes = len(ranks), 1 + max(r.node for r in ranks)
    g = n // nodes                                # GPUs a node; GPU l owns segment l
    p = fs.Program(op, ranks=n, chunks=n)         # segment l: chunks l*nodes .. l*nodes+nodes-1
    node_of = lambda r: [x.rank for x in ranks if x.node == r.node]
    for r in ranks:
        peers, mine = [q for q in node_of(r) if q != r.rank], r.local * nodes
        sent = [p.send(r.rank, q, ranks[q].local * nodes, count=nodes) for q in peers]
        got = [p.recv_reduce(r.rank, q, mine, count=nodes, after=sent) for q in peers]
        ring = [x.rank for x in ranks if x.local == r.local]   # this rail, one GPU a node
        i, last = ring.index(r.rank), got
        nxt, prv = ring[(i + 1) % nodes], ring[(i - 1) % nodes]
        for t in range(nodes - 1):                 # the rail's ring: reduce-scatter ...
            s = p.send(r.rank, nxt, mine + (i - 1 - t) % nodes, channel=1, after=last)
            last = [p.recv_reduce(r.rank, prv, mine + (i - 2 - t) % nodes, channel=1, after=[s])]
        for t in range(nodes - 1):                 # ... and all-gather
            s = p.send(r.rank, nxt, mine + (i - t) % nodes, channel=2, after=last)
            last = [p.recv(r.rank, prv, mine + (i - 1 - t) % nodes, channel=2, after=[s])]
        done = [p.send(r.rank, q, mine, count=nodes, channel=3, after=last) for q in peers]
        for q in peers:
            p.recv(r.rank, q, ranks[q].local * nodes, count=nodes, channel=3, after=last + sent)
    return p


def main(out_dir="."):
    cluster = fs.load(os.path.join(ROOT, "configs", "dgx_h100_2node_allreduce.yaml"), {"topology.nodes": 4})
    sizes = ("1MiB", "256MiB")
    # Programs written by hand run on the network without NCCL's protocol costs (as MSCCL
    # programs do here), so the ring on the same terms ("ring_ideal", protocol none) is
    # the like-for-like baseline; ring and auto are what NCCL would do.
    runs = (("hierarchical", hierarchical, None), ("ring_ideal", "ring", "none"), ("ring", "ring", None), ("auto", "auto", None))
    tables = {name: fs.collective(cluster, algo=algo, proto=proto, sizes=sizes, factor=4, check=True)
              for name, algo, proto in runs}
    busbw = fs._frames.pandas().DataFrame({"size": tables["ring"]["size"]})
    for name, table in tables.items():
        busbw[f"{name}_busbw_GBps"] = table["busbw_GBps"].round(2)
    busbw["auto_algorithm"] = tables["auto"]["nccl_algo"] + "/" + tables["auto"]["nccl_proto"]
    busbw.to_csv(os.path.join(out_dir, "hierarchical_allreduce.csv"), index=False)
    print(busbw.to_string(index=False))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    for name in tables:
        ax.plot(busbw["size"], busbw[f"{name}_busbw_GBps"], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("size (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title("AllReduce on 4 x DGX H100 (fabricsim)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "hierarchical_allreduce.png"), dpi=120)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
