"""taskmap: static mapping of communicating tasks onto the processing elements (PEs) of
a parallel machine.

Build a :class:`Graph` (from numpy CSR arrays, an edge list, a scipy.sparse matrix or a
file), name a target :class:`Arch`, and :func:`map` returns the PE of every task as a
``uint32`` array; :func:`evaluate` scores a mapping with the keys of
``taskmap eval --format json``. :func:`process_mapping` takes KaHIP's arguments.
:func:`simulate`, :func:`hetero` and :func:`amap` reach the timed-program,
heterogeneous and precedence models. Errors are ``ValueError``, ``OSError`` or
:class:`FormatError` (a defect in a file, with its ``filename`` and ``lineno``).
"""

from typing import List, Optional, Sequence, Tuple

from numpy.typing import ArrayLike

from ._errors import FormatError
from ._taskmap import (
    Arch,
    Graph,
    Program,
    __version__,
    algorithms,
    amap,
    evaluate,
    generate_program,
    hetero,
    map,
    read_graph,
    read_program,
    simulate,
)

# KaHIP's modes (kaHIP_interface.h), for process_mapping.
FAST = 0
ECO = 1
STRONG = 2
FASTSOCIAL = 3
ECOSOCIAL = 4
STRONGSOCIAL = 5
MAPMODE_MULTISECTION = 0
MAPMODE_BISECTION = 1

_PRESETS = {FAST: "fast", ECO: "default", STRONG: "strong", FASTSOCIAL: "fast", ECOSOCIAL: "default", STRONGSOCIAL: "strong"}


def process_mapping(
    n: int,
    vwgt: Optional[ArrayLike],
    xadj: ArrayLike,
    adjcwgt: Optional[ArrayLike],
    adjncy: ArrayLike,
    hierarchy_parameter: Sequence[int],
    distance_parameter: Sequence[int],
    imbalance: float = 0.03,
    seed: int = 0,
    mode_partitioning: int = ECO,
    mode_mapping: int = MAPMODE_MULTISECTION,
    suppress_output: bool = True,
) -> Tuple[int, int, List[int]]:
    """KaHIP's ``process_mapping`` with taskmap's multilevel mapper: maps the graph of
    METIS's arrays (``vwgt`` and ``adjcwgt`` may be None) onto the hierarchy
    ``hierarchy_parameter`` (group sizes, bottom-up) with ``distance_parameter`` (the
    distance of PEs whose highest differing level is i). ``mode_partitioning`` picks the
    preset (FAST: fast, ECO: default, STRONG: strong); ``mode_mapping`` and
    ``suppress_output`` are accepted and ignored (taskmap chooses multisection itself and
    prints nothing).

    Returns ``(edgecut, qap, blocks)`` as KaHIP's C interface does: the weight of the cut
    edges, the quadratic assignment objective J (= 2 f_C, each edge counted both ways) and
    the PE of every task as a list.
    """
    del mode_mapping, suppress_output
    hierarchy = [int(h) for h in hierarchy_parameter]
    distance = [int(d) for d in distance_parameter]
    if not hierarchy or len(hierarchy) != len(distance):
        raise ValueError(
            f"hierarchy_parameter and distance_parameter must be non-empty and of one length, got {len(hierarchy)} and {len(distance)}"
        )
    if mode_partitioning not in _PRESETS:
        raise ValueError(f"mode_partitioning must be one of 0-5 (FAST ... STRONGSOCIAL), got {mode_partitioning}")
    graph = Graph.from_csr(xadj, adjncy, vwgt, adjcwgt)
    if int(n) != graph.num_tasks:
        raise ValueError(f"n = {n} but xadj describes {graph.num_tasks} tasks")
    spec = "tree:" + ":".join(_strs(hierarchy)) + "/" + ":".join(_strs(distance))
    arch = Arch(spec)
    blocks = map(graph, arch, preset=_PRESETS[mode_partitioning], epsilon=float(imbalance), seed=int(seed))
    ev = evaluate(graph, arch, blocks)
    return ev["edge_cut"], ev["comm_cost_j"], blocks.tolist()


def _strs(values: Sequence[int]) -> List[str]:
    """The values as strings (for building target specs)."""
    return [str(v) for v in values]


__all__ = [
    "Arch",
    "FormatError",
    "Graph",
    "Program",
    "__version__",
    "algorithms",
    "amap",
    "evaluate",
    "generate_program",
    "hetero",
    "map",
    "process_mapping",
    "read_graph",
    "read_program",
    "simulate",
    "FAST",
    "ECO",
    "STRONG",
    "FASTSOCIAL",
    "ECOSOCIAL",
    "STRONGSOCIAL",
    "MAPMODE_MULTISECTION",
    "MAPMODE_BISECTION",
]
