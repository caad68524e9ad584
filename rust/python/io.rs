//! File bindings: the LETOR reader, model files, atomic writes, and the debug hooks the tests
//! use to interrupt a write or raise a panic inside the guard.

use super::ndbuf::{from_vec, from_vec_shaped};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::PathBuf;

use super::detach;
use crate::data::reader::{read_letor, read_text, FromF64, LetorData, ReadOptions};
use crate::error::Error;
use crate::runtime::pool::with_threads;

pub(super) fn letor_dict<'py, T: FromF64 + super::ndbuf::Element>(
    py: Python<'py>,
    data: LetorData<T>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let n = data.n_rows();
    let nf = data.n_features;
    let dense_complete = data.is_dense_complete();
    d.set_item("n_features", nf)?;
    d.set_item("qid_names", data.qid_names)?;
    d.set_item("comments", data.comments)?;
    d.set_item("labels", from_vec(py, data.labels)?)?;
    d.set_item("qid_codes", from_vec(py, data.qid_codes)?)?;
    d.set_item("line_numbers", from_vec(py, data.line_numbers)?)?;
    if dense_complete {
        // Every row lists features 1..d in order: the values are the dense matrix already.
        d.set_item("dense", from_vec_shaped(py, data.values, &[n, nf])?)?;
    } else {
        d.set_item("indptr", from_vec(py, data.indptr)?)?;
        d.set_item("indices", from_vec(py, data.indices)?)?;
        d.set_item("values", from_vec(py, data.values)?)?;
    }
    Ok(d)
}

/// The value types the reader can produce, as `read_letor`'s dtype spells them.
pub(super) const DTYPES: [&str; 2] = ["float32", "float64"];

/// Reads a LETOR/svmlight file. Returns a dict with "labels", "qid_codes", "qid_names",
/// "n_features", "line_numbers", "comments" and either "dense" or "indptr"/"indices"/"values".
#[pyfunction]
#[pyo3(signature = (path, dtype="float64", n_features=None, keep_comments=false, n_threads=0, missing_nan=false, without_qid=false))]
// A Python signature: the arguments are the keyword arguments the callers pass.
#[allow(clippy::too_many_arguments)]
pub(super) fn read_letor_file<'py>(
    py: Python<'py>,
    path: PathBuf,
    dtype: &str,
    n_features: Option<usize>,
    keep_comments: bool,
    n_threads: usize,
    missing_nan: bool,
    without_qid: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = ReadOptions {
        n_features,
        keep_comments,
        missing_nan,
        without_qid,
    };
    match dtype {
        "float64" => {
            let data = detach(py, || {
                with_threads(n_threads, || read_letor::<f64>(&path, &opts))?
            })?;
            letor_dict(py, data)
        }
        "float32" => {
            let data = detach(py, || {
                with_threads(n_threads, || read_letor::<f32>(&path, &opts))?
            })?;
            letor_dict(py, data)
        }
        other => Err(PyValueError::new_err(format!(
            "dtype must be {} or {}, got {other}",
            DTYPES[0], DTYPES[1]
        ))),
    }
}

/// The text of a model file, read by the one opener's rules (`model::read_text`: memory checked
/// first, gzip decompressed, a UTF-8 byte order mark skipped, anything but UTF-8 refused);
/// Python parses and checks it (`svmmap._files.model_json`).
#[pyfunction]
pub(super) fn read_model_text(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    detach(py, || crate::model::read_text(&path)).map_err(PyErr::from)
}

/// The whole text of a file by the one opener's rules (`data::reader::open_text`: memory
/// checked first, gzip decompressed, a UTF-8 byte order mark skipped, UTF-16 refused), as the
/// bytes the Python readers (query sizes, runs, qrels, predictions) split into lines.
#[pyfunction]
pub(super) fn read_text_file<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyBytes>> {
    // The bytes are copied once into Python's object, and the readers then hold every line's
    // fields: three bytes per byte of text at the least.
    let text = detach(py, || read_text(&path, 3))?;
    // `new_with` reports a failed allocation as Python's MemoryError.
    PyBytes::new_with(py, text.len(), |buf| {
        buf.copy_from_slice(&text);
        Ok(())
    })
}

/// Writes a model file's text atomically, gzip-compressed when `path` ends in ".gz" (any case)
/// (`model::write_text`); Python has checked the document (`svmmap._files.model_writing`).
#[pyfunction]
pub(super) fn write_model_text(py: Python<'_>, path: &str, text: &str) -> PyResult<()> {
    detach(py, || crate::model::write_text(path, text)).map_err(PyErr::from)
}

/// `runtime::memory::check` for the Python layer: a MemoryError "{what} needs N, but only M of
/// memory is available; {advice}" when `bytes` exceed the memory the process can still use.
/// It is asked before NumPy allocates a dense copy of a sparse matrix, since NumPy's zeroed
/// pages are only claimed when written, so an allocation beyond the memory succeeds and the
/// process is killed later, while it fills or converts the copy.
#[pyfunction]
pub(super) fn check_memory(bytes: u64, what: String, advice: String) -> PyResult<()> {
    crate::runtime::memory::check(bytes, || (what, advice)).map_err(PyErr::from)
}

/// Writes bytes to `path` atomically (temporary file, fsync, rename).
#[pyfunction]
pub(super) fn write_atomic(py: Python<'_>, path: &str, data: &[u8]) -> PyResult<()> {
    detach(py, || crate::atomic::write_atomic(path, data)).map_err(PyErr::from)
}

/// `write_atomic` that calls `before_rename()` once the data is on disk and before the rename,
/// so that tests can kill the process at that point; an exception from it aborts the write.
#[pyfunction]
pub(super) fn _debug_write_atomic(
    py: Python<'_>,
    path: &str,
    data: &[u8],
    before_rename: Py<PyAny>,
) -> PyResult<()> {
    let mut raised: Option<PyErr> = None;
    let result = detach(py, || {
        crate::atomic::write_atomic_then(path, data, &mut || {
            Python::attach(|py| before_rename.call0(py).map(|_| ())).map_err(|e| {
                let message = e.to_string();
                raised = Some(e);
                Error::Interrupted(message)
            })
        })
    });
    match (result, raised) {
        (Ok(()), _) => Ok(()),
        (Err(_), Some(e)) => Err(e),
        (Err(e), None) => Err(PyErr::from(e)),
    }
}

/// Panics on purpose inside the guarded boundary, on the calling thread (place="caller") or
/// in a rayon worker (place="worker"), so that tests can check that no panic reaches Python.
#[pyfunction]
pub(super) fn _debug_panic(py: Python<'_>, place: &str) -> PyResult<()> {
    detach(py, || crate::runtime::guard::debug_panic(place)).map_err(PyErr::from)
}

/// Whether rayon's global pool had been started in this process before this call. It starts
/// one (of one thread) when none was, so a test calls it once, last, in a process of its own:
/// the core runs every parallel step on a pool of its own (`runtime::pool::with_threads`), and
/// a step that started the global pool would make every later one panic after a failed start.
#[pyfunction]
pub(super) fn _debug_global_pool_started() -> bool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .is_err()
}
