//! `taskmap._taskmap`, the extension module under the `taskmap` Python package
//! (`python/taskmap`): graphs from numpy arrays and files, targets, mapping, evaluation,
//! and the timed-program, heterogeneous and precedence models. The package's Python side
//! checks and converts array arguments (`_arrays.py`) and defines the KaHIP-style entry
//! point; everything else is here, over the library. Long runs release the GIL on a worker
//! thread that Ctrl-C stops (`run::detached`).

use pyo3::prelude::*;

mod arch;
mod errors;
mod graph;
mod mapping;
mod models;
mod run;

#[pymodule]
fn _taskmap(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<graph::Graph>()?;
    m.add_class::<arch::Arch>()?;
    m.add_class::<models::Program>()?;
    m.add_function(wrap_pyfunction!(graph::read_graph, m)?)?;
    m.add_function(wrap_pyfunction!(mapping::map, m)?)?;
    m.add_function(wrap_pyfunction!(mapping::evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(mapping::algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(models::read_program, m)?)?;
    m.add_function(wrap_pyfunction!(models::generate_program, m)?)?;
    m.add_function(wrap_pyfunction!(models::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(models::hetero, m)?)?;
    m.add_function(wrap_pyfunction!(models::amap, m)?)?;
    Ok(())
}
