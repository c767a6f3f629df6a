"""Graphs from arrays, edge lists, scipy matrices and files; targets."""

import numpy as np
import pytest
import scipy.sparse as sp

import taskmap
from conftest import FIXTURES

# KaHIP's example graph (the manual's five tasks).
XADJ = [0, 2, 5, 7, 9, 12]
ADJNCY = [1, 4, 0, 2, 4, 1, 3, 2, 4, 0, 1, 3]


def test_csr_round_trip_and_dtypes():
    g = taskmap.Graph.from_csr(XADJ, ADJNCY)
    xadj, adjncy, adjwgt, vwgt = g.csr()
    assert (g.num_tasks, g.num_edges, g.ncon, len(g)) == (5, 6, 1, 5)
    assert xadj.dtype == np.int64 and adjncy.dtype == np.uint32
    assert adjwgt.dtype == np.uint64 and vwgt.dtype == np.uint64
    assert xadj.tolist() == XADJ and adjncy.tolist() == ADJNCY
    assert adjwgt.tolist() == [1] * 12 and vwgt.shape == (5,)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint32, np.int64, np.uint64])
def test_any_integer_dtype_gives_the_same_graph(dtype):
    ref = taskmap.Graph.from_csr(XADJ, ADJNCY, [1, 2, 3, 4, 5], [2] * 12)
    g = taskmap.Graph.from_csr(
        np.array(XADJ, dtype=dtype),
        np.array(ADJNCY, dtype=dtype),
        np.array([1, 2, 3, 4, 5], dtype=dtype),
        np.array([2] * 12, dtype=dtype),
    )
    for a, b in zip(ref.csr(), g.csr()):
        assert np.array_equal(a, b)


def test_several_vertex_weights():
    vw = np.arange(10).reshape(5, 2)
    g = taskmap.Graph.from_csr(XADJ, ADJNCY, vw)
    assert g.ncon == 2
    assert g.csr()[3].shape == (5, 2)
    assert g.csr()[3].tolist() == vw.tolist()


@pytest.mark.parametrize(
    "xadj, adjncy, kind",
    [
        ([0.0, 2.0], [1, 0], TypeError),  # floats
        ([[0, 2]], [1, 0], ValueError),  # 2-D
        ([0, 1, 2], [1, -1], ValueError),  # negative id
        ([0, 1, 1], [1], ValueError),  # not symmetric
        ([0, 1, 2], [0, 0], ValueError),  # self-loop
        ([0, 1, 2], [1, 5], ValueError),  # id out of range
        ([], [], ValueError),  # no offsets
        ([0, 5, 2, 2], [1, 0], ValueError),  # offsets past the adjacency, then back
    ],
)
def test_bad_csr_raises(xadj, adjncy, kind):
    with pytest.raises(kind):
        taskmap.Graph.from_csr(xadj, adjncy)


def test_bad_weights_raise():
    with pytest.raises(ValueError):
        taskmap.Graph.from_csr(XADJ, ADJNCY, vwgt=[1, 2, 3])
    with pytest.raises(ValueError):
        taskmap.Graph.from_csr(XADJ, ADJNCY, adjwgt=[1] * 11)
    with pytest.raises(ValueError):
        taskmap.Graph.from_csr(XADJ, ADJNCY, adjwgt=[0] * 12)
    with pytest.raises(ValueError):
        taskmap.Graph.from_edges([0], [1], [0])
    with pytest.raises(ValueError):
        taskmap.Graph.from_edges([0], [1], n=2**31)  # far more tasks than the edges make room for


def test_edges_are_summed_both_ways_and_self_pairs_dropped():
    g = taskmap.Graph.from_edges([0, 1, 1, 2], [1, 0, 2, 2], [3, 2, 1, 9])
    xadj, adjncy, adjwgt, _ = g.csr()
    assert g.num_tasks == 3 and g.num_edges == 2
    row0 = dict(zip(adjncy[xadj[0] : xadj[1]].tolist(), adjwgt[xadj[0] : xadj[1]].tolist()))
    assert row0 == {1: 5}
    assert taskmap.Graph.from_edges([0], [1], n=4).num_tasks == 4
    with pytest.raises(ValueError):
        taskmap.Graph.from_edges([0], [3], n=2)


def _rows(g):
    xadj, adjncy, adjwgt, _ = g.csr()
    return [
        sorted(zip(adjncy[xadj[u] : xadj[u + 1]].tolist(), adjwgt[xadj[u] : xadj[u + 1]].tolist()))
        for u in range(g.num_tasks)
    ]


