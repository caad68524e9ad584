//! Rayon thread pools, cached per thread count and lent to one call at a time.
//!
//! Every core call runs on a pool of the thread count the caller asked for (`with_threads`).
//! Building a pool spawns its threads, which costs far more than a small call (a prediction
//! of a few rows, one Dask iteration on one partition), so pools are kept after use. A call
//! checks an idle pool of its count out, or builds one if none is idle, and gives it back
//! afterwards; two calls at the same time therefore never share a pool. Each pool carries its
//! own cancellation token (rust/runtime/cancel.rs), which its threads hold from their start; the token
//! is reset at checkout and follows the calling thread's token for the call's duration, so
//! Ctrl-C reaches exactly the threads doing the interrupted call's work.
//!
//! The cache is bounded (`IDLE_PER_COUNT` pools per count, `idle_thread_limit()` threads in
//! all, the oldest given back dropped first). A process forked from one with idle pools has
//! none of their threads, so a child forgets (leaks) the pools it inherited and builds its own.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::{Error, Result};
use crate::runtime::cancel::Token;

/// The largest thread count accepted. Results do not depend on the count, so more threads
/// than this can only cost memory and start-up time (a million would take minutes to spawn).
pub const MAX_THREADS: usize = 1024;

/// What n_jobs may be, in the words of every message about it (the parameter table's too).
pub const N_JOBS_EXPECTED: &str =
    "None, an integer from 1 to 1024, or a negative integer (-1: every core, -2: all but one)";

/// The cores this process may run on: the standard library's count, which sees CPU affinity
/// and cgroup quotas. RAYON_NUM_THREADS is not read: n_jobs is the one setting.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// THE thread-count rule (scikit-learn's n_jobs), for every call and every caller: None and -1
/// are one thread per core (the same threads, whatever RAYON_NUM_THREADS says), n > 0 is n (at
/// most `MAX_THREADS`), n < -1 counts back from the cores (-2: all but one, at least one); 0 and
/// counts above the cap are refused, naming n_jobs.
pub fn threads_for_jobs(n_jobs: Option<i64>) -> Result<usize> {
    let refused = |n: i64| Error::param("n_jobs", N_JOBS_EXPECTED, n);
    match n_jobs {
        None => Ok(cores()),
        Some(0) => Err(refused(0)),
        Some(n) if n > 0 => match usize::try_from(n) {
            Ok(count) if count <= MAX_THREADS => Ok(count),
            _ => Err(refused(n)),
        },
        Some(n) => {
            let back = usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX);
            Ok((cores() + 1).saturating_sub(back).max(1))
        }
    }
}

/// Memory a call must still find available once a new pool's threads have started.
const ROOM_AFTER_START: u64 = 4 << 20;

/// Idle pools kept per thread count: enough for a few threads of a process (Dask workers,
/// a web server) calling at the same time with the same setting.
const IDLE_PER_COUNT: usize = 4;

/// Threads of a pool being built: (spawned, started running).
#[derive(Default)]
struct Starts {
    count: Mutex<(usize, usize)>,
    changed: std::sync::Condvar,
}

/// One pool with the token its threads see.
struct Pool {
    /// The thread count asked for (0: one per core), the key of the cache.
    asked: usize,
    threads: rayon::ThreadPool,
    token: Token,
}

struct Idle {
    /// The process the pools were built in (0 before the first pool).
    pid: u32,
    /// Oldest given back first.
    pools: Vec<Pool>,
}

static IDLE: Mutex<Idle> = Mutex::new(Idle {
    pid: 0,
    pools: Vec::new(),
});

/// Pools built so far, by thread count asked for (for tests and measurements).
static BUILT: Mutex<BTreeMap<usize, usize>> = Mutex::new(BTreeMap::new());

