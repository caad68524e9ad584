//! `_core.CoreMatrix`: the one form in which a feature matrix crosses into the core, a class of
//! the extension. Its arrays are sorted by kind and dtype, aligned and checked once, when it is
//! made; each core call then only borrows them (`Matrix::of`), with no Python attribute look-up
//! and no import. `svmmap._data.CoreMatrix` subclasses it with the NumPy helpers of the Python
//! layer (row subsets, column moments), and its module docstring describes the kinds.

use std::sync::Arc;

use super::ndbuf::{Element, Interface, PyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::arrays::{grids_from, slice, thresholds_from, Codes, Floats, Ints, Matrix};
use crate::binning::{Missing, Thresholds};

/// The kinds of matrix the core reads, as `CoreMatrix(kind=...)` names them.
const KINDS: [&str; 3] = ["dense", "csr", "binned"];

/// One of two array types, held by the matrix between calls.
enum Either<A, B> {
    First(A),
    Second(B),
}

/// A matrix's column centers (empty for none) and scales.
type Columns = (PyArray1<f64>, PyArray1<f64>);

/// The arrays of a `CoreMatrix` by kind and dtype, as `CoreMatrix.__new__` sorted them.
enum Stored {
    Dense(Either<PyArray2<f64>, PyArray2<f32>>),
    Csr {
        data: Either<PyArray1<f64>, PyArray1<f32>>,
        indices: Either<PyArray1<i32>, PyArray1<i64>>,
        indptr: Either<PyArray1<i32>, PyArray1<i64>>,
    },
    Binned {
        codes: Either<PyArray2<u8>, PyArray2<u16>>,
        /// The pairs' codes in an array of their own (the fifth array), or None.
        pair_codes: Option<Either<PyArray2<u8>, PyArray2<u16>>>,
        /// Parsed once from the threshold arrays, shared by every call's view.
        thresholds: Arc<Thresholds>,
        grids: Vec<(usize, usize)>,
    },
}

/// A feature matrix as the core borrows it: its kind (`"dense"`, `"csr"` or `"binned"`), the
/// arrays the core reads (C-contiguous and aligned, copied on construction only when they are
/// not), its shape, whether bin codes carry missing-value indicators, and optional column
/// centers and scales. Immutable, so that what was checked on construction stays true.
#[pyclass(module = "svmmap._core", frozen, subclass)]
pub struct CoreMatrix {
    kind: &'static str,
    stored: Stored,
    /// The arrays as made on construction, in the order given: what `arrays` returns and
    /// pickling rebuilds from.
    arrays: Py<PyTuple>,
    n_rows: usize,
    n_cols: usize,
    missing: bool,
    columns: Option<Columns>,
}

/// `a` as a C-contiguous and aligned array: itself when it is one, else NumPy's copy
/// (`numpy.require`, with `dtype` when given). Aligned matters besides contiguous: arrays
/// rebuilt from network frames or made with `np.frombuffer` at an odd offset can be unaligned
/// views, which Rust must not read as slices.
fn aligned<'py>(a: &Bound<'py, PyAny>, dtype: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
    if let Some(array) = Interface::of(a)? {
        let dtype_ok = match dtype {
            None => true,
            Some(_) => PyArray1::<f64>::of(a).is_ok(),
        };
        if dtype_ok && array.c_contiguous && array.aligned {
            return Ok(a.clone());
        }
    }
    // The import happens only for an array that needs a copy; NumPy is imported already.
    a.py()
        .import("numpy")?
        .getattr("require")?
        .call1((a, dtype, ("C", "A")))
}

/// The first of two array types that `a` is, or the error `message`.
fn either<A: Element, B: Element, const N: usize>(
    a: &Bound<'_, PyAny>,
    message: &str,
) -> PyResult<Either<PyArray<A, N>, PyArray<B, N>>> {
    if let Ok(first) = PyArray::of(a) {
        return Ok(Either::First(first));
    }
    PyArray::of(a)
        .map(Either::Second)
        .map_err(|_| PyValueError::new_err(message.to_string()))
}

/// A 1-D array of exactly `T` (a threshold or grid array of a binned matrix), or pyo3's error
/// of the conversion that failed, as the core's calls raised it before.
fn vector<'py, T: Element>(a: &Bound<'py, PyAny>) -> PyResult<PyReadonlyArray1<'py, T>> {
    a.extract()
}

