//! Parallel kernels whose results do not depend on the number of threads.
//!
//! Work is cut into chunks whose boundaries depend only on the problem's shape, each chunk is
//! computed serially, and partial results are combined in chunk order. Rayon decides only
//! which thread computes which chunk, never how sums are associated.

use rayon::prelude::*;

use crate::data::{RowMatrix, Scalar};

/// Rows per chunk for row-parallel loops that write disjoint outputs.
const ROW_CHUNK: usize = 2048;

// Kept here for the call sites: the pools now live in rust/pool.rs, cached per thread count.
pub use crate::pool::{with_threads, MAX_THREADS};

/// Position of the first value that is NaN or infinite.
pub fn first_non_finite<T: Scalar>(data: &[T]) -> Option<usize> {
    data.par_chunks(1 << 16)
        .enumerate()
        .find_map_first(|(c, chunk)| {
            chunk
                .iter()
                .position(|v| !v.to_f64().is_finite())
                .map(|p| c * (1 << 16) + p)
        })
}

/// out[r] = x_r . w for every row r. Stops early (leaving `out` partly filled) when the user
/// interrupts; the caller checks `cancel::check` afterwards.
pub fn matvec<M: RowMatrix + ?Sized>(x: &M, w: &[f64], out: &mut [f64]) {
    let prepared = x.prepare(w);
    out.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            if crate::cancel::requested() {
                return;
            }
            let base = c * ROW_CHUNK;
            for (i, o) in chunk.iter_mut().enumerate() {
                *o = x.row_score(base + i, w, &prepared);
            }
        });
}
