//! Borrowing numpy buffers as the core's views: dense and CSR feature matrices, 1-D slices,
//! query codes. Nothing is copied; the views are checked by the core's constructors.

use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};

use crate::binning::Missing;
use crate::data::BinnedView;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::{detach, to_py};
use crate::data::{CsrView, DenseView, QueryGroups, RowMatrix, Scalar, SparseIndex};

/// A feature matrix as handed over by the Python layer: a C-contiguous 2-D float array, the
/// tuple (data, indices, indptr, n_rows, n_cols) of a CSR matrix, or the tuple (codes,
/// threshold values, threshold offsets, missing) of a binned matrix, whose codes are a
/// C-contiguous 2-D uint8 or uint16 array and `missing` is true with missing indicators.
pub(super) enum Matrix<'py> {
    Binned {
        codes: Codes<'py>,
        thresholds: crate::binning::Thresholds,
        missing: Missing,
    },
    DenseF64(PyReadonlyArray2<'py, f64>),
    DenseF32(PyReadonlyArray2<'py, f32>),
    Csr {
        data: Floats<'py>,
        indices: Ints<'py>,
        indptr: Ints<'py>,
        shape: (usize, usize),
    },
}

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

pub(super) fn slice<'a, T: numpy::Element>(
    a: &'a PyReadonlyArray1<'_, T>,
    what: &str,
) -> PyResult<&'a [T]> {
    a.as_slice()
        .map_err(|_| PyValueError::new_err(format!("{what} must be a contiguous array")))
}

impl<'py> Matrix<'py> {
    pub(super) fn extract(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(t) = obj.cast::<PyTuple>() {
            if t.len() == 4 {
                let (codes, values, offsets, missing): (
                    Bound<'py, PyAny>,
                    PyReadonlyArray1<'py, f64>,
                    PyReadonlyArray1<'py, i64>,
                    bool,
                ) = t.extract()?;
                let codes = if let Ok(a) = codes.extract() {
                    Codes::U8(a)
                } else {
                    Codes::U16(codes.extract().map_err(|_| {
                        PyValueError::new_err("bin codes must be a 2-D uint8 or uint16 array")
                    })?)
                };
                let missing = if missing {
                    Missing::Indicator
                } else {
                    Missing::Error
                };
                return Ok(Matrix::Binned {
                    codes,
                    thresholds: super::binning::thresholds_from(&values, &offsets)?,
                    missing,
                });
            }
            let (data, indices, indptr, n_rows, n_cols): (
                Bound<'py, PyAny>,
                Bound<'py, PyAny>,
                Bound<'py, PyAny>,
                usize,
                usize,
            ) = t.extract()?;
            let data = if let Ok(a) = data.extract() {
                Floats::F64(a)
            } else {
                Floats::F32(data.extract().map_err(|_| {
                    PyValueError::new_err("sparse X.data must be float32 or float64")
                })?)
            };
            let ints = |o: Bound<'py, PyAny>, what: &str| -> PyResult<Ints<'py>> {
                if let Ok(a) = o.extract() {
                    Ok(Ints::I32(a))
                } else {
                    Ok(Ints::I64(o.extract().map_err(|_| {
                        PyValueError::new_err(format!("sparse X.{what} must be int32 or int64"))
                    })?))
                }
            };
            return Ok(Matrix::Csr {
                data,
                indices: ints(indices, "indices")?,
                indptr: ints(indptr, "indptr")?,
                shape: (n_rows, n_cols),
            });
        }
        if let Ok(a) = obj.extract() {
            return Ok(Matrix::DenseF64(a));
        }
        if let Ok(a) = obj.extract() {
            return Ok(Matrix::DenseF32(a));
        }
        Err(PyValueError::new_err(
            "X must be a 2-D float32 or float64 array or a CSR matrix",
        ))
    }

    pub(super) fn n_rows(&self) -> usize {
        match self {
            Matrix::DenseF64(a) => a.shape()[0],
            Matrix::DenseF32(a) => a.shape()[0],
            Matrix::Csr { shape, .. } => shape.0,
            Matrix::Binned { codes, .. } => match codes {
                Codes::U8(a) => a.shape()[0],
                Codes::U16(a) => a.shape()[0],
            },
        }
    }

