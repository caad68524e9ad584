//! Cooperative cancellation. The Python bindings run every call on a worker thread while the
//! calling thread watches for Ctrl-C (a signal is only delivered to Python's main thread, and
//! only while it runs); when the user interrupts, they set this flag, and the long loops of the
//! core (the cutting-plane iterations, prediction, binning, the reader) check it between
//! chunks of work and stop with `Error::Interrupted`. The flag is process-wide, as Ctrl-C is
//! (so Rust unit tests never set it: they run side by side; the Python tests send real signals).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks the running work to stop.
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Forgets an earlier request (before new work starts).
pub fn clear() {
    REQUESTED.store(false, Ordering::Relaxed);
}

pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// `Err(Error::Interrupted)` once a stop was requested.
pub fn check() -> Result<()> {
    if requested() {
        return Err(Error::Interrupted("interrupted by the user".to_string()));
    }
    Ok(())
}
