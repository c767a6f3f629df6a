"""Map a scipy.sparse communication matrix onto a hierarchical machine and plot the
traffic by distance.

    pip install . matplotlib scipy
    python examples/scipy_tree.py [--out traffic.png]

The matrix is a 2-D five-point stencil on a 64 x 64 grid (4,096 tasks) with a few random
long-range messages, as scipy builds it; the machine is 4 nodes of 2 packages of 8 cores
(`tree:8:2:4/1:10:100`, counts bottom-up). The script maps it with taskmap and, for
comparison, places the tasks in order (task i on PE i // 64, as an MPI launcher would),
then draws the communication volume at each distance for both.
"""

import argparse

import numpy as np
import scipy.sparse as sp

import taskmap


def stencil_matrix(side: int, extra: int, seed: int) -> sp.csr_matrix:
    """The five-point stencil on a side x side grid, plus `extra` random messages."""
    n = side * side
    idx = np.arange(n).reshape(side, side)
    rows = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    cols = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    rng = np.random.default_rng(seed)
    rows = np.concatenate([rows, rng.integers(0, n, extra)])
    cols = np.concatenate([cols, rng.integers(0, n, extra)])
    vols = np.concatenate([np.full(2 * side * (side - 1), 100), rng.integers(1, 20, extra)])
    return sp.csr_matrix((vols, (rows, cols)), shape=(n, n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="traffic.png", help="the plot (PNG)")
    args = parser.parse_args()

    graph = taskmap.Graph.from_scipy(stencil_matrix(64, 2000, seed=1))
    arch = taskmap.Arch("tree:8:2:4/1:10:100")
    mapped = taskmap.map(graph, arch, seed=0)
    in_order = np.arange(graph.num_tasks, dtype=np.uint32) * arch.pes // graph.num_tasks
    runs = {"taskmap": taskmap.evaluate(graph, arch, mapped), "ranks in order": taskmap.evaluate(graph, arch, in_order)}
    for name, ev in runs.items():
        print(f"{name:15} f_C {ev['comm_cost']:>10,}  cut {ev['edge_cut']:>8,}  max load {ev['loads'][0]['max']}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    distances = sorted({h["distance"] for ev in runs.values() for h in ev["distance_histogram"]})
    fig, ax = plt.subplots(figsize=(6, 3.5))
    width = 0.8 / len(runs)
    for i, (name, ev) in enumerate(runs.items()):
        by_distance = {h["distance"]: h["weight"] for h in ev["distance_histogram"]}
        ax.bar(
            np.arange(len(distances)) + i * width,
            [by_distance.get(d, 0) for d in distances],
            width,
            label=f"{name} (f_C {ev['comm_cost']:,})",
        )
    ax.set_xticks(np.arange(len(distances)) + width * (len(runs) - 1) / 2)
    ax.set_xticklabels([str(d) for d in distances])
    ax.set_xlabel("distance between the two tasks' PEs")
    ax.set_ylabel("communication volume")
    ax.set_yscale("log")
    ax.set_title("4,096 tasks onto 4 nodes x 2 packages x 8 cores")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
