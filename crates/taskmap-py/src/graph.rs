//! `taskmap.Graph`: a task graph from METIS's CSR arrays, from an edge list, from a
//! scipy.sparse matrix or from a file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyType;
use taskmap_graph::{DuplicateEdges, GraphBuilder, GraphFormat, TaskGraph};

use crate::errors::{to_py, value_error};

/// A task graph: tasks with `ncon` weights each and undirected weighted edges (CSR,
/// `u32` task ids). Build one with `Graph.from_csr`, `Graph.from_edges`,
/// `Graph.from_scipy` or `taskmap.read_graph`.
#[pyclass(module = "taskmap", name = "Graph", frozen)]
pub(crate) struct Graph {
    pub(crate) inner: Arc<TaskGraph>,
}

/// A checked array from the package's Python helpers (`taskmap._arrays`).
pub(crate) fn helper<'py>(
    py: Python<'py>,
    name: &str,
    args: impl pyo3::call::PyCallArgs<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    py.import("taskmap._arrays")?.getattr(name)?.call1(args)
}

/// `obj` as non-negative `int64` values (any integer dtype, a list, a scalar sequence).
pub(crate) fn index_values(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    name: &str,
) -> PyResult<Vec<i64>> {
    let a = helper(py, "index_array", (obj, name))?;
    let a: PyReadonlyArray1<i64> = a.extract()?;
    Ok(a.as_slice()?.to_vec())
}

/// `obj` as ids (task or PE ids, non-negative and below 2^32).
pub(crate) fn ids(py: Python<'_>, obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<u32>> {
    u32_values(&index_values(py, obj, name)?, name)
}

/// Values of `name` that must fit `u32` (task or PE ids).
pub(crate) fn u32_values(values: &[i64], name: &str) -> PyResult<Vec<u32>> {
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            u32::try_from(v)
                .map_err(|_| value_error(format!("{name}[{i}] = {v} is not below 2^32")))
        })
        .collect()
}

#[pymethods]
impl Graph {
    /// A graph from METIS's arrays, as `kahip.kaffpa` takes them: `xadj` (n + 1 offsets),
    /// `adjncy` (0-based neighbours; every edge in both rows), optional `vwgt` (n task
    /// weights, or an n × ncon array) and `adjwgt` (one weight per entry of `adjncy`, the
    /// same both ways, at least 1). Any integer dtype; defaults are weights of 1.
    #[classmethod]
    #[pyo3(signature = (xadj, adjncy, vwgt=None, adjwgt=None))]
    fn from_csr(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        xadj: &Bound<'_, PyAny>,
        adjncy: &Bound<'_, PyAny>,
        vwgt: Option<&Bound<'_, PyAny>>,
        adjwgt: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let xadj = index_values(py, xadj, "xadj")?;
        if xadj.is_empty() {
            return Err(value_error("xadj must hold n + 1 offsets (at least [0])"));
        }
        let n = xadj.len() - 1;
        let xadj: Vec<usize> = xadj.into_iter().map(|v| v as usize).collect();
        let adjncy = ids(py, adjncy, "adjncy")?;
        let m = adjncy.len();
        let edge_weight: Vec<u64> = match adjwgt {
            Some(w) => index_values(py, w, "adjwgt")?
                .into_iter()
                .map(|v| v as u64)
                .collect(),
            None => vec![1; m],
        };
        if let Some(i) = edge_weight.iter().position(|&x| x == 0) {
            return Err(value_error(format!(
                "adjwgt[{i}] = 0: edge weights are at least 1"
            )));
        }
        let (vertex_weight, ncon) = vertex_weights(py, vwgt, n)?;
        let graph = py
            .detach(|| TaskGraph::from_csr(xadj, adjncy, edge_weight, vertex_weight, ncon))
            .map_err(|e| to_py(py, e))?;
        Ok(Self {
            inner: Arc::new(graph),
        })
    }

