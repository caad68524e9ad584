//! Safe writes: a file is replaced in one step (`write_atomic`), so that a reader sees the old
//! content or the whole new one, never a part, and a crash or an error leaves the old file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// Distinguishes the temporary files of concurrent writers within one process.
static TEMP_SERIAL: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to a temporary file beside `path`, flushes it to disk and renames it over
/// `path`, so that readers see either the old file or the whole new one, never a part.
///
/// The temporary file is `.<name>.tmp-<pid>-<serial>` in the target's directory (a rename
/// is atomic only within one file system) and is created exclusively, so that two writers of
/// the same path, in one process or several, never write into the same temporary file; the
/// last rename wins and the file is always one writer's complete output. If the process is
/// killed before the rename, the temporary file stays behind and `path` is untouched.
///
/// What `path` names is respected, by one rule: only a regular file reached by its name is
/// replaced by a rename; everything else is written in place, as a shell redirection writes.
/// A symbolic link is followed and its target replaced (the link stays a link), and an
/// existing file keeps its permission bits (a 0600 model stays private, also while the
/// temporary file exists). A FIFO or a character device is written to directly, since renaming
/// a file over it would replace the device node instead of writing to it. A path that names an
/// open file descriptor (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`) is written through that
/// descriptor, whatever it is open on: `svmmap classify T M /dev/stdout >> log` appends to
/// `log` as the shell asked, where following the link to `log` and renaming over it would
/// replace the user's file. Block devices and sockets are refused.
pub fn write_atomic(path: &str, bytes: &[u8]) -> Result<()> {
    write_atomic_then(path, bytes, &mut || Ok(()))
}

/// How `write_atomic` treats what already exists at a path.
enum Destination {
    /// Nothing there yet, a regular file, or a directory (the rename reports the error).
    Replace { target: PathBuf, mode: Option<u32> },
    /// A FIFO or a character device: written in place, as a shell redirection would.
    Stream,
    /// An open file descriptor of this process, named by `/dev/stdout`, `/dev/fd/N` or
    /// `/proc/self/fd/N`: written through a duplicate of it, so that its offset and append
    /// mode (`>>`) are the shell's.
    #[cfg(unix)]
    Descriptor(i32),
}

/// The descriptor a symbolic link names when it lives in a process's descriptor table
/// (`/proc/<pid>/fd/N`, also through `/proc/self`, `/dev/fd` or `/proc/<pid>/task/<tid>/fd`):
/// `Some((pid, N))`. Such links are not ordinary links: they point at whatever the descriptor
/// is open on (a file, a pipe, a terminal), and opening them reopens that object from scratch.
fn descriptor_link(link: &Path) -> Option<(u32, i32)> {
    let dir = std::fs::canonicalize(link.parent()?).ok()?;
    let fd = link.file_name()?.to_str()?.parse::<i32>().ok()?;
    let parts: Vec<_> = dir
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let pid = match parts.as_slice() {
        [root, proc_, pid, fd_dir] if root == "/" && proc_ == "proc" && fd_dir == "fd" => pid,
        [root, proc_, pid, task, _, fd_dir]
            if root == "/" && proc_ == "proc" && task == "task" && fd_dir == "fd" =>
        {
            pid
        }
        _ => return None,
    };
    Some((pid.parse().ok()?, fd))
}

/// Where a chain of symbolic links ends: a path, or a process's open descriptor.
enum Resolved {
    Path(PathBuf),
    Descriptor { pid: u32, fd: i32, link: PathBuf },
}

/// Follows the final component's symbolic links (up to 40, the Linux limit) to the path that
/// is to be replaced; a dangling link yields its missing target, which is then created. It
/// stops at a link of a descriptor table (`/proc/<pid>/fd/N`), which names an open file, not a
/// path.
fn resolve_links(path: &Path) -> Result<Resolved> {
    let shown = path.to_string_lossy().into_owned();
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if let Some((pid, fd)) = descriptor_link(&current) {
                    return Ok(Resolved::Descriptor {
                        pid,
                        fd,
                        link: current,
                    });
                }
                let link = std::fs::read_link(&current).map_err(|e| Error::io(&shown, e))?;
                current = if link.is_absolute() {
                    link
                } else {
                    current.parent().unwrap_or(Path::new("")).join(link)
                };
            }
            _ => return Ok(Resolved::Path(current)),
        }
    }
    Err(Error::input(format!(
        "{shown}: too many levels of symbolic links"
    )))
}

