//! Cooperative cancellation, one token per call. The Python bindings run every call on a
//! worker thread while the calling thread watches for Ctrl-C (a signal is only delivered to
//! Python's main thread, and only while it runs); `detach` gives the call its own `Token`, and
//! when the user interrupts, it requests that token only. The long loops of the core (the
//! cutting-plane iterations, prediction, binning, the reader) ask `requested()`/`check()`
//! between chunks of work and stop with `Error::Interrupted`.
//!
//! A thread sees the token it is working for through a thread-local: the call's worker thread
//! enters the call's token, and each thread of a pool (rust/pool.rs) holds its pool's token for
//! its whole life. A pool's token follows the token of the call that checked the pool out, so
//! a request reaches every thread doing that call's work and no other. Two calls running at
//! the same time (from two Python threads) thus neither steal nor erase each other's
//! interrupt. A thread outside any call (Rust unit tests, benches) has no token and never sees
//! a request.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{Error, Result};

/// The cancellation state of one call, or of one pool of threads while it works for a call.
/// Clones share the state.
#[derive(Clone, Default)]
pub struct Token(Arc<State>);

#[derive(Default)]
struct State {
    requested: AtomicBool,
    /// The tokens that stop when this one does: those of the pools a call has checked out and
    /// of calls made from inside its work. Locked only to link, unlink and request, never by
    /// `requested()`.
    followers: Mutex<Vec<Token>>,
}

thread_local! {
    /// The token of the work the current thread does, if any.
    static CURRENT: RefCell<Option<Token>> = const { RefCell::new(None) };
}

impl Token {
    /// A token that has not been requested.
    pub fn new() -> Token {
        Token::default()
    }

    /// The token of the work the calling thread does (`None` outside any call).
    pub fn current() -> Option<Token> {
        CURRENT.try_with(|c| c.borrow().clone()).ok().flatten()
    }

    /// Asks the work of this token, and of every token following it, to stop.
    pub fn request(&self) {
        self.0.requested.store(true, Ordering::Relaxed);
        for follower in self.followers().iter() {
            follower.request();
        }
    }

    pub fn is_requested(&self) -> bool {
        self.0.requested.load(Ordering::Relaxed)
    }

    /// Forgets an earlier request: a pool's token is reset when a new call checks it out.
    pub(crate) fn reset(&self) {
        self.0.requested.store(false, Ordering::Relaxed);
    }

    /// Makes `follower` stop when this token does, until the returned guard is dropped. A
    /// request made before this call is passed on at once.
    pub fn lead(&self, follower: &Token) -> Following {
        let mut followers = self.followers();
        followers.push(follower.clone());
        // Read under the lock: `request` sets the flag before it takes the lock, so either it
        // sees the new follower or this sees its flag.
        if self.is_requested() {
            follower.request();
        }
        drop(followers);
        Following {
            leader: self.clone(),
            follower: follower.clone(),
        }
    }

    /// Runs `f` with this token as the calling thread's current one, then puts back the one
    /// before (also when `f` panics).
    pub fn enter<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<Token>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let before = self.0.take();
                let _ = CURRENT.try_with(|c| *c.borrow_mut() = before);
            }
        }
        let _restore = Restore(CURRENT.with(|c| c.replace(Some(self.clone()))));
        f()
    }

    /// Makes this the current token of the calling thread for the rest of its life (a pool's
    /// worker threads, from the pool's start handler).
    pub(crate) fn adopt(&self) {
        CURRENT.with(|c| *c.borrow_mut() = Some(self.clone()));
    }

    fn followers(&self) -> std::sync::MutexGuard<'_, Vec<Token>> {
        // The list stays consistent whatever panicked while holding it (pushes and removals).
        self.0
            .followers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Keeps a token following another (see `Token::lead`); dropping it unlinks them.
pub struct Following {
    leader: Token,
    follower: Token,
}

impl Drop for Following {
    fn drop(&mut self) {
        let mut followers = self.leader.followers();
        if let Some(i) = followers
            .iter()
            .position(|t| Arc::ptr_eq(&t.0, &self.follower.0))
        {
            followers.swap_remove(i);
        }
    }
}

/// Whether the work the calling thread does was asked to stop. Cheap enough for hot loops: a
/// thread-local read and a relaxed atomic load, no lock.
pub fn requested() -> bool {
    CURRENT
        .try_with(|c| c.borrow().as_ref().is_some_and(Token::is_requested))
        .unwrap_or(false)
}

/// `Err(Error::Interrupted)` once a stop was requested.
pub fn check() -> Result<()> {
    if requested() {
        return Err(Error::Interrupted("interrupted by the user".to_string()));
    }
    Ok(())
}