    /// Builds the view and runs `f` on it with the GIL released.
    pub(super) fn run<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&dyn RowMatrix) -> crate::Result<R> + Send,
    ) -> PyResult<R> {
        fn dense<'a, T: Scalar + numpy::Element>(
            a: &'a PyReadonlyArray2<'_, T>,
        ) -> PyResult<(&'a [T], usize, usize)> {
            // as_slice also accepts Fortran order, whose memory would be read as the transpose.
            if !a.is_c_contiguous() {
                return Err(PyValueError::new_err(
                    "X must be a C-contiguous (row-major) array",
                ));
            }
            let s = a
                .as_slice()
                .map_err(|_| PyValueError::new_err("X must be C-contiguous"))?;
            Ok((s, a.shape()[0], a.shape()[1]))
        }
        fn csr<R: Send, T: Scalar + numpy::Element, I: SparseIndex + numpy::Element>(
            py: Python<'_>,
            data: &PyReadonlyArray1<'_, T>,
            indices: &PyReadonlyArray1<'_, I>,
            indptr: &PyReadonlyArray1<'_, I>,
            shape: (usize, usize),
            f: impl FnOnce(&dyn RowMatrix) -> crate::Result<R> + Send,
        ) -> PyResult<R> {
            let (d, i, p) = (
                slice(data, "X.data")?,
                slice(indices, "X.indices")?,
                slice(indptr, "X.indptr")?,
            );
            detach(py, || f(&CsrView::new(p, i, d, shape.0, shape.1)?)).map_err(to_py)
        }
        fn binned<R: Send, C: crate::data::binned::Code + numpy::Element>(
            py: Python<'_>,
            codes: &PyReadonlyArray2<'_, C>,
            th: &crate::binning::Thresholds,
            missing: Missing,
            f: impl FnOnce(&dyn RowMatrix) -> crate::Result<R> + Send,
        ) -> PyResult<R> {
            if !codes.is_c_contiguous() {
                return Err(PyValueError::new_err(
                    "bin codes must be a C-contiguous (row-major) array",
                ));
            }
            let s = codes
                .as_slice()
                .map_err(|_| PyValueError::new_err("bin codes must be C-contiguous"))?;
            let (n, d) = (codes.shape()[0], codes.shape()[1]);
            detach(py, || f(&BinnedView::new(s, n, d, th, missing)?)).map_err(to_py)
        }
        match self {
            Matrix::Binned {
                codes,
                thresholds,
                missing,
            } => match codes {
                Codes::U8(a) => binned(py, a, thresholds, *missing, f),
                Codes::U16(a) => binned(py, a, thresholds, *missing, f),
            },
            Matrix::DenseF64(a) => {
                let (s, n, d) = dense(a)?;
                detach(py, || f(&DenseView::new(s, n, d)?)).map_err(to_py)
            }
            Matrix::DenseF32(a) => {
                let (s, n, d) = dense(a)?;
                detach(py, || f(&DenseView::new(s, n, d)?)).map_err(to_py)
            }
            Matrix::Csr {
                data,
                indices,
                indptr,
                shape,
            } => match (data, indices, indptr) {
                (Floats::F64(d), Ints::I32(i), Ints::I32(p)) => csr(py, d, i, p, *shape, f),
                (Floats::F64(d), Ints::I64(i), Ints::I64(p)) => csr(py, d, i, p, *shape, f),
                (Floats::F32(d), Ints::I32(i), Ints::I32(p)) => csr(py, d, i, p, *shape, f),
                (Floats::F32(d), Ints::I64(i), Ints::I64(p)) => csr(py, d, i, p, *shape, f),
                _ => Err(PyValueError::new_err(
                    "sparse X.indices and X.indptr must have the same integer type",
                )),
            },
        }
    }
}

pub(super) fn groups(codes: &PyReadonlyArray1<'_, i64>, n_queries: usize) -> PyResult<QueryGroups> {
    QueryGroups::from_codes(slice(codes, "qid codes")?, n_queries).map_err(to_py)
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

    /// Runs `f` on (values, n_rows, n_cols) with the GIL released.
    pub(super) fn run<R: Send>(
        &self,
        py: Python<'_>,
        f64_fn: impl FnOnce(&[f64], usize, usize) -> crate::Result<R> + Send,
        f32_fn: impl FnOnce(&[f32], usize, usize) -> crate::Result<R> + Send,
    ) -> PyResult<R> {
        let contiguous = || PyValueError::new_err("X must be C-contiguous");
        match self {
            DenseFloats::F64(a) => {
                let (n, d) = (a.shape()[0], a.shape()[1]);
                // as_slice also accepts Fortran order, whose memory would be read transposed.
                if !a.is_c_contiguous() {
                    return Err(contiguous());
                }
                let s = a.as_slice().map_err(|_| contiguous())?;
                detach(py, || f64_fn(s, n, d)).map_err(to_py)
            }
            DenseFloats::F32(a) => {
                let (n, d) = (a.shape()[0], a.shape()[1]);
                if !a.is_c_contiguous() {
                    return Err(contiguous());
                }
                let s = a.as_slice().map_err(|_| contiguous())?;
                detach(py, || f32_fn(s, n, d)).map_err(to_py)
            }
        }
    }
}
