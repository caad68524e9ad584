//! The thread pool a call runs on, for kernels whose results do not depend on the number of threads.
//!
//! Work is cut into chunks whose boundaries depend only on the problem's shape, each chunk is
//! computed serially, and partial results are combined in chunk order. Rayon decides only
//! which thread computes which chunk, never how sums are associated.

use crate::error::{Error, Result};

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