/// Opens `path` with `options` so that a stop request ends the wait: opening a FIFO blocks
/// until the other side opens it too (`svmmap learn FIFO M` with no writer, `classify T M
/// FIFO` with no reader), and a thread blocked in `open()` never reaches a `check()`. So the
/// open of a FIFO runs on a helper thread while this one looks at the token every 50 ms; on a
/// request it opens the FIFO once for reading and writing, which on Linux never blocks and
/// counts as both sides, so the helper's `open()` returns and the helper ends (the file it
/// got is dropped). Anything else is opened directly, as are FIFOs outside any call.
///
/// `path` is the OS's path (on Linux any bytes but NUL, UTF-8 or not); errors name it as it
/// displays, a byte that is not UTF-8 shown as U+FFFD.
pub fn open_interruptibly(
    file: &std::path::Path,
    options: &std::fs::OpenOptions,
) -> Result<std::fs::File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let is_fifo = std::fs::metadata(file).is_ok_and(|m| m.file_type().is_fifo());
        if is_fifo && Token::current().is_some() {
            return open_fifo(file, options.clone());
        }
    }
    options.open(file).map_err(|e| Error::io_file(file, e))
}

#[cfg(unix)]
fn open_fifo(file: &std::path::Path, options: std::fs::OpenOptions) -> Result<std::fs::File> {
    let name = crate::error::shown_path(file);
    let path = name.as_str();
    let (send, receive) = std::sync::mpsc::channel();
    let owned = file.to_path_buf();
    crate::runtime::memory::check_thread_room(None).map_err(|e| Error::io(path, e))?;
    std::thread::Builder::new()
        .name("svmmap-open".to_string())
        .spawn(move || {
            let _ = send.send(options.open(&owned));
        })
        .map_err(|e| Error::io(path, e))?;
    loop {
        match receive.recv_timeout(std::time::Duration::from_millis(50)) {
            Ok(opened) => return opened.map_err(|e| Error::io(path, e)),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Error::io(
                    path,
                    std::io::Error::other("the thread opening the file ended without a result"),
                ))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if requested() {
                    // Releases the helper from its open(); the release opens nothing for the
                    // user (no data is read or written) and is closed at once.
                    let _ = std::fs::OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(file);
                    return Err(Error::Interrupted(format!(
                        "interrupted by the user while waiting to open {path}"
                    )));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    #[test]
    fn outside_any_call_nothing_is_requested() {
        assert!(Token::current().is_none());
        assert!(!requested());
        assert!(check().is_ok());
    }

    #[test]
    fn a_token_is_seen_inside_enter_only() {
        let token = Token::new();
        token.request();
        assert!(token.enter(requested));
        assert!(matches!(token.enter(check), Err(Error::Interrupted(_))));
        assert!(!requested());
        // Nested tokens: the inner one is seen inside, the outer one again after it.
        let inner = Token::new();
        token.enter(|| {
            assert!(!inner.enter(requested));
            assert!(requested());
        });
    }

    #[test]
    fn cancelling_one_of_two_calls_leaves_the_other_running() {
        let (first, second) = (Token::new(), Token::new());
        let (stopped_tx, stopped_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel();
        std::thread::scope(|scope| {
            // Each "call" spins until its token is requested (or a deadline passes) and then
            // runs a parallel kernel on a pool of its own, reporting what it saw.
            for (name, token) in [("first", &first), ("second", &second)] {
                let (stopped_tx, done_tx) = (stopped_tx.clone(), done_tx.clone());
                scope.spawn(move || {
                    token.enter(|| {
                        let deadline = Instant::now() + Duration::from_millis(500);
                        while !requested() && Instant::now() < deadline {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                        stopped_tx.send((name, requested())).unwrap();
                        let in_pool = crate::runtime::pool::with_threads(2, || {
                            use rayon::prelude::*;
                            (0..64).into_par_iter().any(|_| requested())
                        })
                        .unwrap();
                        done_tx.send((name, in_pool)).unwrap();
                    })
                });
            }
            first.request();
        });
        let mut stopped: Vec<_> = stopped_rx.try_iter().collect();
        let mut done: Vec<_> = done_rx.try_iter().collect();
        stopped.sort();
        done.sort();
        assert_eq!(stopped, [("first", true), ("second", false)]);
        assert_eq!(done, [("first", true), ("second", false)]);
        assert!(first.is_requested() && !second.is_requested());
    }

    #[test]
    fn a_follower_stops_with_its_leader_until_unlinked() {
        let (leader, follower, late) = (Token::new(), Token::new(), Token::new());
        let following = leader.lead(&follower);
        leader.request();
        assert!(follower.is_requested());
        // A follower linked after the request learns of it at once.
        let _late = leader.lead(&late);
        assert!(late.is_requested());
        drop(following);
        follower.reset();
        leader.request();
        assert!(!follower.is_requested());
    }
}