fn destination(path: &str) -> Result<Destination> {
    let target = match resolve_links(Path::new(path))? {
        Resolved::Path(target) => target,
        #[cfg(unix)]
        Resolved::Descriptor { pid, fd, .. } if pid == std::process::id() => {
            return Ok(Destination::Descriptor(fd))
        }
        // Another process's descriptor (or a platform without them): opened and written in
        // place, never replaced.
        Resolved::Descriptor { link, .. } => {
            let _ = link;
            return Ok(Destination::Stream);
        }
    };
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Destination::Replace { target, mode: None })
        }
        // "Not a directory" when a file stands where a folder of the path should be.
        Err(e) => {
            return Err(match folder_problem(folder_of(&target)) {
                Some(why) => Error::io_explained(path, e, why),
                None => Error::io(path, e),
            })
        }
    };
    let kind = meta.file_type();
    if kind.is_file() || kind.is_dir() {
        #[cfg(unix)]
        let mode = {
            use std::os::unix::fs::PermissionsExt;
            kind.is_file().then(|| meta.permissions().mode() & 0o7777)
        };
        #[cfg(not(unix))]
        let mode = None;
        return Ok(Destination::Replace { target, mode });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() || kind.is_char_device() {
            return Ok(Destination::Stream);
        }
        let what = if kind.is_block_device() {
            "a block device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        Err(Error::input(format!(
            "{path}: is {what}; refusing to write a file over it"
        )))
    }
    #[cfg(not(unix))]
    Ok(Destination::Stream)
}

/// What is wrong with the folder a file is to be written in, if anything: it is missing, or
/// it is not a folder.
fn folder_problem(dir: &Path) -> Option<String> {
    let folder = dir.display();
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Some(format!("the folder '{folder}' does not exist"))
        }
        Ok(meta) if !meta.is_dir() => Some(format!("'{folder}' is not a folder")),
        _ => None,
    }
}

/// The folder a path's file lives in ("." for a bare name).
fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The error of creating the temporary file beside `path` in `dir`, told in terms of the
/// user's path and folder: the temporary file's name means nothing to the user, and "no such
/// file" about it hides that the folder they named is missing.
fn temporary_file_error(path: &str, dir: &Path, e: std::io::Error) -> Error {
    let folder = dir.display();
    let why = folder_problem(dir).unwrap_or_else(|| {
        if e.kind() == std::io::ErrorKind::PermissionDenied {
            format!("no permission to create a file in the folder '{folder}'")
        } else {
            format!("cannot create a file in the folder '{folder}': {e}")
        }
    });
    Error::io_explained(path, e, why)
}

/// An error while writing the temporary file (a full disk, a quota): `path` is unchanged.
fn writing_error(path: &str, tmp: &str, e: std::io::Error) -> Error {
    let why = format!("{e} while writing the temporary file {tmp}; {path} is unchanged");
    Error::io_explained(path, e, why)
}

