//! The checks of the input matrix that fitting and transforming share, with the same messages:
//! its shape, and that every value is finite (NaN allowed only with a missing indicator).

use rayon::prelude::*;

use crate::binning::thresholds::Missing;
use crate::data::matrix::Scalar;
use crate::error::{Error, Result};

/// Position of the first value that is infinite, or NaN when NaN is not allowed, as
/// (row, column, value).
pub(super) fn first_bad<T: Scalar>(
    x: &[T],
    n_cols: usize,
    missing: Missing,
) -> Option<(usize, usize, f64)> {
    const CHUNK: usize = 1 << 16;
    let nan_is_bad = missing == Missing::Error;
    // Non-short-circuit operators, so that the scan below compiles without branches.
    let is_bad = |v: f64| (v.abs() == f64::INFINITY) | (v.is_nan() & nan_is_bad);
    x.par_chunks(CHUNK)
        .enumerate()
        .find_map_first(|(c, chunk)| {
            // A branch-free scan of the chunk (vectorized) before looking for the position.
            if !chunk.iter().fold(false, |any, v| any | is_bad(v.to_f64())) {
                return None;
            }
            chunk.iter().enumerate().find_map(|(i, v)| {
                let v = v.to_f64();
                is_bad(v).then(|| {
                    let pos = c * CHUNK + i;
                    (pos / n_cols, pos % n_cols, v)
                })
            })
        })
}

pub(super) fn bad_value_error(row: usize, col: usize, v: f64) -> Error {
    if v.is_nan() {
        Error::input(format!(
            "X[{row}, {col}] is NaN: missing values need missing=\"indicator\" \
             (one extra indicator per base feature), otherwise features must be finite numbers"
        ))
    } else {
        Error::input(format!(
            "X[{row}, {col}] is {v}: features must be finite numbers (NaN marks a missing value \
             with missing=\"indicator\")"
        ))
    }
}

pub(super) fn check_shape<T>(x: &[T], n_rows: usize, n_cols: usize) -> Result<()> {
    if n_rows.checked_mul(n_cols) != Some(x.len()) {
        return Err(Error::input(format!(
            "dense matrix of shape ({n_rows}, {n_cols}) needs {} values, got {}",
            n_rows as u128 * n_cols as u128,
            x.len()
        )));
    }
    Ok(())
}
