"""Mapping and evaluation: the same results as the CLI, real properties, bad input."""

import json
import signal
import threading
import time

import numpy as np
import pytest

import taskmap
from conftest import FIXTURES

GRAPHS = ["delaunay_n10.graph", "b12.bench", "NPB-cg_64ranks.graphStats.txt.gz"]
TARGETS = ["torus:4x4", "tree:4:2:2/1:10:100", "complete:8"]


@pytest.mark.parametrize("graph", GRAPHS)
@pytest.mark.parametrize("target", TARGETS)
def test_same_mapping_and_cost_as_the_cli(cli, tmp_path, graph, target):
    path = FIXTURES / graph
    out = tmp_path / "cli.txt"
    report = cli.json("map", "-g", path, "-a", target, "-s", 3, "-o", out)
    cli_pes = [int(line) for line in out.read_text().split()]
    pes = taskmap.map(str(path), target, seed=3)
    assert pes.dtype == np.uint32 and pes.shape == (len(cli_pes),)
    assert pes.tolist() == cli_pes
    ev = taskmap.evaluate(str(path), target, pes)
    assert ev["comm_cost"] == report["evaluation"]["comm_cost"]


def test_evaluate_has_the_keys_and_values_of_eval(cli, tmp_path):
    path = FIXTURES / "delaunay_n10.graph"
    pes = taskmap.map(taskmap.read_graph(path), "mesh:4x4", seed=1)
    mfile = tmp_path / "m.txt"
    mfile.write_text("\n".join(map(str, pes.tolist())) + "\n")
    want = cli.json("eval", "-g", path, "-a", "mesh:4x4", "-m", mfile, "--congestion")
    got = taskmap.evaluate(str(path), taskmap.Arch("mesh:4x4"), pes, congestion=True)
    assert got == want


def naive_cost(g, arch, pes):
    xadj, adjncy, adjwgt, _ = g.csr()
    d = arch.distances()
    cost = cut = 0
    for u in range(g.num_tasks):
        for j in range(xadj[u], xadj[u + 1]):
            v = adjncy[j]
            if u < v:
                cost += int(adjwgt[j]) * int(d[pes[u], pes[v]])
                cut += int(adjwgt[j]) * (pes[u] != pes[v])
    return cost, cut


