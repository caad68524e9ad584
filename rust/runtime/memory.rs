//! Checks of large allocations against the memory the machine has available, so that an input
//! or a parameter that asks for too much memory gets an error naming what needed it, instead of
//! an abort of the process ("memory allocation of N bytes failed") or a kill by the kernel.

use crate::error::{Error, Result};

/// Below this, allocations are not checked: reading the available memory costs more than
/// they can do harm.
const UNCHECKED_BYTES: u64 = 64 << 20;

/// Memory the process can still use, in bytes: Linux's MemAvailable, lowered to the cgroup
/// (v2) limit and to the address-space limit when they are set. None where /proc cannot be read.
pub fn available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .ok()?;
    let mut bytes = kib.saturating_mul(1024);
    let read = |name: &str| -> Option<u64> {
        std::fs::read_to_string(format!("/sys/fs/cgroup/{name}"))
            .ok()?
            .trim()
            .parse::<u64>()
            .ok()
    };
    if let (Some(max), Some(current)) = (read("memory.max"), read("memory.current")) {
        bytes = bytes.min(max.saturating_sub(current));
    }
    if let Some(headroom) = address_space_headroom() {
        bytes = bytes.min(headroom);
    }
    Some(bytes)
}

/// What is left of the process's address-space limit (`ulimit -v`, RLIMIT_AS), if one is set:
/// beyond it every allocation fails, however much memory the machine has.
fn address_space_headroom() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let soft = limits
        .lines()
        .find_map(|line| line.strip_prefix("Max address space"))?
        .split_whitespace()
        .next()?
        .parse::<u64>()
        .ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used_kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmSize:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(soft.saturating_sub(used_kib.saturating_mul(1024)))
}

/// A number of bytes for messages: "320 MB", "1.5 GB".
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.0} MB", b / 1e6)
    } else {
        format!("{:.0} kB", b / 1e3)
    }
}

/// `Err(Error::Memory)` when `bytes` exceed the available memory. The message reads
/// "{what} needs N, but only M of memory is available; {advice}".
pub fn check(bytes: u64, what: impl FnOnce() -> (String, String)) -> Result<()> {
    if bytes < UNCHECKED_BYTES {
        return Ok(());
    }
    match available() {
        Some(free) if bytes > free => {
            let (what, advice) = what();
            Err(Error::Memory(format!(
                "{what} needs {}, but only {} of memory is available; {advice}",
                human(bytes),
                human(free)
            )))
        }
        _ => Ok(()),
    }
}

/// Below this, a call's estimated footprint is not checked by `check_call`: reading /proc
/// costs tens of microseconds, and calls that small (one query's hinge in a training loop)
/// are made thousands of times.
const UNCHECKED_CALL_BYTES: u64 = 1 << 20;

/// The guard of a core call whose allocations grow with its input (a metric over every row,
/// the structured hinge, fitting thresholds, reading a file): `bytes`, the call's estimated
/// peak from its sizes, must fit the available memory. Rust aborts the process when an
/// allocation fails ("memory allocation of N bytes failed"), and under an address-space limit
/// even allocations of a few megabytes fail, below `check`'s floor; a call that asks for more
/// than there is ends here in `Error::Memory` before it allocates.
pub fn check_call(bytes: u64, what: impl FnOnce() -> (String, String)) -> Result<()> {
    if bytes < UNCHECKED_CALL_BYTES {
        return Ok(());
    }
    match available() {
        Some(free) if bytes > free => {
            let (what, advice) = what();
            Err(Error::Memory(format!(
                "{what} needs about {}, but only {} of memory is available; {advice}",
                human(bytes),
                human(free)
            )))
        }
        _ => Ok(()),
    }
}

/// Address space a new thread needs beyond its stack: glibc allocates the thread's block of
/// this library's thread-local data (about 600 bytes) at the thread's first use of it, with at
/// least a page of its own when no malloc arena is free, and ends the process when that fails
/// ("cannot allocate memory for thread-local data: ABORT"); the thread's first small
/// allocations cannot fail either. A megabyte covers them with room to spare.
const THREAD_MARGIN: usize = 1 << 20;

/// The stack of a thread started by `std::thread` (or rayon) without a stack size: Rust's
/// default, or RUST_MIN_STACK when set (read as the standard library reads it).
fn default_stack_size() -> usize {
    std::env::var("RUST_MIN_STACK")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(2 << 20)
}

