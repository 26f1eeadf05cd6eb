"""A what-if sweep read back as a DataFrame: a permutation of 1 MiB flows on a
two-tier leaf/spine of 32 hosts, over fabric link speeds and spine counts (4 leaves of 8
hosts: 2 spines is 4:1 oversubscribed, 8 spines 1:1). Writes whatif_sweep.csv to the
folder given (default: the current one).

    python3 examples/python/whatif_sweep.py [OUT_DIR]
"""
import os
import sys

import fabricsim as fs

FABRIC = {
    "name": "leaf_spine_32",
    "topology": {"kind": "leaf_spine", "leaves": 4, "hosts_per_leaf": 8, "spines": 8,
                 "host_link": {"bandwidth": "400Gbps", "latency": "1us"}, "fabric_link": {"bandwidth": "100Gbps", "latency": "1us"}},
    "network": {"mtu": 4096, "pfc": {}, "buffer": {"size": "32MiB"}},
    "workload": {"kind": "permutation", "bytes": "1MiB"},
}


def main(out_dir="."):
    table = fs.sweep(fs.load(FABRIC), {
        "topology.fabric_link.bandwidth": ["100Gbps", "200Gbps", "400Gbps"],
        "topology.spines": [2, 4, 8],
    })
    table["oversubscription"] = 8 / table["topology.spines"]
    table["finish_us"] = table["sim_time_ps"] / 1e6
    table.to_csv(os.path.join(out_dir, "whatif_sweep.csv"), index=False)
    print(table.pivot(index="topology.fabric_link.bandwidth", columns="oversubscription", values="finish_us").round(1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