@pytest.mark.parametrize("algorithm", ["multilevel", "drb", "gtwp", "block"])
def test_costs_equal_a_naive_recomputation_and_balance_holds(algorithm):
    g = taskmap.read_graph(FIXTURES / "delaunay_n10.graph")
    arch = taskmap.Arch("tree:2:4/1:10")
    pes = taskmap.map(g, arch, algorithm=algorithm, seed=5)
    ev = taskmap.evaluate(g, arch, pes, epsilon=0.03)
    assert (ev["comm_cost"], ev["edge_cut"]) == naive_cost(g, arch, pes)
    loads = np.bincount(pes, minlength=arch.pes)
    bound = int(1.03 * -(-g.num_tasks // arch.pes))  # floor((1 + eps) * ceil(n / k))
    assert loads.max() == ev["loads"][0]["max"] <= bound
    assert ev["balanced"] is True


def test_same_seed_same_mapping_and_threads():
    g = taskmap.read_graph(FIXTURES / "delaunay_n10.graph")
    a = taskmap.map(g, "torus:4x4", seed=11, threads=2)
    b = taskmap.map(g, "torus:4x4", seed=11, threads=2)
    assert np.array_equal(a, b)
    assert len(set(taskmap.map(g, "torus:4x4", seed=s).tobytes() for s in range(4))) > 1


def test_capacities_fixed_and_presets():
    g = taskmap.read_graph(FIXTURES / "delaunay_n10.graph")
    fixed = np.full(g.num_tasks, -1)
    fixed[:10] = 7
    pes = taskmap.map(g, "torus:4x4", fixed=fixed, preset="fast")
    assert (pes[:10] == 7).all()
    caps = np.full(16, 70)
    caps[0] = 10
    pes = taskmap.map(g, "torus:4x4", capacities=caps)
    loads = np.bincount(pes, minlength=16)
    assert loads[0] <= 10 and loads.max() <= 70
    ev = taskmap.evaluate(g, "torus:4x4", pes, capacities=caps)
    assert ev["capacities_respected"] is True
    assert taskmap.map(g, "complete:4", time_limit=0.5, algorithm="multilevel,vcycles=3").shape == (1024,)


def test_infeasible_capacities_warn():
    g = taskmap.read_graph(FIXTURES / "delaunay_n10.graph")
    with pytest.warns(RuntimeWarning) as caught:
        taskmap.map(g, "complete:4", capacities=100)
    messages = [str(w.message) for w in caught]
    assert any(m.startswith("infeasible: the PEs can carry 400") for m in messages), messages
    assert any(m.startswith("constraint violated") for m in messages), messages


@pytest.mark.parametrize(
    "kwargs, kind",
    [
        (dict(algorithm="nonsense"), ValueError),
        (dict(algorithm="multilevel,nonsense=1"), ValueError),
        (dict(preset="nonsense"), ValueError),
        (dict(threads=0), ValueError),
        (dict(time_limit=-1.0), ValueError),
        (dict(fixed=[0, 1]), ValueError),
        (dict(fixed=np.full(1024, 16)), ValueError),
        (dict(capacities=np.ones((3, 3), dtype=int)), ValueError),
        (dict(capacities=[1.5] * 16), TypeError),
    ],
)
def test_bad_map_arguments_raise(kwargs, kind):
    g = taskmap.read_graph(FIXTURES / "delaunay_n10.graph")
    with pytest.raises(kind):
        taskmap.map(g, "torus:4x4", **kwargs)


def test_bad_mappings_raise():
    g = taskmap.read_graph(FIXTURES / "delaunay_n10.graph")
    with pytest.raises(ValueError):
        taskmap.evaluate(g, "torus:4x4", np.zeros(10, dtype=np.uint32))
    with pytest.raises(ValueError):
        taskmap.evaluate(g, "torus:4x4", np.full(1024, 16))
    with pytest.raises(TypeError):
        taskmap.evaluate(g, "torus:4x4", np.zeros(1024))
    with pytest.raises(TypeError):
        taskmap.map(42, "torus:4x4")


def test_kahip_process_mapping_example():
    """KaHIP's documented example (misc/example_library_call): the manual's graph onto
    a hierarchy of 2 x 2 PEs at distances 1 and 100."""
    xadj = [0, 2, 5, 7, 9, 12]
    adjncy = [1, 4, 0, 2, 4, 1, 3, 2, 4, 0, 1, 3]
    hierarchy, distance = [2, 2], [1, 100]
    edgecut, qap, blocks = taskmap.process_mapping(
        5, None, xadj, None, adjncy, hierarchy, distance, 0.03, 0, taskmap.STRONG, taskmap.MAPMODE_MULTISECTION
    )
    assert isinstance(blocks, list) and len(blocks) == 5 and all(0 <= b < 4 for b in blocks)
    assert max(np.bincount(blocks, minlength=4)) <= 2  # floor(1.03 * ceil(5/4))
    g = taskmap.Graph.from_csr(xadj, adjncy)
    cost, cut = naive_cost(g, taskmap.Arch("tree:2:2/1:100"), np.array(blocks))
    assert (edgecut, qap) == (cut, 2 * cost)
    with pytest.raises(ValueError):
        taskmap.process_mapping(4, None, xadj, None, adjncy, hierarchy, distance)
    with pytest.raises(ValueError):
        taskmap.process_mapping(5, None, xadj, None, adjncy, [2, 2], [1])


def test_process_mapping_reads_the_hierarchy_bottom_up():
    g = taskmap.read_graph(FIXTURES / "delaunay_n10.graph")
    xadj, adjncy, adjwgt, vwgt = g.csr()
    edgecut, qap, blocks = taskmap.process_mapping(
        g.num_tasks, vwgt, xadj, adjwgt, adjncy, [4, 2, 3], [1, 10, 100], 0.03, 7, taskmap.FAST
    )
    # 4 PEs share a group at distance 1, 2 groups a group at 10, 3 of those at 100
    tree = taskmap.Arch("tree:4:2:3/1:10:100")
    assert (tree.distance(0, 3), tree.distance(0, 4), tree.distance(0, 8)) == (1, 10, 100)
    cost, cut = naive_cost(g, tree, np.array(blocks))
    assert (edgecut, qap) == (cut, 2 * cost)
    assert blocks == taskmap.map(g, tree, preset="fast", epsilon=0.03, seed=7).tolist()


def test_costs_beyond_64_bits_are_reported():
    g = taskmap.Graph.from_edges([0], [1], [2**62])
    ev = taskmap.evaluate(g, "tree:2/3", [0, 1])
    assert ev["comm_cost"] == 3 * 2**62 and ev["comm_cost_j"] == 6 * 2**62


def test_machine_targets_give_launch_files(cli, tmp_path):
    path = FIXTURES / "NPB-cg_64ranks.graphStats.txt.gz"
    spec = "nodes:4,package:2,core:8/100,20,2"
    rankfile, hosts = tmp_path / "cg.rankfile", tmp_path / "cg.hosts"
    cli("map", "-g", path, "-a", spec, "-o", tmp_path / "cg.txt", "--rankfile", rankfile, "--slurm-hostfile", hosts)
    arch = taskmap.Arch(spec)
    pes = taskmap.map(str(path), arch)
    assert arch.rankfile(pes) == rankfile.read_text()
    assert arch.slurm_hostfile(pes) == hosts.read_text()
    want = cli.json("eval", "-g", path, "-a", spec, "-m", tmp_path / "cg.txt")
    assert taskmap.evaluate(str(path), arch, pes) == want
    assert "launch" in want
    with pytest.raises(ValueError):
        taskmap.Arch("torus:4x4").rankfile(np.zeros(64, dtype=np.uint32))


def test_a_time_limit_the_algorithm_ignores_warns():
    g = taskmap.read_graph(FIXTURES / "delaunay_n10.graph")
    with pytest.warns(RuntimeWarning, match="ignores it"):
        taskmap.map(g, "torus:4x4", algorithm="drb", time_limit=10.0)


def test_ctrl_c_stops_a_long_run():
    side = 400  # a 160,000-task grid, strong preset, 20 V-cycles: seconds of work
    idx = np.arange(side * side).reshape(side, side)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    g = taskmap.Graph.from_edges(u, v)
    returned = threading.Event()

    def interrupt():
        if not returned.is_set():
            signal.raise_signal(signal.SIGINT)

    # Python's own Ctrl-C handler, whatever the process inherited: started with SIGINT
    # ignored (a background job of a non-interactive shell), Python keeps it ignored and
    # the signal would never reach the run.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, interrupt)
    timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            taskmap.map(g, "torus:16x16", preset="strong", algorithm="multilevel,vcycles=20")
    finally:
        returned.set()
        timer.cancel()
        # (None: a handler not installed from Python, which cannot be put back.)
        if inherited is not None:
            signal.signal(signal.SIGINT, inherited)
    # the wait ends within a few signal polls of the interrupt, not with the run
    assert time.monotonic() - t0 < 0.3 + 5.0
