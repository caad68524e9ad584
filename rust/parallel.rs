//! Parallel kernels whose results do not depend on the number of threads.
//!
//! Work is cut into chunks whose boundaries depend only on the problem's shape, each chunk is
//! computed serially, and partial results are combined in chunk order. Rayon decides only
//! which thread computes which chunk, never how sums are associated.

use rayon::prelude::*;

use crate::data::{RowMatrix, Scalar};
use crate::error::{Error, Result};

/// Rows per chunk for row-parallel loops that write disjoint outputs.
const ROW_CHUNK: usize = 2048;

/// The largest thread count accepted. Results do not depend on the count, so more threads
/// than this can only cost memory and start-up time (a million would take minutes to spawn).
pub const MAX_THREADS: usize = 1024;

/// Runs `f` on a pool of `n_threads` threads (0 means one per core).
pub fn with_threads<R: Send>(n_threads: usize, f: impl FnOnce() -> R + Send) -> Result<R> {
    if n_threads > MAX_THREADS {
        return Err(Error::param(
            "number of threads (n_jobs)",
            &format!("at most {MAX_THREADS}"),
            n_threads,
        ));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n_threads)
        .build()
        .map_err(|e| Error::input(format!("could not start {n_threads} threads: {e}")))?;
    Ok(pool.install(f))
}

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
