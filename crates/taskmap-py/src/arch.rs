//! `taskmap.Arch`: a target architecture from any spec the CLI takes.

use std::sync::Arc;

use numpy::{PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use taskmap::{Architecture, Machine, PeId};

use crate::errors::{to_py, value_error};
use crate::graph::ids;

/// The most PEs [`Arch::distances`] makes a matrix for (4096² distances, 128 MiB).
const MAX_DISTANCE_MATRIX_PES: u32 = 4096;

/// A target architecture: `torus:16x16`, `mesh:8x8x8`, `hypercube:6`, `complete:64`,
/// `tree:4:8:6/1:10:100`, `graph:FILE`, `matrix:FILE`, `hwloc:FILE`, a level list
/// (`nodes:4,package:2,core:8/100,10,1`) or a Scotch target file; `nodes` is a Slurm node
/// list put above an hwloc topology or a level list.
#[pyclass(module = "taskmap", name = "Arch", frozen)]
pub(crate) struct Arch {
    pub(crate) inner: Arc<dyn Architecture>,
    /// The hosts of its PEs, for a machine (`hwloc:FILE`, a level list).
    pub(crate) machine: Option<Arc<Machine>>,
}

#[pymethods]
impl Arch {
    #[new]
    #[pyo3(signature = (spec, nodes=None))]
    fn new(py: Python<'_>, spec: &str, nodes: Option<&str>) -> PyResult<Self> {
        let (inner, machine) = parse(py, spec, nodes)?;
        Ok(Self { inner, machine })
    }

    /// Number of PEs.
    #[getter]
    fn pes(&self) -> u32 {
        self.inner.pe_count()
    }

    /// The target's canonical spec.
    #[getter]
    fn spec(&self) -> String {
        self.inner.spec()
    }

    fn __len__(&self) -> usize {
        self.inner.pe_count() as usize
    }

    fn __repr__(&self) -> String {
        format!("taskmap.Arch({:?})", self.inner.spec())
    }

    /// The distance between PEs `a` and `b` (0 when equal).
    fn distance(&self, a: u32, b: u32) -> PyResult<u64> {
        let k = self.inner.pe_count();
        if a >= k || b >= k {
            return Err(value_error(format!(
                "PE {} is out of range for {k} PEs",
                a.max(b)
            )));
        }
        Ok(self.inner.distance(PeId(a), PeId(b)))
    }

    /// Every distance, as a k × k `uint64` matrix (at most 4096 PEs).
    fn distances<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u64>>> {
        let k = self.inner.pe_count();
        if k > MAX_DISTANCE_MATRIX_PES {
            return Err(value_error(format!(
                "{k} PEs: the distance matrix is made for at most {MAX_DISTANCE_MATRIX_PES}; use distance(a, b)"
            )));
        }
        let arch = self.inner.clone();
        let d = py.detach(move || {
            let mut d = Vec::with_capacity(k as usize * k as usize);
            for a in 0..k {
                d.extend((0..k).map(|b| arch.distance(PeId(a), PeId(b))));
            }
            d
        });
        PyArray1::from_vec(py, d).reshape([k as usize, k as usize])
    }

    /// The Open MPI rankfile of `mapping` (the PE of every rank): `rank R=HOST
    /// slot=PACKAGE:CORE` lines, for `mpirun --rankfile`. A machine target only.
    fn rankfile(&self, py: Python<'_>, mapping: &Bound<'_, PyAny>) -> PyResult<String> {
        let pes = self.pes_of(py, mapping)?;
        Ok(self.machine()?.rankfile(&pes))
    }

    /// The Slurm hostfile of `mapping`: the host of rank r on line r + 1, for `srun
    /// --distribution=arbitrary`. A machine target only.
    fn slurm_hostfile(&self, py: Python<'_>, mapping: &Bound<'_, PyAny>) -> PyResult<String> {
        let pes = self.pes_of(py, mapping)?;
        Ok(self.machine()?.slurm_hostfile(&pes))
    }
}

impl Arch {
    fn machine(&self) -> PyResult<&Machine> {
        self.machine.as_deref().ok_or_else(|| {
            value_error(format!(
                "{} has no hosts: launch files need a machine (hwloc:FILE or a level list such as nodes:4,package:2,core:8)",
                self.inner.spec()
            ))
        })
    }

    /// `mapping` checked against the PEs.
    fn pes_of(&self, py: Python<'_>, mapping: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
        let pes = ids(py, mapping, "mapping")?;
        check_pes(&pes, self.inner.pe_count())?;
        Ok(pes)
    }
}

/// Refuses a PE out of range.
pub(crate) fn check_pes(pes: &[u32], k: u32) -> PyResult<()> {
    match pes.iter().enumerate().find(|(_, &p)| p >= k) {
        Some((i, p)) => Err(value_error(format!(
            "mapping[{i}] = {p} is out of range for {k} PEs"
        ))),
        None => Ok(()),
    }
}

/// The target of `spec`, with `nodes` above it, and its machine when it has hosts.
type Target = (Arc<dyn Architecture>, Option<Arc<Machine>>);

/// The target of `spec`, with `nodes` above it.
fn parse(py: Python<'_>, spec: &str, nodes: Option<&str>) -> PyResult<Target> {
    let target = py.detach(|| -> Result<Target, taskmap::Error> {
        let (arch, machine) = match taskmap::parse_machine(spec, nodes)? {
            Some(m) => (m.architecture()?, Some(Arc::new(m))),
            None => (taskmap::parse_arch(spec)?, None),
        };
        taskmap::problem::check_pe_count(arch.as_ref())?;
        Ok((Arc::from(arch), machine))
    });
    target.map_err(|e| to_py(py, e))
}

/// A target argument: an `Arch`, or a spec.
#[derive(FromPyObject)]
pub(crate) enum ArchArg<'py> {
    Arch(PyRef<'py, Arch>),
    Spec(String),
}

impl ArchArg<'_> {
    pub(crate) fn get(&self, py: Python<'_>) -> PyResult<Arc<dyn Architecture>> {
        Ok(self.target(py)?.0)
    }

    /// The target and its machine, when it has hosts.
    pub(crate) fn target(&self, py: Python<'_>) -> PyResult<Target> {
        match self {
            ArchArg::Arch(a) => Ok((a.inner.clone(), a.machine.clone())),
            ArchArg::Spec(s) => parse(py, s, None),
        }
    }
}