thread_local! {
    /// The thread count asked for of the pool this thread works for, on a pool's threads.
    static POOL_ASKED: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` on a pool of `n_threads` threads (0 means one per core, as n_jobs=None: see
/// `threads_for_jobs`, whose cap this count is held to).
///
/// Every parallel step of the core must run inside such a pool: outside one, rayon starts its
/// global pool on first use, and when that fails (a thread cannot start under a memory limit)
/// rayon never tries again, so every later parallel step of the process panics with "The
/// global thread pool has not been initialized". `tests/robustness/test_aborts.py` checks that
/// no public call starts the global pool.
pub fn with_threads<R: Send>(n_threads: usize, f: impl FnOnce() -> R + Send) -> Result<R> {
    // Generic only in this shell: the pool's lease and rayon's `install` are compiled once
    // instead of once per caller (each copy of `install` brings rayon's job machinery along).
    let mut f = Some(f);
    let mut out = None;
    with_threads_erased(n_threads, &mut || {
        out = Some(f.take().expect("a pool's work runs once")());
    })?;
    Ok(out.expect("with_threads_erased returns Ok only after the work ran"))
}

fn with_threads_erased(n_threads: usize, f: &mut (dyn FnMut() + Send)) -> Result<()> {
    // Resolved here too, so that a count given to the core directly (0, or a number of
    // threads) keys the same pools as the n_jobs it stands for.
    let n_threads = if n_threads == 0 {
        cores()
    } else {
        threads_for_jobs(Some(i64::try_from(n_threads).unwrap_or(i64::MAX)))?
    };
    // Already on a thread of a pool of this count, which is lent to the current call only: a
    // nested request (a binding that checks its input on the call's pool, then runs a kernel
    // that asks for the same count) runs on that pool instead of leasing a second one.
    if POOL_ASKED.with(|asked| asked.get()) == Some(n_threads) {
        f();
        return Ok(());
    }
    let lease = Lease(Some(checkout(n_threads)?));
    let pool = lease.pool();
    // Unlinked (dropped) before the lease gives the pool back.
    let _following = Token::current().map(|caller| caller.lead(&pool.token));
    pool.threads.install(f);
    Ok(())
}

/// How many pools of `n_threads` threads were built in this process so far.
pub fn pools_built(n_threads: usize) -> usize {
    lock(&BUILT).get(&n_threads).copied().unwrap_or(0)
}

/// Gives its pool back to the cache when dropped (also when the work panicked: rayon re-raises
/// a worker's panic on the calling thread, and the pool stays usable).
struct Lease(Option<Pool>);

impl Lease {
    fn pool(&self) -> &Pool {
        self.0
            .as_ref()
            .expect("a lease holds its pool until dropped")
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(pool) = self.0.take() {
            give_back(pool);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these locks except allocation failure; the data stays
    // consistent either way (a pool is in the list or not).
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The idle pools of this process, after forgetting any inherited through `fork`.
fn idle() -> MutexGuard<'static, Idle> {
    let mut idle = lock(&IDLE);
    let pid = std::process::id();
    if idle.pid != pid {
        // The threads of inherited pools do not exist in this process: dropping such a pool
        // would wait on them, so it is leaked instead.
        std::mem::forget(std::mem::take(&mut idle.pools));
        idle.pid = pid;
    }
    idle
}

fn checkout(n_threads: usize) -> Result<Pool> {
    let reused = {
        let mut idle = idle();
        // The most recently given back: its threads are the likeliest to be warm.
        let at = idle.pools.iter().rposition(|p| p.asked == n_threads);
        at.map(|i| idle.pools.remove(i))
    };
    if let Some(pool) = reused {
        pool.token.reset();
        return Ok(pool);
    }
    let token = Token::new();
    let seen = token.clone();
    let starts = std::sync::Arc::new(Starts::default());
    let (spawning, starting) = (starts.clone(), starts.clone());
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(n_threads)
        .spawn_handler(move |thread| {
            // rayon's own handler, counting the threads that did start.
            let mut builder = std::thread::Builder::new();
            if let Some(name) = thread.name() {
                builder = builder.name(name.to_owned());
            }
            if let Some(size) = thread.stack_size() {
                builder = builder.stack_size(size);
            }
            crate::runtime::memory::check_thread_room(thread.stack_size())?;
            builder.spawn(|| thread.run())?;
            lock(&spawning.count).0 += 1;
            Ok(())
        })
        .start_handler(move |_| {
            seen.adopt();
            POOL_ASKED.with(|asked| asked.set(Some(n_threads)));
            lock(&starting.count).1 += 1;
            starting.changed.notify_all();
        })
        .build();
    // A thread's first use of this library's thread-local data allocates it (the library is
    // loaded with dlopen, so glibc allocates its TLS block lazily), and glibc ends the process
    // when that allocation fails ("cannot allocate memory for thread-local data: ABORT").
    // The start handler runs after rayon's own first use, so once every thread that started
    // has run it, the threads need nothing more. Waiting for that keeps the call's own
    // allocations (or, when a later thread could not start, the MemoryError's) from taking
    // the room a thread still needed, and the check below then measures what is really left.
    {
        let mut count = lock(&starts.count);
        while count.1 < count.0 {
            count = starts
                .changed
                .wait(count)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
    let threads = built.map_err(|e| {
        // Each thread needs memory for its stack: under a memory limit (`ulimit -v`) or a
        // cap on threads, starting them fails. It is the call's MemoryError, as for any
        // allocation the memory available cannot hold.
        Error::Memory(format!(
            "cannot start the {n_threads} thread(s) of this call ({e}): the process is out of \
                 memory or of threads; free memory, or ask for fewer threads (n_jobs)"
        ))
    })?;
    // The threads' stacks took their share of an address-space limit: a pool that leaves
    // the call no room to work in would only move the failure into the call's first small
    // allocation, which aborts the process. It is given up, the call's MemoryError.
    crate::runtime::memory::check_call(ROOM_AFTER_START, || {
        (
            format!(
                "the call, once its {} thread(s) started,",
                threads.current_num_threads()
            ),
            "free memory, or ask for fewer threads (n_jobs)".to_string(),
        )
    })?;
    *lock(&BUILT).entry(n_threads).or_insert(0) += 1;
    Ok(Pool {
        asked: n_threads,
        threads,
        token,
    })
}

/// The most idle threads kept in all: four pools with one thread per core, and at least 64
/// (an idle thread sleeps and holds little more than its stack's address space).
fn idle_thread_limit() -> usize {
    (4 * std::thread::available_parallelism().map_or(1, |n| n.get())).max(64)
}

fn give_back(pool: Pool) {
    let limit = idle_thread_limit();
    let mut evicted = Vec::new();
    {
        let mut idle = idle();
        let asked = pool.asked;
        idle.pools.push(pool);
        while idle.pools.iter().filter(|p| p.asked == asked).count() > IDLE_PER_COUNT {
            let oldest = idle.pools.iter().position(|p| p.asked == asked);
            evicted.extend(oldest.map(|i| idle.pools.remove(i)));
        }
        while idle
            .pools
            .iter()
            .map(|p| p.threads.current_num_threads())
            .sum::<usize>()
            > limit
        {
            evicted.push(idle.pools.remove(0));
        }
    }
    // Dropped outside the lock: a pool's drop tells its threads to end.
    drop(evicted);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;
    use std::collections::BTreeSet;

    /// The threads of the pool running the current call.
    fn pool_threads() -> BTreeSet<String> {
        rayon::broadcast(|_| format!("{:?}", std::thread::current().id()))
            .into_iter()
            .collect()
    }

    #[test]
    fn sequential_calls_of_one_count_reuse_one_pool() {
        // Seven threads: no other test asks for that count, so the count of pools built is
        // this test's own.
        let before = pools_built(7);
        let first = with_threads(7, pool_threads).unwrap();
        let second = with_threads(7, pool_threads).unwrap();
        assert_eq!(first.len(), 7);
        assert_eq!(first, second, "the second call ran on other threads");
        assert_eq!(pools_built(7), before + 1);
    }

    #[test]
    fn concurrent_calls_get_pools_of_their_own() {
        let barrier = std::sync::Barrier::new(2);
        let ids: Vec<BTreeSet<String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    scope.spawn(|| {
                        with_threads(5, || {
                            // Both calls hold their pools at the same time.
                            barrier.wait();
                            pool_threads()
                        })
                        .unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(ids[0].is_disjoint(&ids[1]));
    }

    #[test]
    fn a_pools_threads_see_the_token_of_the_call_that_holds_it() {
        let call = Token::new();
        call.request();
        let seen = call.enter(|| {
            with_threads(3, || {
                (0..256)
                    .into_par_iter()
                    .map(|_| crate::runtime::cancel::requested())
                    .collect::<Vec<_>>()
            })
        });
        assert!(seen.unwrap().iter().all(|&r| r));
        // The same pools serve a call without a request afterwards (the token was reset).
        let later = with_threads(3, || {
            (0..256)
                .into_par_iter()
                .any(|_| crate::runtime::cancel::requested())
        });
        assert!(!later.unwrap());
    }

    #[test]
    fn a_kernel_gives_the_same_result_on_a_fresh_and_a_reused_pool() {
        use crate::data::DenseView;
        let (rows, cols) = (10_000, 7);
        let data: Vec<f64> = (0..rows * cols)
            .map(|i| ((i * 7919) % 1000) as f64 / 7.0 - 60.0)
            .collect();
        let x = DenseView::new(&data, rows, cols).unwrap();
        let w: Vec<f64> = (0..cols).map(|j| 0.3 * j as f64 - 1.0).collect();
        let run = || {
            let mut out = vec![0.0; rows];
            with_threads(6, || crate::data::kernels::matvec(&x, &w, &mut out)).unwrap();
            out
        };
        // Six threads: no other test asks for that count, so the first call builds the pool.
        let before = pools_built(6);
        let fresh = run();
        let reused = run();
        assert_eq!(pools_built(6), before + 1);
        assert_eq!(
            fresh.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            reused.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_cache_stays_bounded() {
        // More calls at once than pools kept: afterwards at most IDLE_PER_COUNT are idle.
        let barrier = std::sync::Barrier::new(IDLE_PER_COUNT + 2);
        std::thread::scope(|scope| {
            for _ in 0..IDLE_PER_COUNT + 2 {
                scope.spawn(|| with_threads(1, || barrier.wait()).unwrap());
            }
        });
        let idle = idle();
        assert!(idle.pools.iter().filter(|p| p.asked == 1).count() <= IDLE_PER_COUNT);
        let threads: usize = idle
            .pools
            .iter()
            .map(|p| p.threads.current_num_threads())
            .sum();
        assert!(threads <= idle_thread_limit());
    }
}
