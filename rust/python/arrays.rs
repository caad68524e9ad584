//! Borrowing NumPy arrays (through `ndbuf`) as the core's views: dense and CSR feature
//! matrices, 1-D slices, query codes. Nothing is copied; the views are checked by the core's
//! constructors.

use super::ndbuf::{Element, PyReadonlyArray1, PyReadonlyArray2, SliceError};

use crate::binning::Missing;
use crate::data::BinnedView;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::detach;
use crate::data::{CsrView, DenseView, QueryGroups, RowMatrix, Scalar, SparseIndex};
use crate::runtime::pool::with_threads;

/// How much of a matrix's values a view checks (see `Matrix::run_checked`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    Values,
    Shape,
}

/// A feature matrix borrowed for one call of the core, from a `CoreMatrix` (`matrix.rs`, whose
/// `Matrix::extract` is the only maker of one).
pub(super) enum Matrix<'py> {
    Binned {
        codes: Codes<'py>,
        /// The pairs' codes in an array of their own (`BinnedView::split`), or None when
        /// `codes` holds them after the base features'.
        pair_codes: Option<Codes<'py>>,
        /// Parsed once, when the `CoreMatrix` was made.
        thresholds: std::sync::Arc<crate::binning::Thresholds>,
        missing: Missing,
        /// The coarse threshold counts of every pair column after the base features (see
        /// `crate::data::binned`); empty without pairs.
        grids: Vec<(usize, usize)>,
    },
    DenseF64(PyReadonlyArray2<'py, f64>),
    DenseF32(PyReadonlyArray2<'py, f32>),
    Csr {
        data: Floats<'py>,
        indices: Ints<'py>,
        indptr: Ints<'py>,
        shape: (usize, usize),
    },
    /// A matrix whose columns are read centered and scaled (`crate::data::ScaledView`): a
    /// CoreMatrix with `columns = (center, scale)`, the center empty for none.
    Scaled {
        inner: Box<Matrix<'py>>,
        center: PyReadonlyArray1<'py, f64>,
        scale: PyReadonlyArray1<'py, f64>,
    },
}

/// A matrix view's work with its result type erased (see `Matrix::run_checked`).
type ViewFn<'a> = &'a mut (dyn FnMut(&dyn RowMatrix) -> crate::Result<()> + Send);

pub(super) enum Codes<'py> {
    U8(PyReadonlyArray2<'py, u8>),
    U16(PyReadonlyArray2<'py, u16>),
}

pub(super) enum Floats<'py> {
    F64(PyReadonlyArray1<'py, f64>),
    F32(PyReadonlyArray1<'py, f32>),
}

pub(super) enum Ints<'py> {
    I32(PyReadonlyArray1<'py, i32>),
    I64(PyReadonlyArray1<'py, i64>),
}

pub(super) fn slice<'a, T: Element>(
    a: &'a PyReadonlyArray1<'_, T>,
    what: &str,
) -> PyResult<&'a [T]> {
    a.as_slice()
        .map_err(|e| layout_error(e, what, "a contiguous array"))
}

/// The error of an array the core cannot read in place: `what` must be `layout`. The Python
/// layer hands over C-contiguous, aligned arrays, so this is an internal error.
fn layout_error(e: SliceError, what: &str, layout: &str) -> PyErr {
    PyValueError::new_err(match e {
        SliceError::NotContiguous => format!("{what} must be {layout}"),
        SliceError::Misaligned => format!("{what} must be an aligned array"),
    })
}

/// The values of a 2-D array in row order with its shape; `what` names it in the error.
pub(super) fn rows<'a, T: Element>(
    a: &'a PyReadonlyArray2<'_, T>,
    what: &str,
) -> PyResult<(&'a [T], usize, usize)> {
    // as_slice accepts C order alone: Fortran order would be read as the transpose.
    let s = a
        .as_slice()
        .map_err(|e| layout_error(e, what, "a C-contiguous (row-major) array"))?;
    Ok((s, a.shape()[0], a.shape()[1]))
}

impl<'py> Matrix<'py> {
    pub(super) fn shape(&self) -> (usize, usize) {
        let of = |s: &[usize]| (s[0], s[1]);
        match self {
            Matrix::DenseF64(a) => of(a.shape()),
            Matrix::DenseF32(a) => of(a.shape()),
            Matrix::Csr { shape, .. } => *shape,
            Matrix::Scaled { inner, .. } => inner.shape(),
            Matrix::Binned { codes, .. } => match codes {
                Codes::U8(a) => of(a.shape()),
                Codes::U16(a) => of(a.shape()),
            },
        }
    }

    pub(super) fn n_rows(&self) -> usize {
        self.shape().0
    }

    /// Builds the view (checking every value) and runs `f` on it with the GIL released, on a
    /// pool of `n_threads` threads (0: one per core).
    pub(super) fn run<R: Send>(
        &self,
        py: Python<'_>,
        n_threads: usize,
        f: impl FnOnce(&dyn RowMatrix) -> crate::Result<R> + Send,
    ) -> PyResult<R> {
        self.run_checked(py, Check::Values, n_threads, f)
    }

    /// `run` with the values' checks as `check` says: `Check::Shape` for arrays whose values
    /// were checked before and have not changed (a prepared partition, `partition.rs`), so that
    /// an iteration does not read them an extra time.
    ///
    /// The view is built on the call's pool, since checking the values is a parallel scan:
    /// outside a pool it would start rayon's global pool (see `runtime::pool::with_threads`).
    /// A kernel in `f` that asks for the same thread count runs on the same pool.
    pub(super) fn run_checked<R: Send>(
        &self,
        py: Python<'_>,
        check: Check,
        n_threads: usize,
        f: impl FnOnce(&dyn RowMatrix) -> crate::Result<R> + Send,
    ) -> PyResult<R> {
        // Generic only in this shell: the views' construction below (and the call's thread,
        // pool and guards under it) is compiled once per element type instead of once per
        // binding and element type, which was most of the crate's compile time.
        let mut f = Some(f);
        let mut out = None;
        self.run_erased(py, check, n_threads, &mut |m| {
            let f = f.take().expect("a matrix's work runs once");
            out = Some(f(m)?);
            Ok(())
        })?;
        Ok(out.expect("run_erased returns Ok only after the work ran"))
    }

    fn run_erased(
        &self,
        py: Python<'_>,
        check: Check,
        n_threads: usize,
        f: ViewFn<'_>,
    ) -> PyResult<()> {
        #[allow(clippy::too_many_arguments)]
        fn csr<T: Scalar + Element, I: SparseIndex + Element>(
            py: Python<'_>,
            check: Check,
            data: &PyReadonlyArray1<'_, T>,
            indices: &PyReadonlyArray1<'_, I>,
            indptr: &PyReadonlyArray1<'_, I>,
            shape: (usize, usize),
            n_threads: usize,
            f: ViewFn<'_>,
        ) -> PyResult<()> {
            let (d, i, p) = (
                slice(data, "X.data")?,
                slice(indices, "X.indices")?,
                slice(indptr, "X.indptr")?,
            );
            detach(py, || {
                with_threads(n_threads, || {
                    let view = match check {
                        Check::Values => CsrView::new(p, i, d, shape.0, shape.1),
                        Check::Shape => CsrView::known_valid(p, i, d, shape.0, shape.1),
                    };
                    f(&view?)
                })?
            })
            .map_err(PyErr::from)
        }
        fn dense<T: Scalar + Element>(
            py: Python<'_>,
            check: Check,
            a: &PyReadonlyArray2<'_, T>,
            n_threads: usize,
            f: ViewFn<'_>,
        ) -> PyResult<()> {
            let (s, n, d) = rows(a, "X")?;
            detach(py, || {
                with_threads(n_threads, || {
                    let view = match check {
                        Check::Values => DenseView::new(s, n, d),
                        Check::Shape => DenseView::known_finite(s, n, d),
                    };
                    f(&view?)
                })?
            })
            .map_err(PyErr::from)
        }
        let t = n_threads;
        match self {
            Matrix::Scaled {
                inner,
                center,
                scale,
            } => {
                let (c, s) = (
                    slice(center, "column centers")?,
                    slice(scale, "column scales")?,
                );
                inner.run_erased(py, check, t, &mut |m| {
                    f(&crate::data::ScaledView::new(m, c, s)?)
                })
            }
            Matrix::Binned {
                codes,
                pair_codes,
                thresholds,
                missing,
                grids,
            } => run_binned(
                py,
                (codes, pair_codes.as_ref()),
                thresholds,
                *missing,
                grids,
                t,
                f,
            ),
            Matrix::DenseF64(a) => dense(py, check, a, t, f),
            Matrix::DenseF32(a) => dense(py, check, a, t, f),
            Matrix::Csr {
                data,
                indices,
                indptr,
                shape,
            } => match (data, indices, indptr) {
                (Floats::F64(d), Ints::I32(i), Ints::I32(p)) => {
                    csr(py, check, d, i, p, *shape, t, f)
                }
                (Floats::F64(d), Ints::I64(i), Ints::I64(p)) => {
                    csr(py, check, d, i, p, *shape, t, f)
                }
                (Floats::F32(d), Ints::I32(i), Ints::I32(p)) => {
                    csr(py, check, d, i, p, *shape, t, f)
                }
                (Floats::F32(d), Ints::I64(i), Ints::I64(p)) => {
                    csr(py, check, d, i, p, *shape, t, f)
                }
                _ => Err(PyValueError::new_err(
                    "sparse X.indices and X.indptr must have the same integer type",
                )),
            },
        }
    }
}

/// Runs `f` on the view `make` builds, with the GIL released, on a pool of `n_threads`.
fn viewed<V: RowMatrix>(
    py: Python<'_>,
    n_threads: usize,
    f: ViewFn<'_>,
    make: impl FnOnce() -> crate::Result<V> + Send,
) -> PyResult<()> {
    detach(py, || with_threads(n_threads, || f(&make()?))?).map_err(PyErr::from)
}

/// `Matrix::run_erased` of bin codes: one array of them, or the base and pair codes in two
/// (`BinnedView::split`), each of either code type.
fn run_binned(
    py: Python<'_>,
    (codes, pair_codes): (&Codes<'_>, Option<&Codes<'_>>),
    th: &crate::binning::Thresholds,
    m: Missing,
    grids: &[(usize, usize)],
    t: usize,
    f: ViewFn<'_>,
) -> PyResult<()> {
    #[allow(clippy::too_many_arguments)]
    fn binned<B: crate::data::binned::Code + Element, P: crate::data::binned::Code + Element>(
        py: Python<'_>,
        codes: &PyReadonlyArray2<'_, B>,
        pair_codes: Option<&PyReadonlyArray2<'_, P>>,
        th: &crate::binning::Thresholds,
        missing: Missing,
        grids: &[(usize, usize)],
        n_threads: usize,
        f: ViewFn<'_>,
    ) -> PyResult<()> {
        let (s, n, d) = rows(codes, "bin codes")?;
        let Some(pair_codes) = pair_codes else {
            // The code columns are the base features' and then the pairs'.
            let base = d.saturating_sub(grids.len());
            return viewed(py, n_threads, f, || {
                BinnedView::with_pairs(s, n, base, th, missing, grids)
            });
        };
        let (p, n_p, d_p) = rows(pair_codes, "pair codes")?;
        if (n_p, d_p) != (n, grids.len()) {
            return Err(PyValueError::new_err(format!(
                "pair codes must have shape {:?} ({n} rows of bin codes, {} pairs), got {:?}",
                (n, grids.len()),
                grids.len(),
                (n_p, d_p)
            )));
        }
        viewed(py, n_threads, f, || {
            BinnedView::split((s, p), n, d, th, missing, grids)
        })
    }
    // Without pair codes their type is any (u8).
    let none = None::<&PyReadonlyArray2<'_, u8>>;
    match (codes, pair_codes) {
        (Codes::U8(a), None) => binned(py, a, none, th, m, grids, t, f),
        (Codes::U16(a), None) => binned(py, a, none, th, m, grids, t, f),
        (Codes::U8(a), Some(Codes::U8(p))) => binned(py, a, Some(p), th, m, grids, t, f),
        (Codes::U8(a), Some(Codes::U16(p))) => binned(py, a, Some(p), th, m, grids, t, f),
        (Codes::U16(a), Some(Codes::U8(p))) => binned(py, a, Some(p), th, m, grids, t, f),
        (Codes::U16(a), Some(Codes::U16(p))) => binned(py, a, Some(p), th, m, grids, t, f),
    }
}

pub(super) fn groups(codes: &PyReadonlyArray1<'_, i64>, n_queries: usize) -> PyResult<QueryGroups> {
    QueryGroups::from_codes(slice(codes, "qid codes")?, n_queries).map_err(PyErr::from)
}

/// A dense float matrix for binning, where NaN may mark missing values (so it is not checked
/// for finiteness here, unlike `Matrix`).
pub(super) enum DenseFloats<'py> {
    F64(PyReadonlyArray2<'py, f64>),
    F32(PyReadonlyArray2<'py, f32>),
}

impl<'py> DenseFloats<'py> {
    pub(super) fn extract(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = obj.extract() {
            return Ok(DenseFloats::F64(a));
        }
        obj.extract().map(DenseFloats::F32).map_err(|_| {
            PyValueError::new_err("X must be a 2-D float32 or float64 array for binning")
        })
    }

    pub(super) fn n_rows(&self) -> usize {
        match self {
            DenseFloats::F64(a) => a.shape()[0],
            DenseFloats::F32(a) => a.shape()[0],
        }
    }

    pub(super) fn shape(&self) -> (usize, usize) {
        match self {
            DenseFloats::F64(a) => (a.shape()[0], a.shape()[1]),
            DenseFloats::F32(a) => (a.shape()[0], a.shape()[1]),
        }
    }
}

/// Runs `$body` with the GIL released (through `detach`), `$s` bound to the values of
/// whichever float dtype the `DenseFloats` `$x` holds (`&[f64]` or `&[f32]`) and `$n`, `$d` to
/// its shape: the body is written once and compiled for each dtype. The caller imports
/// `detach` (the guard test in guard.rs counts qualified calls of it).
macro_rules! with_dense_floats {
    ($py:expr, $x:expr, |$s:ident, $n:ident, $d:ident| $body:expr) => {
        match $x {
            $crate::python::arrays::DenseFloats::F64(a) => {
                let ($s, $n, $d) = $crate::python::arrays::rows(a, "X")?;
                detach($py, || $body).map_err(pyo3::PyErr::from)
            }
            $crate::python::arrays::DenseFloats::F32(a) => {
                let ($s, $n, $d) = $crate::python::arrays::rows(a, "X")?;
                detach($py, || $body).map_err(pyo3::PyErr::from)
            }
        }
    };
}
pub(super) use with_dense_floats;

/// A binned matrix's thresholds from the arrays of `Binner.thresholds_`: column j's sorted
/// thresholds are values[offsets[j]:offsets[j + 1]].
pub(super) fn thresholds_from(
    values: &PyReadonlyArray1<'_, f64>,
    offsets: &PyReadonlyArray1<'_, i64>,
) -> PyResult<crate::binning::Thresholds> {
    let offsets = slice(offsets, "threshold offsets")?
        .iter()
        .map(|&o| {
            usize::try_from(o)
                .map_err(|_| PyValueError::new_err(format!("threshold offset {o} is negative")))
        })
        .collect::<PyResult<Vec<_>>>()?;
    crate::binning::Thresholds::new(slice(values, "thresholds")?.to_vec(), offsets)
        .map_err(PyErr::from)
}

/// The pairs' coarse threshold counts (a_0, b_0, a_1, b_1, ...) as (a, b) per pair.
pub(super) fn grids_from(flat: &[i64]) -> PyResult<Vec<(usize, usize)>> {
    if flat.len() % 2 != 0 {
        return Err(PyValueError::new_err(
            "pair grids must hold two threshold counts per pair",
        ));
    }
    flat.chunks_exact(2)
        .map(|g| match (usize::try_from(g[0]), usize::try_from(g[1])) {
            (Ok(a), Ok(b)) => Ok((a, b)),
            _ => Err(PyValueError::new_err(format!(
                "pair grid ({}, {}) has a negative threshold count",
                g[0], g[1]
            ))),
        })
        .collect()
}