    /// A graph from an edge list: `u[i]`-`v[i]` with weight `w[i]` (default 1, at least
    /// 1); `n` tasks (default: the largest id + 1). A pair given more than once, in either
    /// direction, becomes one edge of the summed weight (a directed volume list becomes
    /// symmetric by addition, as the volume readers do); pairs of a task with itself are
    /// dropped. `vwgt` as in `from_csr`.
    #[classmethod]
    #[pyo3(signature = (u, v, w=None, n=None, vwgt=None))]
    fn from_edges(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        u: &Bound<'_, PyAny>,
        v: &Bound<'_, PyAny>,
        w: Option<&Bound<'_, PyAny>>,
        n: Option<usize>,
        vwgt: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let u = ids(py, u, "u")?;
        let v = ids(py, v, "v")?;
        if u.len() != v.len() {
            return Err(value_error(format!(
                "u and v differ in length ({} and {})",
                u.len(),
                v.len()
            )));
        }
        let w: Vec<u64> = match w {
            Some(w) => index_values(py, w, "w")?
                .into_iter()
                .map(|x| x as u64)
                .collect(),
            None => vec![1; u.len()],
        };
        if w.len() != u.len() {
            return Err(value_error(format!(
                "w has {} weights for {} edges",
                w.len(),
                u.len()
            )));
        }
        if let Some(i) = w.iter().position(|&x| x == 0) {
            return Err(value_error(format!(
                "w[{i}] = 0: edge weights are at least 1"
            )));
        }
        let top = u
            .iter()
            .chain(&v)
            .map(|&x| x as usize + 1)
            .max()
            .unwrap_or(0);
        let n = n.unwrap_or(top);
        if top > n {
            return Err(value_error(format!(
                "task id {} is out of range for n = {n}",
                top - 1
            )));
        }
        // Tasks without edges cost memory: as many as the edges allow and 2^24 more, as the
        // Matrix Market reader allows.
        let most = u
            .len()
            .saturating_mul(2)
            .saturating_add(1 << 24)
            .min(u32::MAX as usize);
        if n > most {
            return Err(value_error(format!(
                "n = {n} tasks for {} edges: at most {most} (twice the edges and 2^24)",
                u.len()
            )));
        }
        let (vertex_weight, ncon) = vertex_weights(py, vwgt, n)?;
        let graph = py.detach(move || {
            let mut b = GraphBuilder::new(n, ncon).with_duplicates(DuplicateEdges::Sum);
            b.reserve_edges(u.len());
            for t in 0..n {
                b.set_vertex_weights(t as u32, &vertex_weight[t * ncon..(t + 1) * ncon]);
            }
            for ((&a, &b2), &x) in u.iter().zip(&v).zip(&w) {
                if a != b2 {
                    b.add_edge(a, b2, x);
                }
            }
            b.build()
        });
        Ok(Self {
            inner: Arc::new(graph),
        })
    }

    /// A graph from a square scipy.sparse matrix (any format): entry `a_ij` is
    /// communication between tasks i and j. The matrix is made symmetric by addition
    /// (`A + Aᵀ`), the diagonal and explicit zeros are dropped, integer values are taken
    /// as they are (absolute value), real values as `max(1, round(|a|))` and booleans as
    /// 1: the Matrix Market reader's rules.
    #[classmethod]
    #[pyo3(signature = (matrix, vwgt=None))]
    fn from_scipy(
        cls: &Bound<'_, PyType>,
        py: Python<'_>,
        matrix: &Bound<'_, PyAny>,
        vwgt: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let edges = helper(py, "scipy_edges", (matrix,))?;
        let (n, u, v, w): (usize, Bound<'_, PyAny>, Bound<'_, PyAny>, Bound<'_, PyAny>) =
            edges.extract()?;
        Self::from_edges(cls, py, &u, &v, Some(&w), Some(n), vwgt)
    }

    /// Number of tasks.
    #[getter]
    fn num_tasks(&self) -> usize {
        self.inner.num_tasks()
    }

    /// Number of undirected edges.
    #[getter]
    fn num_edges(&self) -> usize {
        self.inner.num_edges()
    }

    /// Weights per task (vertex-weight constraints).
    #[getter]
    fn ncon(&self) -> usize {
        self.inner.ncon()
    }

    fn __len__(&self) -> usize {
        self.inner.num_tasks()
    }

    fn __repr__(&self) -> String {
        format!(
            "taskmap.Graph(num_tasks={}, num_edges={}, ncon={})",
            self.inner.num_tasks(),
            self.inner.num_edges(),
            self.inner.ncon()
        )
    }

    /// The CSR arrays `(xadj, adjncy, adjwgt, vwgt)`: `int64` offsets, `uint32`
    /// neighbours, `uint64` edge weights, and `uint64` task weights of shape (n,) or
    /// (n, ncon).
    #[allow(clippy::type_complexity)]
    fn csr<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<u32>>,
        Bound<'py, PyArray1<u64>>,
        Bound<'py, PyAny>,
    )> {
        let g = &self.inner;
        let (xadj, adjncy, adjwgt, vwgt) = g.csr();
        let xadj: Vec<i64> = xadj.iter().map(|&x| x as i64).collect();
        let vw = PyArray1::from_slice(py, vwgt);
        let vw = if g.ncon() == 1 {
            vw.into_any()
        } else {
            vw.reshape([g.num_tasks(), g.ncon()])?.into_any()
        };
        Ok((
            PyArray1::from_vec(py, xadj),
            PyArray1::from_slice(py, adjncy),
            PyArray1::from_slice(py, adjwgt),
            vw,
        ))
    }