/// `write_atomic` with a hook run after the data is on disk and before the rename, so that
/// tests can interrupt a write at its most delicate point.
pub fn write_atomic_then(
    path: &str,
    bytes: &[u8],
    before_rename: &mut dyn FnMut() -> Result<()>,
) -> Result<()> {
    if Path::new(path).file_name().is_none() {
        return Err(Error::input(format!("{path}: not a file path")));
    }
    let (target, mode) = match destination(path)? {
        Destination::Replace { target, mode } => (target, mode),
        Destination::Stream => {
            // No rename is possible; the reader of a pipe sees the bytes in order anyway. A
            // regular file met here (through another process's descriptor) is appended to,
            // never truncated. The open is interruptible (a FIFO without a reader blocks in it).
            let mut f = crate::runtime::cancel::open_interruptibly(
                std::path::Path::new(path),
                std::fs::OpenOptions::new().append(true),
            )?;
            f.write_all(bytes).map_err(|e| Error::io(path, e))?;
            return f.flush().map_err(|e| Error::io(path, e));
        }
        #[cfg(unix)]
        Destination::Descriptor(fd) => {
            use std::os::fd::BorrowedFd;
            // SAFETY: the descriptor is only borrowed for `try_clone_to_owned`, which fails
            // with EBADF when it is not open; the duplicate is ours and closed on drop, and the
            // original stays open for the shell's other writers.
            let owned = unsafe { BorrowedFd::borrow_raw(fd) }
                .try_clone_to_owned()
                .map_err(|e| Error::io(path, e))?;
            let mut f = std::fs::File::from(owned);
            f.write_all(bytes).map_err(|e| Error::io(path, e))?;
            return f.flush().map_err(|e| Error::io(path, e));
        }
    };
    let target_str = target.to_string_lossy().into_owned();
    let dir = folder_of(&target);
    let name = target
        .file_name()
        .ok_or_else(|| Error::input(format!("{path}: not a file path")))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}-{}",
        name.to_string_lossy(),
        std::process::id(),
        TEMP_SERIAL.fetch_add(1, Ordering::Relaxed)
    ));
    let tmp_str = tmp.to_string_lossy().into_owned();
    let result = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        if let Some(mode) = mode {
            // Created with the old file's bits (less the umask), so that a private file's
            // content is never readable by others, not even in the temporary file.
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(mode & 0o777);
        }
        let mut f = options
            .open(&tmp)
            .map_err(|e| temporary_file_error(path, dir, e))?;
        #[cfg(unix)]
        if let Some(mode) = mode {
            // The owner and group first (root rewriting a user's file would otherwise take
            // it over; others can only keep them, so a refusal is not an error), then the
            // bits, which the umask may have cleared (0664 under umask 022) and a change of
            // owner may have reset.
            use std::os::unix::fs::{MetadataExt, PermissionsExt};
            if let Ok(old) = std::fs::metadata(&target) {
                let _ = std::os::unix::fs::fchown(&f, Some(old.uid()), Some(old.gid()));
            }
            f.set_permissions(std::fs::Permissions::from_mode(mode))
                .map_err(|e| writing_error(path, &tmp_str, e))?;
        }
        f.write_all(bytes)
            .map_err(|e| writing_error(path, &tmp_str, e))?;
        f.sync_all().map_err(|e| writing_error(path, &tmp_str, e))?;
        drop(f);
        before_rename()?;
        std::fs::rename(&tmp, &target).map_err(|e| Error::io(&target_str, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return result;
    }
    // Make the rename itself durable. Not every platform can open a directory for syncing;
    // the file is complete and in place either way, so a failure here is not reported.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch_dir(tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("svmmap-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn concurrent_writers_never_mix_their_output() {
        // Eight threads write different 1 MB contents to the same path while a reader keeps
        // reading it: every read must be one writer's complete content. With a shared
        // temporary name, one writer could truncate or rename another's half-written file.
        let dir = scratch_dir("atomic-race");
        let path = dir.join("out.txt").to_string_lossy().into_owned();
        let content = |k: usize| vec![b'a' + k as u8; 1 << 20];
        write_atomic(&path, &content(0)).unwrap();
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let writers: Vec<_> = (0..8)
                .map(|k| {
                    let path = &path;
                    scope.spawn(move || -> Result<()> {
                        for _ in 0..10 {
                            write_atomic(path, &content(k))?;
                        }
                        Ok(())
                    })
                })
                .collect();
            // The reader records problems instead of panicking, so that a failure cannot
            // leave the scope waiting for it.
            let reader = scope.spawn(|| {
                let (mut reads, mut bad) = (0, Vec::new());
                while !done.load(Ordering::Relaxed) {
                    let data = std::fs::read(&path).unwrap_or_default();
                    if data.len() != 1 << 20 || data.iter().any(|&b| b != data[0]) {
                        bad.push(data.len());
                    }
                    reads += 1;
                }
                (reads, bad)
            });
            let results: Vec<Result<()>> = writers.into_iter().map(|w| w.join().unwrap()).collect();
            done.store(true, Ordering::Relaxed);
            let (reads, bad) = reader.join().unwrap();
            assert!(reads > 0);
            assert!(
                bad.is_empty(),
                "reads saw partial or mixed files of sizes {bad:?}"
            );
            for r in results {
                r.unwrap();
            }
        });
        // Nothing but the target is left in the directory.
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.txt")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failure_before_the_rename_keeps_the_old_file() {
        let dir = scratch_dir("atomic-fail");
        let path = dir.join("m.json").to_string_lossy().into_owned();
        write_atomic(&path, b"old complete content").unwrap();
        let err = write_atomic_then(&path, b"new", &mut || Err(Error::input("interrupted")));
        assert!(err.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"old complete content");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "the temporary file is removed"
        );
        // A directory in the way is an I/O error naming the path, and nothing is left behind.
        let sub = dir.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let e = write_atomic(&sub.to_string_lossy(), b"x").unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e}");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_folder_is_named_not_the_temporary_file() {
        // The temporary file is created first; its failure used to be reported as "No such
        // file or directory: '<dir>/.out.txt.tmp-<pid>-<n>'", a name the user never gave.
        let dir = scratch_dir("atomic-nofolder");
        let missing = dir.join("no-such-folder");
        let path = missing.join("out.txt").to_string_lossy().into_owned();
        let e = write_atomic(&path, b"x").unwrap_err();
        let shown = e.to_string();
        assert!(
            shown.starts_with(&format!("{path}: ")),
            "the user's path first: {shown}"
        );
        assert!(
            shown.contains(&format!(
                "the folder '{}' does not exist",
                missing.display()
            )),
            "{shown}"
        );
        assert!(!shown.contains(".tmp-"), "{shown}");
        match &e {
            Error::Io {
                path: p, source, ..
            } => {
                assert_eq!(p, &path);
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
                #[cfg(unix)]
                assert_eq!(crate::error::os_errno(source), Some(2), "ENOENT kept");
            }
            other => panic!("expected an I/O error, got {other:?}"),
        }
        // A file where the folder should be.
        std::fs::write(dir.join("plain"), b"").unwrap();
        let inside = dir.join("plain").join("out.txt");
        let e = write_atomic(&inside.to_string_lossy(), b"x").unwrap_err();
        assert!(e.to_string().contains("is not a folder"), "{e}");
        assert!(!e.to_string().contains(".tmp-"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn rewrites_keep_the_mode_and_follow_symbolic_links() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch_dir("atomic-mode");
        let path = dir.join("m.json");
        let p = path.to_string_lossy().into_owned();
        std::fs::write(&path, b"old").unwrap();
        for mode in [0o600, 0o640, 0o664, 0o444] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            write_atomic(&p, b"new").unwrap();
            let got = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
            assert_eq!(got, mode, "mode {mode:o} became {got:o}");
            assert_eq!(std::fs::read(&path).unwrap(), b"new");
        }
        // A link, relative and through a second link, still points at the rewritten file.
        std::os::unix::fs::symlink("m.json", dir.join("link1")).unwrap();
        std::os::unix::fs::symlink(dir.join("link1"), dir.join("link2")).unwrap();
        write_atomic(&dir.join("link2").to_string_lossy(), b"through links").unwrap();
        assert!(std::fs::symlink_metadata(dir.join("link2"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(std::fs::symlink_metadata(dir.join("link1"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&path).unwrap(), b"through links");
        // A dangling link gets its target created; a loop of links is an error.
        std::os::unix::fs::symlink("new.json", dir.join("dangling")).unwrap();
        write_atomic(&dir.join("dangling").to_string_lossy(), b"created").unwrap();
        assert_eq!(std::fs::read(dir.join("new.json")).unwrap(), b"created");
        std::os::unix::fs::symlink("loop-b", dir.join("loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", dir.join("loop-b")).unwrap();
        let e = write_atomic(&dir.join("loop-a").to_string_lossy(), b"x").unwrap_err();
        assert!(e.to_string().contains("symbolic links"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_descriptor_path_is_written_through_the_descriptor() {
        // /proc/self/fd/N and /dev/fd/N of a file opened for appending: the bytes go to the
        // end of that file through the descriptor, and the file is not replaced (same inode).
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        let dir = scratch_dir("atomic-fd");
        let path = dir.join("log");
        std::fs::write(&path, b"old\n").unwrap();
        let inode = std::fs::metadata(&path).unwrap().ino();
        let f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        for alias in ["/proc/self/fd", "/dev/fd"] {
            write_atomic(&format!("{alias}/{}", f.as_raw_fd()), b"new\n").unwrap();
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"old\nnew\nnew\n");
        assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode);
        drop(f);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn character_devices_are_written_in_place_not_replaced() {
        // /dev/null is a character device: renaming over it would need root and would
        // replace the device node; the bytes go to the device instead.
        use std::os::unix::fs::FileTypeExt;
        write_atomic("/dev/null", b"discarded").unwrap();
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
    }
}
