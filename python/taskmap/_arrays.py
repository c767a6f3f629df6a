"""Checks and conversions of array arguments, for the extension module: any integer
dtype (and lists) in, C-contiguous ``int64`` out, with a clear error otherwise."""

import numpy as np

_INT64_MAX = np.iinfo(np.int64).max


def _integers(x, name):
    a = np.asarray(x)
    if a.dtype == object or a.dtype.kind not in "iu":
        if a.size == 0 and a.dtype.kind == "f":
            return a.astype(np.int64)
        raise TypeError(f"{name}: expected integers, got an array of dtype {a.dtype}")
    if a.dtype.kind == "u" and a.dtype.itemsize == 8 and a.size and a.max() > _INT64_MAX:
        raise ValueError(f"{name}: a value is above 2^63 - 1")
    return a.astype(np.int64, copy=False)


def _first_negative(a, name):
    bad = np.flatnonzero(a.ravel() < 0)
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{name}[{i}] = {int(a.ravel()[i])} is negative")


def index_array(x, name):
    """A 1-D array of non-negative integers."""
    a = _integers(x, name)
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, got shape {a.shape}")
    _first_negative(a, name)
    return np.ascontiguousarray(a)


def signed_array(x, name):
    """A 1-D array of integers (negative allowed)."""
    a = _integers(x, name)
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, got shape {a.shape}")
    return np.ascontiguousarray(a)


def vertex_weights(x, n):
    """Task weights: n values, or an n x ncon array; returned as n x ncon."""
    a = _integers(x, "vwgt")
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if a.ndim != 2 or a.shape[0] != n or a.shape[1] < 1:
        raise ValueError(f"vwgt: expected {n} weights or an array of shape ({n}, ncon), got shape {np.shape(x)}")
    _first_negative(a, "vwgt")
    return np.ascontiguousarray(a)


def capacities(x, k, ncon):
    """PE capacities: a scalar (every PE, every constraint), k values (one constraint)
    or a k x ncon array; returned as k x ncon."""
    a = _integers(x, "capacities")
    if a.ndim == 0:
        a = np.full((k, ncon), int(a), dtype=np.int64)
    elif a.ndim == 1 and ncon == 1:
        a = a.reshape(-1, 1)
    if a.ndim != 2 or a.shape != (k, ncon):
        raise ValueError(
            f"capacities: expected a scalar, {k} values (one vertex weight) or shape ({k}, {ncon}), got shape {np.shape(x)}"
        )
    _first_negative(a, "capacities")
    return np.ascontiguousarray(a)


def scipy_edges(matrix):
    """(n, u, v, w) of a square scipy.sparse matrix: its entries (repeated entries of a
    COO matrix summed first, as scipy reads them), the diagonal and zeros dropped,
    integers as |a|, reals as max(1, round(|a|)), booleans as 1 (the pairs are summed
    both ways later)."""
    try:
        import scipy.sparse as sp
    except ImportError as e:  # pragma: no cover - scipy is needed only here
        raise ImportError("Graph.from_scipy needs scipy (pip install scipy)") from e
    if not sp.issparse(matrix):
        raise TypeError(f"expected a scipy.sparse matrix, got {type(matrix).__name__}")
    n, m = matrix.shape
    if n != m:
        raise ValueError(f"expected a square matrix, got shape {matrix.shape}")
    c = sp.coo_matrix(matrix)
    c.sum_duplicates()
    data = c.data
    keep = (c.row != c.col) & (data != 0)
    row, col, data = c.row[keep], c.col[keep], data[keep]
    kind = data.dtype.kind
    if kind == "b":
        w = np.ones(data.shape, dtype=np.int64)
    elif kind in "iuf":
        if kind == "f" and not np.all(np.isfinite(data)):
            raise ValueError("the matrix holds a value that is not finite")
        if kind == "f":
            mag = np.maximum(1.0, np.rint(np.abs(data.astype(np.float64))))
            too_large = mag.size and mag.max() >= 2.0**63
        elif kind == "i":
            mag = np.abs(data.astype(np.int64))
            too_large = mag.size and mag.min() < 0  # |-2^63| does not fit
        else:
            mag = data
            too_large = mag.size and mag.max() > _INT64_MAX
        # a weight must fit int64: refuse rather than wrap
        if too_large:
            raise ValueError("the matrix holds a value above 2^63 - 1")
        w = mag.astype(np.int64)
    else:
        raise TypeError(f"expected a matrix of numbers, got dtype {data.dtype}")
    return n, row.astype(np.int64), col.astype(np.int64), w
