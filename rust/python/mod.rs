//! All PyO3 code (module `svmmap._core`), split by concern: `matrix` (the CoreMatrix class,
//! checked once) and `arrays` (its views, borrowed per call); `config`, `params`, `losses` and
//! `tables` (the training configuration, validated once); `training`, `solve`, `queries`,
//! `latent`, `partition` and `results`; `evaluation`, `io` and `binning`; `ndbuf` (NumPy arrays
//! read and made through their array interface). Each binding borrows the
//! NumPy arrays, builds a view, releases the GIL, calls the core and converts its error. Nothing
//! here computes anything itself.

mod arrays;
mod binning;
mod config;
mod evaluation;
mod io;
mod latent;
mod losses;
mod matrix;
mod ndbuf;
mod params;
mod partition;
mod queries;
mod results;
mod solve;
mod tables;
mod training;

use pyo3::create_exception;
use pyo3::exceptions::{
    PyKeyboardInterrupt, PyMemoryError, PyOSError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;

use crate::error::Error;

create_exception!(
    _core,
    DataFormatError,
    PyValueError,
    "A data file could not be parsed; the message names the file, the line and the field."
);
create_exception!(
    _core,
    ModelFormatError,
    PyValueError,
    "A model file is truncated, corrupted, of another format or of an unsupported version."
);

create_exception!(
    _core,
    InternalError,
    PyRuntimeError,
    "A bug in svmmap: a panic inside the Rust core was caught at the boundary. Please report it."
);

/// How often the calling thread looks for Ctrl-C while the core works.
const SIGNAL_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Releases the GIL and runs `f`, turning a panic in it (or in a rayon worker it waits for)
/// into `Error::Internal`, so that no panic crosses into Python, and letting Ctrl-C stop it.
/// Every call into the core goes through here (a test in guard.rs checks that rust/python/ has
/// no other `py.detach`).
///
/// Python runs signal handlers only on its main thread and only when asked, so `f` runs on a
/// worker thread while the calling thread sleeps without the GIL and wakes every
/// `SIGNAL_POLL` to run `check_signals`. On KeyboardInterrupt (or any exception a handler
/// raises) it requests the call's cancellation token, which the core's loops check between
/// chunks of work, waits for `f` to stop, and raises the exception.
///
/// Each call has a token of its own (rust/runtime/cancel.rs), seen by the worker thread and by the
/// threads of the pools it checks out, so an interrupt stops this call only, and no other
/// call (from another Python thread) can erase it.
pub(crate) fn detach<R: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> crate::Result<R> + Send,
) -> crate::Result<R> {
    // Generic only in this shell: the thread, the token and the guard below are compiled once
    // instead of once per binding (over a hundred copies were a quarter of the crate's code).
    let mut f = Some(f);
    let mut out = None;
    detach_erased(py, &mut || {
        let f = f.take().expect("a core call's work runs once");
        out = Some(f()?);
        Ok(())
    })?;
    Ok(out.expect("detach_erased returns Ok only after the work ran"))
}

fn detach_erased(
    py: Python<'_>,
    f: &mut (dyn FnMut() -> crate::Result<()> + Send),
) -> crate::Result<()> {
    let token = crate::runtime::cancel::Token::new();
    // A call made from inside another call's work (a Python callback during a fit calling
    // the core) stops when that call is interrupted.
    let _following = crate::runtime::cancel::Token::current().map(|outer| outer.lead(&token));
    let caller = std::thread::current();
    // Set by the worker just before it wakes the caller: `is_finished` alone would race with
    // the wake-up (the thread is not finished yet when it unparks) and cost a whole poll.
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        // Starting a thread needs memory for its stack: under an address-space limit it can
        // fail, which `scope.spawn` turns into a panic (pyo3's PanicException); it is an
        // error of the call instead.
        let memory_error = |e: std::io::Error| {
            Error::Memory(format!(
                "cannot start the thread of a core call ({e}): the process is out of memory \
                 or of threads"
            ))
        };
        crate::runtime::memory::check_thread_room(None).map_err(memory_error)?;
        let worker = std::thread::Builder::new()
            .spawn_scoped(scope, || {
                let result = token.enter(|| crate::runtime::guard::catch_panics(f));
                done.store(true, std::sync::atomic::Ordering::Release);
                caller.unpark();
                result
            })
            .map_err(memory_error)?;
        let mut raised: Option<PyErr> = None;
        loop {
            py.detach(|| std::thread::park_timeout(SIGNAL_POLL));
            if done.load(std::sync::atomic::Ordering::Acquire) {
                break;
            }
            if raised.is_none() {
                if let Err(e) = py.check_signals() {
                    token.request();
                    raised = Some(e);
                }
            }
        }
        let result = worker.join().unwrap_or_else(|_| {
            Err(Error::Internal(
                "the worker thread of a core call panicked outside the guard".to_string(),
            ))
        });
        match raised {
            Some(e) => {
                // Raised after the work stopped, whatever its outcome: the user asked to stop.
                e.restore(py);
                Err(Error::Interrupted("interrupted by the user".to_string()))
            }
            None => result,
        }
    })
}

