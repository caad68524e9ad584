//! Binning bindings: threshold fitting and the indicator transform.

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;

use super::arrays::*;
use super::detach;
use crate::binning;
use crate::runtime::pool::with_threads;

/// Concatenated thresholds and the offsets of every column's block.
pub(super) type ThresholdArrays<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<i64>>);

/// Fits binning thresholds per column. Returns (values, offsets): column j's sorted thresholds
/// are values[offsets[j]:offsets[j + 1]].
#[pyfunction]
pub(super) fn bin_fit<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    n_thresholds: usize,
    strategy: &str,
    missing: &str,
    n_threads: usize,
) -> PyResult<ThresholdArrays<'py>> {
    let strategy = binning::Strategy::parse(strategy)?;
    let missing = binning::Missing::parse(missing)?;
    let x = DenseFloats::extract(x)?;
    let th = with_dense_floats!(py, &x, |s, n, d| {
        with_threads(n_threads, || {
            binning::fit(s, n, d, n_thresholds, strategy, missing)
        })?
    })?;
    let offsets: Vec<i64> = th.offsets.iter().map(|&o| o as i64).collect();
    Ok((
        PyArray1::from_vec(py, th.values),
        PyArray1::from_vec(py, offsets),
    ))
}

/// The indicator features of a dense matrix: returns (indptr, indices, n_cols) of a CSR matrix
/// whose stored values are all 1, with int32 index arrays when they fit and int64 otherwise.
#[pyfunction]
pub(super) fn bin_transform<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    values: PyReadonlyArray1<'py, f64>,
    offsets: PyReadonlyArray1<'py, i64>,
    missing: &str,
    n_threads: usize,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, usize)> {
    let missing = binning::Missing::parse(missing)?;
    let th = thresholds_from(&values, &offsets)?;
    let x = DenseFloats::extract(x)?;
    let n_rows = x.n_rows();
    // Every row sets at most one column per output column, so this bounds the stored values.
    let (n_out, _) = th.columns(missing);
    let small = n_rows
        .checked_mul(n_out)
        .is_some_and(|nnz| nnz <= i32::MAX as usize);
    if small {
        let out = with_dense_floats!(py, &x, |s, n, d| {
            with_threads(n_threads, || {
                binning::transform::<_, i32>(s, n, d, &th, missing)
            })?
        })?;
        Ok((
            PyArray1::from_vec(py, out.indptr).into_any(),
            PyArray1::from_vec(py, out.indices).into_any(),
            out.n_cols,
        ))
    } else {
        let out = with_dense_floats!(py, &x, |s, n, d| {
            with_threads(n_threads, || {
                binning::transform::<_, i64>(s, n, d, &th, missing)
            })?
        })?;
        Ok((
            PyArray1::from_vec(py, out.indptr).into_any(),
            PyArray1::from_vec(py, out.indices).into_any(),
            out.n_cols,
        ))
    }
}

/// The bin codes of a dense matrix (see `crate::data::binned`): a (n_rows, n_cols) uint8 array
/// when every code fits, uint16 otherwise.
#[pyfunction]
pub(super) fn bin_codes<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    values: PyReadonlyArray1<'py, f64>,
    offsets: PyReadonlyArray1<'py, i64>,
    missing: &str,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let missing = binning::Missing::parse(missing)?;
    let th = thresholds_from(&values, &offsets)?;
    let x = DenseFloats::extract(x)?;
    let shape = x.shape();
    fn run<'py, C: crate::data::binned::Code + numpy::Element>(
        py: Python<'py>,
        x: &DenseFloats<'py>,
        th: &binning::Thresholds,
        missing: binning::Missing,
        n_threads: usize,
        shape: (usize, usize),
    ) -> PyResult<Bound<'py, PyAny>> {
        let codes = with_dense_floats!(py, &x, |s, n, d| with_threads(n_threads, || {
            binning::codes::<_, C>(s, n, d, th, missing)
        })?)?;
        Ok(PyArray1::from_vec(py, codes)
            .reshape([shape.0, shape.1])?
            .into_any())
    }
    match binning::code_width(&th, missing)? {
        1 => run::<u8>(py, &x, &th, missing, n_threads, shape),
        _ => run::<u16>(py, &x, &th, missing, n_threads, shape),
    }
}
