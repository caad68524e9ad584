//! What the pool cache of `with_threads` saves on tiny calls: many calls of a small parallel
//! sum, each on a pool built for it (as every core call did before the cache) and through
//! `with_threads` (a cached pool checked out and given back).
//!
//!     pool_cost [N_THREADS] [CALLS]
//!
//! (defaults 2 and 500) prints the time per call of each and their ratio.
use rayon::prelude::*;
use std::time::Instant;
use svmmap::runtime::pool::with_threads;

fn tiny_work() -> f64 {
    (0..4096u32).into_par_iter().map(f64::from).sum()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let threads: usize = args.next().map_or(2, |a| a.parse().expect("N_THREADS"));
    let calls: usize = args.next().map_or(500, |a| a.parse().expect("CALLS"));

    let start = Instant::now();
    let mut fresh_sum = 0.0;
    for _ in 0..calls {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a pool");
        fresh_sum += pool.install(tiny_work);
    }
    let fresh = start.elapsed().as_secs_f64() / calls as f64;

    let start = Instant::now();
    let mut cached_sum = 0.0;
    for _ in 0..calls {
        cached_sum += with_threads(threads, tiny_work).expect("a pool");
    }
    let cached = start.elapsed().as_secs_f64() / calls as f64;

    assert_eq!(fresh_sum, cached_sum);
    println!(
        "{threads} threads, {calls} calls: fresh pool {:.1} us/call, cached pool {:.1} us/call, ratio {:.1}",
        fresh * 1e6,
        cached * 1e6,
        fresh / cached
    );
}