impl CoreMatrix {
    /// The arrays sorted by kind, with the arrays' own shape checked against `n_rows` and
    /// `n_cols` where it states them.
    fn store(
        kind: &str,
        arrays: &Bound<'_, PyTuple>,
        (n_rows, n_cols): (usize, usize),
    ) -> PyResult<Stored> {
        let item = |i: usize| arrays.get_item(i);
        let stored = match (kind, arrays.len()) {
            ("dense", 1) => Stored::Dense(either(
                &item(0)?,
                "X must be a 2-D float32 or float64 array",
            )?),
            ("csr", 3) => {
                let ints = |i: usize, what: &str| {
                    either(
                        &item(i)?,
                        &format!("sparse X.{what} must be int32 or int64"),
                    )
                };
                let (indices, indptr) = (ints(1, "indices")?, ints(2, "indptr")?);
                if matches!(
                    (&indices, &indptr),
                    (Either::First(_), Either::Second(_)) | (Either::Second(_), Either::First(_))
                ) {
                    return Err(PyValueError::new_err(
                        "sparse X.indices and X.indptr must have the same integer type",
                    ));
                }
                Stored::Csr {
                    data: either(&item(0)?, "sparse X.data must be float32 or float64")?,
                    indices,
                    indptr,
                }
            }
            ("binned", 3..=5) => {
                let grids = if arrays.len() >= 4 {
                    grids_from(slice(&vector::<i64>(&item(3)?)?, "pair grids")?)?
                } else {
                    Vec::new()
                };
                let thresholds =
                    thresholds_from(&vector::<f64>(&item(1)?)?, &vector::<i64>(&item(2)?)?)?;
                let pair_codes = if arrays.len() == 5 {
                    let message = "pair codes must be a 2-D uint8 or uint16 array";
                    Some(either(&item(4)?, message)?)
                } else {
                    None
                };
                Stored::Binned {
                    codes: either(&item(0)?, "bin codes must be a 2-D uint8 or uint16 array")?,
                    pair_codes,
                    thresholds: Arc::new(thresholds),
                    grids,
                }
            }
            (other, n) => {
                return Err(PyValueError::new_err(format!(
                    "a CoreMatrix of kind {other:?} with {n} arrays is not one the core reads"
                )))
            }
        };
        let py = arrays.py();
        // Binned codes have one column per base feature, not per indicator.
        let (rows, cols) = match &stored {
            Stored::Dense(Either::First(a)) => shape2(a.readonly(py)?.shape()),
            Stored::Dense(Either::Second(a)) => shape2(a.readonly(py)?.shape()),
            Stored::Binned {
                codes, pair_codes, ..
            } => {
                // Both arrays of codes have a row per document.
                let rows_of = |a: &Either<PyArray2<u8>, PyArray2<u16>>| -> PyResult<usize> {
                    Ok(match a {
                        Either::First(a) => a.readonly(py)?.shape()[0],
                        Either::Second(a) => a.readonly(py)?.shape()[0],
                    })
                };
                let rows = rows_of(codes)?;
                let pair_rows = pair_codes.as_ref().map(rows_of).transpose()?;
                (pair_rows.filter(|&r| r != rows).unwrap_or(rows), n_cols)
            }
            Stored::Csr { .. } => (n_rows, n_cols),
        };
        if (rows, cols) != (n_rows, n_cols) {
            return Err(PyValueError::new_err(format!(
                "the CoreMatrix says {:?} but its array has shape {:?}",
                (n_rows, n_cols),
                (rows, cols)
            )));
        }
        Ok(stored)
    }
}

fn shape2(s: &[usize]) -> (usize, usize) {
    (s[0], s[1])
}

/// A stored array borrowed for one call (see `PyArray::readonly`).
fn borrow2<'py, T: Element>(
    py: Python<'py>,
    a: &PyArray2<T>,
) -> PyResult<super::ndbuf::PyReadonlyArray2<'py, T>> {
    a.readonly(py)
}

fn borrow1<'py, T: Element>(
    py: Python<'py>,
    a: &PyArray1<T>,
) -> PyResult<PyReadonlyArray1<'py, T>> {
    a.readonly(py)
}

/// Stored bin codes borrowed for one call.
fn codes_of<'py>(py: Python<'py>, a: &Either<PyArray2<u8>, PyArray2<u16>>) -> PyResult<Codes<'py>> {
    Ok(match a {
        Either::First(a) => Codes::U8(borrow2(py, a)?),
        Either::Second(a) => Codes::U16(borrow2(py, a)?),
    })
}