/// Whether a new thread with a stack of `stack` bytes (None: the default) fits under the
/// process's address-space limit (`ulimit -v`, RLIMIT_AS), with `THREAD_MARGIN` to spare.
///
/// Starting a thread maps its stack, which fails cleanly when the limit leaves no room; but a
/// stack that fits with almost nothing left lets the thread start and then end the whole
/// process at its first use of thread-local data, which glibc allocates lazily for a library
/// loaded by dlopen (every Python extension). Checked before every thread the core starts (a
/// call's worker, a pool's threads): without a limit it costs one getrlimit; with one, it
/// maps and unmaps an inaccessible region of that size, which is exactly what the limit
/// counts. An error is the call's MemoryError.
pub fn check_thread_room(stack: Option<usize>) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given and nothing else.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0
            || limit.rlim_cur == libc::RLIM_INFINITY
        {
            return Ok(());
        }
        let size = stack
            .unwrap_or_else(default_stack_size)
            .saturating_add(THREAD_MARGIN);
        // SAFETY: an anonymous private mapping with no access, unmapped at once; no memory is
        // touched and no other mapping is affected.
        unsafe {
            let region = libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            );
            if region == libc::MAP_FAILED {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::OutOfMemory,
                    format!(
                        "no room under the address-space limit for a thread's stack and its \
                         first allocations ({})",
                        human(size as u64)
                    ),
                ));
            }
            libc::munmap(region, size);
        }
    }
    #[cfg(not(unix))]
    let _ = stack;
    Ok(())
}

/// `n` zeros, allocated fallibly, for a call's outputs that grow with its rows. Under an
/// address-space limit such an allocation can fail although `check_call` found room for it
/// just before (the allocator may need more address space than the bytes asked for, as for a
/// thread's new arena), and Rust would abort the process; this returns `Error::Memory` naming
/// `what` instead. Seen in CI on predict's scores and the hinge's gradient (24 MB each, at a
/// few of the memory-limit test's headrooms, once in several runs).
pub fn zeros(n: usize, what: &str) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| {
        Error::Memory(format!(
            "{what} needs {}, which could not be allocated",
            human(bytes_of(n, size_of::<f64>()))
        ))
    })?;
    out.resize(n, 0.0);
    Ok(out)
}

/// Bytes of `count` values of `size` bytes, saturating (a parameter such as 2e9 thresholds
/// times many columns must not wrap around).
pub fn bytes_of(count: usize, size: usize) -> u64 {
    (count as u64).saturating_mul(size as u64)
}

/// Dense vectors of the features one cutting-plane iteration may allocate, per slack group: the
/// cut at the QP's solution and the one at OCAS's intermediate point, their partial sums, the
/// iterates w_b, w_c and w_m, with room to spare.
pub const VECTORS_PER_ITERATION: usize = 8;

/// The cutting-plane solver keeps every cut as a dense vector of the features, per slack group,
/// and an iteration allocates `VECTORS_PER_ITERATION` more: they must fit. A very wide X (often
/// a stray feature index in a sparse file) makes each of them large; training stops with an
/// error before the machine runs out of memory.
pub fn check_working_set(dim: usize, n_groups: usize) -> Result<()> {
    let n_vectors = VECTORS_PER_ITERATION;
    let bytes = bytes_of(dim, 8)
        .saturating_mul(n_groups as u64)
        .saturating_mul(n_vectors as u64);
    check(bytes, || {
        (
            format!(
                "training on {dim} features keeps every cutting plane as a dense vector of the \
                 features ({} each); the next iteration, with about {n_vectors} such vectors \
                 for each of {n_groups} loss(es),",
                human(bytes_of(dim, 8))
            ),
            "if X is that wide only because of a few large feature indices (e.g. a stray \
             index in a sparse file), remove the unused columns; otherwise raise eps or lower \
             max_iter to keep fewer cuts"
                .to_string(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An allocation that cannot be made is an `Error::Memory` naming it, not an abort; one
    /// that can is the zeros asked for.
    #[test]
    fn zeros_refuses_what_cannot_be_allocated() {
        match zeros(usize::MAX / 4, "the test's vector") {
            Err(Error::Memory(message)) => {
                assert!(message.starts_with("the test's vector needs "), "{message}")
            }
            other => panic!("expected Error::Memory, got {other:?}"),
        }
        assert_eq!(zeros(3, "three").unwrap(), vec![0.0; 3]);
    }

    #[test]
    fn an_impossible_request_is_refused_with_its_size() {
        if available().is_none() {
            return;
        }
        let err = check(u64::MAX / 2, || {
            ("this test".to_string(), "advice".to_string())
        })
        .unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("this test needs "), "{text}");
        assert!(text.contains("GB") && text.ends_with("; advice"), "{text}");
        assert!(check(1 << 20, || unreachable!()).is_ok());
    }

    #[test]
    fn sizes_saturate_and_print() {
        assert_eq!(bytes_of(usize::MAX, 8), u64::MAX);
        assert_eq!(human(320_000_000), "320 MB");
        assert_eq!(human(1_500_000_000), "1.5 GB");
    }
}