    /// Writes the graph to `path` in the format its extension names (METIS `.graph`,
    /// Scotch `.grf`, Matrix Market `.mtx`, edge list `.edges`; `.gz` compresses), or
    /// `format`; atomically (a temporary file renamed into place).
    #[pyo3(signature = (path, format=None))]
    fn write(&self, py: Python<'_>, path: PathBuf, format: Option<&str>) -> PyResult<()> {
        let format = match format {
            Some(f) => f.parse::<GraphFormat>().map_err(value_error)?,
            None => GraphFormat::from_path(&path).ok_or_else(|| {
                value_error(format!(
                    "{}: the extension names no graph format; give format=",
                    path.display()
                ))
            })?,
        };
        let g = self.inner.clone();
        py.detach(move || taskmap_graph::write_graph_file(&path, &g, format))
            .map_err(|e| to_py(py, e))
    }
}

/// The task weights: row-major `n * ncon` values and `ncon` (all 1 when `vwgt` is None).
fn vertex_weights(
    py: Python<'_>,
    vwgt: Option<&Bound<'_, PyAny>>,
    n: usize,
) -> PyResult<(Vec<u64>, usize)> {
    let Some(vwgt) = vwgt else {
        return Ok((vec![1; n], 1));
    };
    let a = helper(py, "vertex_weights", (vwgt, n))?;
    let a: PyReadonlyArray2<i64> = a.extract()?;
    let ncon = a.shape()[1];
    Ok((a.as_slice()?.iter().map(|&v| v as u64).collect(), ncon))
}

/// Reads a task graph file in any format the CLI reads (METIS `.graph`, Scotch `.grf`,
/// Matrix Market `.mtx`, edge lists, `.bench`, mpiP `graphStats.txt`, volume lists
/// `.csv`/`.vol`, dense matrices `.mat`/`.dense`; optionally `.gz`), picked by the
/// extension unless `format` is given. With `threads` above 1, a METIS file with 1 MiB or
/// more after its header line (decompressed) is parsed and checked on that many threads
/// (the same graph or error).
#[pyfunction]
#[pyo3(signature = (path, format=None, threads=1))]
pub(crate) fn read_graph(
    py: Python<'_>,
    path: PathBuf,
    format: Option<&str>,
    threads: usize,
) -> PyResult<Graph> {
    let format = format
        .map(|f| f.parse::<GraphFormat>().map_err(value_error))
        .transpose()?;
    let pool = crate::run::context(py, threads)?.pool;
    Ok(Graph {
        inner: read_on(py, &path, format, pool.as_ref())?,
    })
}

/// The graph of the file at `path`, read without the GIL on `pool`.
fn read_on(
    py: Python<'_>,
    path: &Path,
    format: Option<GraphFormat>,
    pool: Option<&rayon::ThreadPool>,
) -> PyResult<Arc<TaskGraph>> {
    py.detach(|| taskmap_graph::read_graph_on(path, format, pool))
        .map(Arc::new)
        .map_err(|e| to_py(py, e))
}

/// A graph argument: a `Graph`, or a path to read.
#[derive(FromPyObject)]
pub(crate) enum GraphArg<'py> {
    Graph(PyRef<'py, Graph>),
    Path(PathBuf),
}

impl GraphArg<'_> {
    /// The graph, a path read on `pool`'s threads.
    pub(crate) fn get(
        &self,
        py: Python<'_>,
        pool: Option<&rayon::ThreadPool>,
    ) -> PyResult<Arc<TaskGraph>> {
        match self {
            GraphArg::Graph(g) => Ok(g.inner.clone()),
            GraphArg::Path(p) => read_on(py, p, None, pool),
        }
    }
}