/// One Python exception class per error variant, so that every binding converts the core's
/// errors with `?`.
impl From<Error> for PyErr {
    fn from(err: Error) -> PyErr {
        match err {
            Error::Internal(_) => InternalError::new_err(err.to_string()),
            Error::Parse { .. } => DataFormatError::new_err(err.to_string()),
            Error::Io {
                ref path,
                ref source,
                ref file,
            } => {
                let errno = crate::error::os_errno(source).unwrap_or(0);
                let kind = source.kind();
                let message = source.to_string();
                // The OS's name as Python has it (os.fsdecode's str, a byte that is not UTF-8
                // as a lone surrogate, which the exception's repr shows as "\udcff"), rather
                // than a text that names no file.
                let name: std::ffi::OsString = match file {
                    Some(file) => file.as_os_str().to_os_string(),
                    None => path.into(),
                };
                if kind == std::io::ErrorKind::NotFound {
                    pyo3::exceptions::PyFileNotFoundError::new_err((errno, message, name))
                } else {
                    PyOSError::new_err((errno, message, name))
                }
            }
            Error::Model(_) => ModelFormatError::new_err(err.to_string()),
            // The exception a signal handler raised (KeyboardInterrupt) was set by `detach`;
            // without one, the call was stopped through an enclosing call's token (a callback
            // calling the core during an interrupted fit).
            Error::Interrupted(_) => Python::attach(PyErr::take)
                .unwrap_or_else(|| PyKeyboardInterrupt::new_err(err.to_string())),
            Error::Memory(_) => PyMemoryError::new_err(err.to_string()),
            _ => PyValueError::new_err(err.to_string()),
        }
    }
}

/// The core looks up NumPy's `ndarray`, `asarray` and `empty` (see `ndbuf`) once, here while the module
/// is imported: a first array would otherwise do it. Every step of it is fallible, so a
/// `KeyboardInterrupt` from a Ctrl-C that lands during it fails that import or call and the
/// next one tries again. (With the `numpy` crate, which the bindings used before, a failure
/// while setting up NumPy's C API was a panic, raised as `PanicException`.)
///
/// Importing NumPy costs more than the whole `svmmap --version` or `--help`, which read only
/// this module's tables, so the import does it only when NumPy is already imported (every
/// svmmap module that hands arrays to the core imports NumPy before the core). A path that
/// imports the core first and NumPy later calls `_set_up_numpy` before its first array: the
/// command line after parsing its arguments, and `svmmap`'s lazy names.
fn set_up_numpy(py: Python<'_>) -> PyResult<()> {
    ndbuf::set_up(py)
}

/// Looks NumPy's objects up for the core's calls if that was not done at import (see
/// `set_up_numpy`); returns immediately once done. A `KeyboardInterrupt` during it is raised
/// here, and a later call sets it up again.
#[pyfunction]
fn _set_up_numpy(py: Python<'_>) -> PyResult<()> {
    set_up_numpy(py)
}