def test_scipy_matrix_is_made_symmetric_by_addition():
    a = sp.csr_matrix(
        np.array(
            [
                [7.0, 3.0, 0.0, 0.0],
                [2.0, 0.0, 0.4, 0.0],
                [0.0, 0.0, 0.0, 2.6],
                [0.0, 0.0, 0.0, 0.0],
            ]
        )
    )
    g = taskmap.Graph.from_scipy(a)
    # a01 + a10 = 3 + 2; max(1, round(0.4)) = 1; round(2.6) = 3; the diagonal dropped
    assert _rows(g) == [[(1, 5)], [(0, 5), (2, 1)], [(1, 1), (3, 3)], [(2, 3)]]
    # any sparse format and integer matrices
    assert _rows(taskmap.Graph.from_scipy(sp.coo_array(np.array([[0, -4], [0, 0]])))) == [[(1, 4)], [(0, 4)]]
    with pytest.raises(ValueError):
        taskmap.Graph.from_scipy(sp.csr_matrix(np.ones((2, 3))))
    with pytest.raises(TypeError):
        taskmap.Graph.from_scipy(np.ones((2, 2)))


def test_scipy_matrix_equals_the_matrix_market_reader(tmp_path):
    import scipy.io

    path = FIXTURES / "small_general_real.mtx"
    from_file = taskmap.read_graph(path)
    from_scipy = taskmap.Graph.from_scipy(scipy.io.mmread(str(path)))
    assert _rows(from_file) == _rows(from_scipy)
    out = tmp_path / "g.graph"
    from_scipy.write(out)
    assert _rows(taskmap.read_graph(str(out))) == _rows(from_file)


def test_file_errors_name_the_file_and_line(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        taskmap.read_graph(tmp_path / "missing.graph")
    assert e.value.filename.endswith("missing.graph")
    bad = tmp_path / "bad.graph"
    bad.write_text("3 2\n2\n1 3\nx\n")
    with pytest.raises(taskmap.FormatError) as e:
        taskmap.read_graph(bad)
    assert e.value.lineno == 4 and e.value.filename == str(bad)
    assert isinstance(e.value, ValueError) and isinstance(e.value, OSError)
    with pytest.raises(ValueError):
        taskmap.read_graph(bad, format="nonsense")


def test_threads_read_and_evaluate_alike(tmp_path):
    # A METIS file above 1 MiB is read in pieces on 2 threads: the same graph; a mapping
    # evaluates the same on 1 and 3 threads.
    n = 200_000
    u = np.arange(n - 1)
    g = taskmap.Graph.from_edges(np.concatenate([u, u[: n - 7]]),
                                 np.concatenate([u + 1, u[: n - 7] + 7]), n=n)
    path = tmp_path / "big.graph"
    g.write(path)
    assert path.stat().st_size > 1 << 20
    one, two = taskmap.read_graph(path), taskmap.read_graph(path, threads=2)
    for a, b in zip(one.csr(), two.csr()):
        assert np.array_equal(a, b)
    pes = np.arange(n) % 16
    assert taskmap.evaluate(one, "torus:4x4", pes) == taskmap.evaluate(two, "torus:4x4", pes,
                                                                          threads=3)
    with pytest.raises(ValueError):
        taskmap.read_graph(path, threads=0)


def test_arch_distances():
    a = taskmap.Arch("torus:4x4")
    assert (a.pes, len(a), a.spec) == (16, 16, "torus:4x4")
    d = a.distances()
    assert d.shape == (16, 16) and d.dtype == np.uint64
    assert all(d[i, j] == a.distance(i, j) == d[j, i] for i in range(16) for j in range(16))
    assert d[0, 0] == 0 and d.max() == 4
    t = taskmap.Arch("tree:2:2/1:100")
    assert t.distance(0, 1) == 1 and t.distance(0, 2) == 100
    with pytest.raises(ValueError):
        a.distance(0, 16)
    with pytest.raises(ValueError):
        taskmap.Arch("torus:4y4")
    with pytest.raises(ValueError):
        taskmap.Arch("complete:5000").distances()


def test_machine_targets_take_a_node_list():
    per_node = taskmap.Arch("hwloc:" + str(FIXTURES / "hwloc" / "synthetic-2x8.xml"))
    two = taskmap.Arch("hwloc:" + str(FIXTURES / "hwloc" / "synthetic-2x8.xml"), nodes="n[1-2]")
    assert two.pes == 2 * per_node.pes
    levels = taskmap.Arch("package:2,core:4", nodes="n[1-3]")
    assert levels.pes == 24
    assert levels.distance(0, 1) < levels.distance(0, 4) < levels.distance(0, 8)