impl<'py> Matrix<'py> {
    /// The matrix `obj` (a `CoreMatrix`) borrowed for one call of the core.
    pub(super) fn extract(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let m = obj.cast::<CoreMatrix>().map_err(|_| {
            PyTypeError::new_err(format!(
                "the core takes a svmmap._core.CoreMatrix (svmmap._validation.check_matrix \
                 makes one), got {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        Matrix::of(obj.py(), m.get())
    }

    fn of(py: Python<'py>, m: &CoreMatrix) -> PyResult<Self> {
        let matrix = match &m.stored {
            Stored::Dense(Either::First(a)) => Matrix::DenseF64(borrow2(py, a)?),
            Stored::Dense(Either::Second(a)) => Matrix::DenseF32(borrow2(py, a)?),
            Stored::Csr {
                data,
                indices,
                indptr,
            } => {
                let ints = |a: &Either<PyArray1<i32>, PyArray1<i64>>| -> PyResult<Ints<'py>> {
                    Ok(match a {
                        Either::First(a) => Ints::I32(borrow1(py, a)?),
                        Either::Second(a) => Ints::I64(borrow1(py, a)?),
                    })
                };
                Matrix::Csr {
                    data: match data {
                        Either::First(a) => Floats::F64(borrow1(py, a)?),
                        Either::Second(a) => Floats::F32(borrow1(py, a)?),
                    },
                    indices: ints(indices)?,
                    indptr: ints(indptr)?,
                    shape: (m.n_rows, m.n_cols),
                }
            }
            Stored::Binned {
                codes,
                pair_codes,
                thresholds,
                grids,
            } => Matrix::Binned {
                codes: codes_of(py, codes)?,
                pair_codes: pair_codes.as_ref().map(|p| codes_of(py, p)).transpose()?,
                thresholds: Arc::clone(thresholds),
                missing: if m.missing {
                    Missing::Indicator
                } else {
                    Missing::Error
                },
                grids: grids.clone(),
            },
        };
        // The shape is checked again: an array's shape can be set in place after the matrix
        // was made (`a.shape = ...`), and the views must not read past its buffer.
        let (rows, cols) = matrix.shape();
        if rows != m.n_rows
            || (matches!(matrix, Matrix::DenseF64(_) | Matrix::DenseF32(_)) && cols != m.n_cols)
        {
            return Err(PyValueError::new_err(format!(
                "the CoreMatrix says {:?} but its array has shape {:?}",
                (m.n_rows, m.n_cols),
                (rows, cols)
            )));
        }
        Ok(match &m.columns {
            Some((center, scale)) => Matrix::Scaled {
                inner: Box::new(matrix),
                center: borrow1(py, center)?,
                scale: borrow1(py, scale)?,
            },
            None => matrix,
        })
    }
}

#[pymethods]
impl CoreMatrix {
    /// Checks the kind, the arrays' number, dtypes and shape (see `svmmap._data`), aligning
    /// each array (a copy only where one is not C-contiguous and aligned); `columns` are
    /// float64 centers (empty for none) and scales, one value per column.
    #[new]
    #[pyo3(signature = (kind, arrays, n_rows, n_cols, missing=false, columns=None))]
    fn new(
        py: Python<'_>,
        kind: &str,
        arrays: &Bound<'_, PyAny>,
        n_rows: usize,
        n_cols: usize,
        missing: bool,
        columns: Option<(Bound<'_, PyAny>, Bound<'_, PyAny>)>,
    ) -> PyResult<Self> {
        let Some(kind) = KINDS.iter().copied().find(|&k| k == kind) else {
            return Err(PyValueError::new_err(format!(
                "kind must be one of ('dense', 'csr', 'binned'), got {kind:?}"
            )));
        };
        let items = arrays
            .try_iter()?
            .map(|a| aligned(&a?, None))
            .collect::<PyResult<Vec<_>>>()?;
        let arrays = PyTuple::new(py, items)?;
        let stored = CoreMatrix::store(kind, &arrays, (n_rows, n_cols))?;
        let columns = match columns {
            None => None,
            Some((center, scale)) => {
                let column = |a: &Bound<'_, PyAny>| -> PyResult<PyArray1<f64>> {
                    PyArray1::of(&aligned(a, Some("float64"))?)
                };
                Some((column(&center)?, column(&scale)?))
            }
        };
        Ok(CoreMatrix {
            kind,
            stored,
            arrays: arrays.unbind(),
            n_rows,
            n_cols,
            missing,
            columns,
        })
    }

    /// "dense", "csr" or "binned".
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind
    }
    /// The arrays the core reads, as made on construction.
    #[getter]
    fn arrays(&self, py: Python<'_>) -> Py<PyTuple> {
        self.arrays.clone_ref(py)
    }
    #[getter]
    fn n_rows(&self) -> usize {
        self.n_rows
    }
    /// The number of columns the core reads (for bin codes, the indicator columns).
    #[getter]
    fn n_cols(&self) -> usize {
        self.n_cols
    }
    #[getter]
    fn shape(&self) -> (usize, usize) {
        (self.n_rows, self.n_cols)
    }
    /// Whether bin codes carry missing-value indicators.
    #[getter]
    fn missing(&self) -> bool {
        self.missing
    }
    /// The column centers (empty for none) and scales, or None.
    #[getter]
    fn columns(&self, py: Python<'_>) -> Option<(Py<PyAny>, Py<PyAny>)> {
        self.columns
            .as_ref()
            .map(|(c, s)| (c.bind(py).clone().unbind(), s.bind(py).clone().unbind()))
    }

    // Pickling (to Dask workers) rebuilds the matrix from its constructor's arguments, which
    // aligns arrays rebuilt from network frames again.
    #[allow(clippy::type_complexity)]
    fn __getnewargs__(
        &self,
        py: Python<'_>,
    ) -> (
        &'static str,
        Py<PyTuple>,
        usize,
        usize,
        bool,
        Option<(Py<PyAny>, Py<PyAny>)>,
    ) {
        (
            self.kind,
            self.arrays(py),
            self.n_rows,
            self.n_cols,
            self.missing,
            self.columns(py),
        )
    }

    fn __getstate__(&self, py: Python<'_>) -> Py<PyAny> {
        py.None()
    }
}