/// Whether NumPy's objects are looked up for the core's calls (tests check every path into the
/// core sets them up before its first array).
#[pyfunction]
fn _numpy_ready(py: Python<'_>) -> bool {
    ndbuf::ready(py)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let numpy_imported = m
        .py()
        .import("sys")?
        .getattr("modules")?
        .contains("numpy")?;
    if numpy_imported {
        set_up_numpy(m.py())?;
    }
    m.add_function(wrap_pyfunction!(_set_up_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(_numpy_ready, m)?)?;
    m.add("DataFormatError", m.py().get_type::<DataFormatError>())?;
    m.add("ModelFormatError", m.py().get_type::<ModelFormatError>())?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    crate::runtime::guard::install_quiet_hook();
    m.add_function(wrap_pyfunction!(io::_debug_panic, m)?)?;
    m.add_function(wrap_pyfunction!(io::_debug_global_pool_started, m)?)?;
    m.add_function(wrap_pyfunction!(io::_debug_write_atomic, m)?)?;
    // The package version, declared once in Cargo.toml: `svmmap.__version__` reads it here
    // rather than through importlib.metadata, whose import and search of the installed
    // distributions cost a quarter of `svmmap learn`'s start-up.
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(binning::bin_codes, m)?)?;
    m.add_function(wrap_pyfunction!(binning::pair_histograms, m)?)?;
    m.add_function(wrap_pyfunction!(training::fit_path, m)?)?;
    m.add_function(wrap_pyfunction!(training::fit_path_from, m)?)?;
    m.add_function(wrap_pyfunction!(latent::fit_latent, m)?)?;
    m.add_function(wrap_pyfunction!(latent::latent_target_coefficients, m)?)?;
    m.add_function(wrap_pyfunction!(evaluation::predict, m)?)?;
    m.add_function(wrap_pyfunction!(evaluation::column_moments, m)?)?;
    m.add_function(wrap_pyfunction!(evaluation::transpose_dot, m)?)?;
    m.add_function(wrap_pyfunction!(evaluation::oracle_argmax, m)?)?;
    m.add_function(wrap_pyfunction!(evaluation::structured_hinge, m)?)?;
    m.add_function(wrap_pyfunction!(evaluation::evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(io::read_letor_file, m)?)?;
    m.add_function(wrap_pyfunction!(io::read_model_text, m)?)?;
    m.add_function(wrap_pyfunction!(io::read_text_file, m)?)?;
    m.add_function(wrap_pyfunction!(io::write_model_text, m)?)?;
    m.add_function(wrap_pyfunction!(io::write_atomic, m)?)?;
    m.add_function(wrap_pyfunction!(io::check_memory, m)?)?;
    m.add_function(wrap_pyfunction!(binning::bin_fit, m)?)?;
    m.add_function(wrap_pyfunction!(binning::bin_transform, m)?)?;
    m.add_function(wrap_pyfunction!(solve::solve, m)?)?;
    m.add_function(wrap_pyfunction!(solve::solve_warm, m)?)?;
    m.add_function(wrap_pyfunction!(queries::problem_summary, m)?)?;
    m.add_function(wrap_pyfunction!(queries::query_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(queries::n_threads, m)?)?;
    m.add_function(wrap_pyfunction!(params::parameter_error, m)?)?;
    m.add_function(wrap_pyfunction!(params::check_allocation, m)?)?;
    m.add_class::<config::TrainConfig>()?;
    m.add_class::<binning::PyBinnerConfig>()?;
    m.add_class::<results::ProblemSummary>()?;
    m.add_class::<results::FitSummary>()?;
    m.add_class::<partition::Partition>()?;
    m.add_class::<solve::WarmState>()?;
    m.add_class::<matrix::CoreMatrix>()?;
    m.add("LOSSES", tables::losses_table(m.py())?)?;
    m.add("TRAINING_PARAMETERS", tables::parameters_table(m.py())?)?;
    m.add("SPELLINGS", tables::spellings(m.py())?)?;
    // The parameter that bounds a fit's seconds, also the name of the stop it causes: the
    // Python layer reads its name here rather than spelling it.
    m.add("TIME_LIMIT", crate::solver::name_of::max_seconds)?;
    m.add(
        "LOSS_COMBINATION_EXAMPLES",
        tables::combination_examples(m.py())?,
    )?;
    Ok(())
}
