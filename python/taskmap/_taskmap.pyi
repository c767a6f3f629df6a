"""Type stubs of the extension module (the docstrings are on the objects themselves:
``help(taskmap.map)``)."""

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

_Path = Union[str, "os.PathLike[str]"]
_Ints = Union[npt.ArrayLike, Sequence[int]]

class Graph:
    @classmethod
    def from_csr(
        cls,
        xadj: _Ints,
        adjncy: _Ints,
        vwgt: Optional[_Ints] = None,
        adjwgt: Optional[_Ints] = None,
    ) -> "Graph": ...
    @classmethod
    def from_edges(
        cls,
        u: _Ints,
        v: _Ints,
        w: Optional[_Ints] = None,
        n: Optional[int] = None,
        vwgt: Optional[_Ints] = None,
    ) -> "Graph": ...
    @classmethod
    def from_scipy(cls, matrix: Any, vwgt: Optional[_Ints] = None) -> "Graph": ...
    @property
    def num_tasks(self) -> int: ...
    @property
    def num_edges(self) -> int: ...
    @property
    def ncon(self) -> int: ...
    def __len__(self) -> int: ...
    def csr(
        self,
    ) -> Tuple[
        npt.NDArray[np.int64],
        npt.NDArray[np.uint32],
        npt.NDArray[np.uint64],
        npt.NDArray[np.uint64],
    ]: ...
    def write(self, path: _Path, format: Optional[str] = None) -> None: ...

class Arch:
    def __init__(self, spec: str, nodes: Optional[str] = None) -> None: ...
    @property
    def pes(self) -> int: ...
    @property
    def spec(self) -> str: ...
    def __len__(self) -> int: ...
    def distance(self, a: int, b: int) -> int: ...
    def distances(self) -> npt.NDArray[np.uint64]: ...
    def rankfile(self, mapping: _Ints) -> str: ...
    def slurm_hostfile(self, mapping: _Ints) -> str: ...

class Program:
    @property
    def num_tasks(self) -> int: ...
    @property
    def num_messages(self) -> int: ...
    def graph(self) -> Graph: ...
    def to_text(self) -> str: ...

_GraphArg = Union[Graph, _Path]
_ArchArg = Union[Arch, str]

def read_graph(path: _Path, format: Optional[str] = None, threads: int = 1) -> Graph: ...
def algorithms() -> List[str]: ...
def map(
    graph: _GraphArg,
    arch: _ArchArg,
    algorithm: str = "multilevel",
    preset: Optional[str] = None,
    epsilon: Optional[float] = None,
    seed: int = 0,
    threads: int = 1,
    capacities: Optional[Union[int, _Ints]] = None,
    fixed: Optional[_Ints] = None,
    time_limit: Optional[float] = None,
) -> npt.NDArray[np.uint32]: ...
def evaluate(
    graph: _GraphArg,
    arch: _ArchArg,
    mapping: _Ints,
    epsilon: Optional[float] = None,
    capacities: Optional[Union[int, _Ints]] = None,
    congestion: bool = False,
    threads: int = 1,
) -> Dict[str, Any]: ...
def read_program(path: _Path) -> Program: ...
def generate_program(spec: str) -> Program: ...
def simulate(
    program: Union[Program, _Path],
    arch: Optional[_ArchArg] = None,
    mapping: Optional[_Ints] = None,
    algorithm: Optional[str] = None,
    seed: int = 0,
    threads: int = 1,
    epsilon: Optional[float] = None,
    f: bool = False,
    ideal: bool = False,
    overlap_fraction: float = 0.5,
    flit_cycles: int = 1,
    send_overhead: int = 10,
    recv_overhead: int = 10,
    local_cycles_per_flit: int = 0,
    switch_cycles: int = 0,
    virtual_channels: bool = True,
    ready_policy: str = "fifo",
) -> Dict[str, Any]: ...
def hetero(
    model: Optional[_Path] = None,
    *,
    stg: Optional[_Path] = None,
    workflow: Optional[_Path] = None,
    platform: Optional[_Path] = None,
    algorithm: str = "mateha",
    allocation: Optional[_Ints] = None,
    optimal: bool = False,
    limit: int = 100_000_000,
    threads: int = 1,
) -> Dict[str, Any]: ...
def amap(
    graph: _Path,
    processors: int,
    system: str = "dual-bus",
    algorithm: str = "alloc",
    assignment: Optional[_Ints] = None,
    itu_time: float = 1.0,
    memory: Optional[float] = None,
    speeds: Optional[Sequence[float]] = None,
    threads: int = 1,
    monte_carlo: Optional[int] = None,
    seed: int = 0,
    delay_model: str = "queue",
) -> Dict[str, Any]: ...
