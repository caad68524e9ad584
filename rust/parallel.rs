//! Parallel kernels whose results do not depend on the number of threads.
//!
//! Work is cut into chunks whose boundaries depend only on the problem's shape, each chunk is
//! computed serially, and partial results are combined in chunk order. Rayon decides only
//! which thread computes which chunk, never how sums are associated.

use rayon::prelude::*;
use std::ops::Range;

use crate::data::{RowMatrix, Scalar};
use crate::error::{Error, Result};

/// Rows per chunk for row-parallel loops that write disjoint outputs.
const ROW_CHUNK: usize = 2048;
/// Upper bound on the number of partial vectors kept by `rmatvec`.
const MAX_PARTIALS: usize = 256;
/// Upper bound on the memory of those partial vectors, in f64 values (32 MiB).
const PARTIAL_BUDGET: usize = 1 << 22;

/// Splits 0..n into `k` nearly equal consecutive ranges (fewer when n < k).
pub fn split_even(n: usize, k: usize) -> Vec<Range<usize>> {
    let k = k.clamp(1, n.max(1));
    (0..k).map(|i| (i * n / k)..((i + 1) * n / k)).collect()
}

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

/// out[r] = x_r . w for every row r.
pub fn matvec<M: RowMatrix + ?Sized>(x: &M, w: &[f64], out: &mut [f64]) {
    out.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let base = c * ROW_CHUNK;
            for (i, o) in chunk.iter_mut().enumerate() {
                *o = x.row_dot(base + i, w);
            }
        });
}

/// Returns sum_r coef[r] * x_r, skipping zero coefficients.
pub fn rmatvec<M: RowMatrix + ?Sized>(x: &M, coef: &[f64]) -> Vec<f64> {
    let d = x.n_cols();
    let n = x.n_rows();
    let k = (PARTIAL_BUDGET / d.max(1))
        .min(MAX_PARTIALS)
        .min(n.div_ceil(ROW_CHUNK))
        .max(1);
    let partials: Vec<Vec<f64>> = split_even(n, k)
        .into_par_iter()
        .map(|range| {
            let mut acc = vec![0.0; d];
            for r in range {
                let c = coef[r];
                if c != 0.0 {
                    x.row_axpy(r, c, &mut acc);
                }
            }
            acc
        })
        .collect();
    let mut parts = partials.into_iter();
    let mut out = parts.next().unwrap_or_else(|| vec![0.0; d]);
    for p in parts {
        for (o, v) in out.iter_mut().zip(p) {
            *o += v;
        }
    }
    out
}

/// Splits `data` into consecutive mutable pieces at the given boundaries
/// (`bounds[0] == 0`, last == data.len()), so queries can be processed in parallel.
pub fn split_by_bounds<'a, T>(mut data: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(bounds.len().saturating_sub(1));
    for w in bounds.windows(2) {
        let (head, tail) = std::mem::take(&mut data).split_at_mut(w[1] - w[0]);
        out.push(head);
        data = tail;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DenseView;

    #[test]
    fn split_even_covers_range() {
        for n in [0usize, 1, 5, 100, 1001] {
            for k in [1usize, 3, 7, 256] {
                let r = split_even(n, k);
                assert_eq!(r.first().map(|r| r.start), Some(0));
                assert_eq!(r.last().map(|r| r.end), Some(n));
                for w in r.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                }
            }
        }
    }

    #[test]
    fn rmatvec_is_identical_for_any_thread_count() {
        // Values chosen so that a different association order changes the rounding.
        let n = 20_000;
        let d = 3;
        let data: Vec<f64> = (0..n * d)
            .map(|i| ((i * 7919) % 1013) as f64 * 1e-3 + 1e9 * ((i % 5) as f64 - 2.0))
            .collect();
        let coef: Vec<f64> = (0..n).map(|i| ((i * 31) % 17) as f64 * 0.1 - 0.8).collect();
        let x = DenseView::new(&data, n, d).unwrap();
        let one = with_threads(1, || rmatvec(&x, &coef)).unwrap();
        let two = with_threads(2, || rmatvec(&x, &coef)).unwrap();
        let three = with_threads(3, || rmatvec(&x, &coef)).unwrap();
        assert_eq!(one, two);
        assert_eq!(one, three);
        // And it is the right sum (up to rounding).
        for j in 0..d {
            let direct: f64 = (0..n).map(|r| coef[r] * data[r * d + j]).sum();
            assert!((direct - one[j]).abs() <= 1e-6 * direct.abs().max(1.0));
        }
    }

    #[test]
    fn split_by_bounds_gives_disjoint_pieces() {
        let mut v: Vec<usize> = (0..10).collect();
        let pieces = split_by_bounds(&mut v, &[0, 3, 3, 10]);
        assert_eq!(pieces.len(), 3);
        assert_eq!(pieces[0], &[0, 1, 2]);
        assert!(pieces[1].is_empty());
        assert_eq!(pieces[2].len(), 7);
    }
}
