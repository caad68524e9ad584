//! Turning panics into errors at the boundary of the library.
//!
//! A panic is a bug in svmmap, never a reaction to bad input (bad input gets a typed `Error`).
//! Still, a bug must not take the host program down or cross into Python as pyo3's
//! `PanicException`, which derives from `BaseException` and escapes `except Exception`.
//! `catch_panics` runs a computation, catches a panic on the calling thread or in a rayon
//! worker (rayon re-raises a worker's panic on the thread that waits for it), and returns
//! `Error::Internal` with the panic message and the place in the source where it happened.
//!
//! `install_quiet_hook` replaces the default panic hook, which prints a message (and, with
//! `RUST_BACKTRACE`, a backtrace) to stderr, with one that only records the message and the
//! location for `catch_panics` to report. Set `SVMMAP_PANIC_STDERR=1` to also get the default
//! output, e.g. with a backtrace when debugging.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Mutex, Once};

use crate::error::{Error, Result};

/// The last panic seen by the hook: "message (at file:line:column)".
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);
static HOOK: Once = Once::new();

/// Installs the recording hook once per process (later calls do nothing).
pub fn install_quiet_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        let echo = std::env::var_os("SVMMAP_PANIC_STDERR").is_some_and(|v| v != "0");
        panic::set_hook(Box::new(move |info| {
            let message = payload_message(info.payload());
            let described = match info.location() {
                Some(at) => format!("{message} (at {}:{}:{})", at.file(), at.line(), at.column()),
                None => message,
            };
            if let Ok(mut last) = LAST_PANIC.lock() {
                *last = Some(described);
            }
            if echo {
                previous(info);
            }
        }));
    });
}

fn payload_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Runs `f`; a panic inside it (on this thread or in a rayon worker it waits for) becomes
/// `Error::Internal`.
pub fn catch_panics<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    // The computation is abandoned after a panic and its state is never looked at again, so
    // observing broken invariants through the closure's captures is not a concern.
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let message = payload_message(payload.as_ref());
            // The hook saw the same panic (possibly on a worker thread) and knows where it
            // happened; the payload only carries the message.
            let recorded = LAST_PANIC.lock().ok().and_then(|mut last| last.take());
            let described = match recorded {
                Some(r) if r.starts_with(&message) => r,
                _ => message,
            };
            Err(Error::Internal(described))
        }
    }
}

/// Panics on purpose, for the tests of the boundary: on the calling thread ("caller") or
/// inside a rayon worker of a two-thread pool ("worker").
pub fn debug_panic(place: &str) -> Result<()> {
    match place {
        "caller" => panic!("svmmap debug panic on the calling thread"),
        "worker" => {
            crate::runtime::pool::with_threads(2, || {
                use rayon::prelude::*;
                (0..64usize).into_par_iter().for_each(|i| {
                    if i == 37 {
                        panic!("svmmap debug panic in a worker thread");
                    }
                });
            })?;
            Ok(())
        }
        other => Err(Error::param(
            "place",
            "\"caller\" or \"worker\"",
            format!("{other:?}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_internal_errors() {
        // The quiet hook is not installed here: it is process-wide and would silence the
        // messages of failing tests. Without it the error carries the message only.
        for place in ["caller", "worker"] {
            match catch_panics(|| debug_panic(place)) {
                Err(Error::Internal(m)) => assert!(m.contains("svmmap debug panic"), "{m}"),
                other => panic!("expected an internal error, got {other:?}"),
            }
        }
        assert!(matches!(
            catch_panics(|| debug_panic("elsewhere")),
            Err(Error::InvalidParameter { .. })
        ));
        assert_eq!(catch_panics(|| Ok(3)).unwrap(), 3);
    }

    /// The text with every whitespace character removed, so that a method call split over
    /// lines (`py\n    .detach(`) or spaced out (`py . detach (`) reads as `py.detach(`.
    fn without_whitespace(text: &str) -> String {
        text.chars().filter(|c| !c.is_whitespace()).collect()
    }

    /// Every binding file (rust/python/*.rs), read at test time so that a new file is covered
    /// as soon as it exists, joined without whitespace.
    fn binding_sources() -> (Vec<String>, String) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rust/python");
        let mut names = Vec::new();
        let mut text = String::new();
        for entry in std::fs::read_dir(&dir).expect("rust/python/ exists") {
            let path = entry.expect("a readable directory entry").path();
            if path.extension().is_some_and(|e| e == "rs") {
                names.push(path.file_name().unwrap().to_string_lossy().into_owned());
                text.push_str(&std::fs::read_to_string(&path).expect("a readable source file"));
            }
        }
        names.sort();
        (names, without_whitespace(&text))
    }

    #[test]
    fn every_binding_releases_the_gil_through_the_guard() {
        // The bindings must call the core through `detach`, which catches panics; a bare
        // `py.detach` would let a panic reach Python as pyo3's PanicException. rustfmt splits
        // long method chains over lines, so the search runs on the source without whitespace,
        // and it looks for any method-call or path form of `detach(`: the one allowed
        // occurrence is the call inside the helper `detach` itself (rust/python/mod.rs).
        let (names, source) = binding_sources();
        assert!(
            names.iter().any(|n| n == "mod.rs") && names.len() >= 5,
            "expected the binding files in rust/python/, found {names:?}"
        );
        // The helper runs `f` under catch_panics on its worker thread and waits without the
        // GIL on the calling thread.
        for piece in [
            "guard::catch_panics(f)",
            "py.detach(||std::thread::park_timeout(SIGNAL_POLL))",
        ] {
            assert!(
                source.contains(piece),
                "the helper `detach` in rust/python/mod.rs no longer reads `{piece}`; update this test"
            );
        }
        assert_eq!(
            source.matches(".detach(").count(),
            1,
            "rust/python/ calls `.detach(` outside the panic guard; use detach(py, ...)"
        );
        assert_eq!(
            source.matches("::detach(").count(),
            0,
            "rust/python/ calls `Python::detach` outside the panic guard; use detach(py, ...)"
        );
        assert_eq!(source.matches("allow_threads(").count(), 0);
    }

    #[test]
    fn without_whitespace_joins_split_calls() {
        for text in [
            "py.detach(",
            "py\n        .detach(",
            "py . detach (",
            "py\r\n\t.detach\n(",
        ] {
            assert_eq!(
                without_whitespace(text).matches(".detach(").count(),
                1,
                "{text:?}"
            );
        }
    }
}
