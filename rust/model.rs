//! The model file: a versioned JSON document, written atomically.
//!
//! ```json
//! {"format": "svmmap-model", "version": 1, "n_features": 46, "coef": [...],
//!  "params": {...}, "feature_names": null, "binning": null, "training": {...}}
//! ```
//!
//! `params` (the estimator's parameters), `binning` and `training` (the summary of the fit) are
//! free-form objects owned by the Python layer; this module checks the parts every reader
//! relies on: the format name, the version, and that `coef` has `n_features` finite numbers.

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

pub const FORMAT_NAME: &str = "svmmap-model";
pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ModelFile {
    pub format: String,
    pub version: u32,
    pub n_features: usize,
    pub coef: Vec<f64>,
    #[serde(default)]
    pub params: serde_json::Value,
    #[serde(default)]
    pub feature_names: Option<Vec<String>>,
    #[serde(default)]
    pub binning: Option<serde_json::Value>,
    #[serde(default)]
    pub training: Option<serde_json::Value>,
}

impl ModelFile {
    /// Parses and checks a model document; `source` names it in errors.
    pub fn from_json(text: &str, source: &str) -> Result<Self> {
        // Look at the header first, so that a newer version is reported as such even when the
        // rest of its layout has changed.
        let header: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            let what = if e.is_eof() {
                "the file ends early (truncated?)"
            } else {
                "not valid JSON"
            };
            Error::Model(format!("{source}:{}: {what}: {e}", e.line()))
        })?;
        let format = header.get("format").and_then(|v| v.as_str());
        if format != Some(FORMAT_NAME) {
            return Err(Error::Model(format!(
                "{source}: not an svmmap model (expected \"format\": \"{FORMAT_NAME}\", got {})",
                header
                    .get("format")
                    .map_or("nothing".to_string(), |v| v.to_string())
            )));
        }
        match header.get("version").and_then(|v| v.as_u64()) {
            Some(v) if v == FORMAT_VERSION as u64 => {}
            Some(v) if v > FORMAT_VERSION as u64 => {
                return Err(Error::Model(format!(
                    "{source}: model format version {v} was written by a newer svmmap; \
                     this svmmap reads version {FORMAT_VERSION}: upgrade svmmap"
                )))
            }
            other => {
                // Say what the file holds: 0, "1", 1.0 and a missing field are refused alike.
                let given = match (other, header.get("version")) {
                    (Some(v), _) => v.to_string(),
                    (None, Some(v)) => format!("{v} ({})", json_kind(v)),
                    (None, None) => "(missing)".to_string(),
                };
                return Err(Error::Model(format!(
                    "{source}: unsupported model format version {given}; this svmmap reads version {FORMAT_VERSION} (an integer)"
                )));
            }
        }
        let model: ModelFile = serde_json::from_value(header)
            .map_err(|e| Error::Model(format!("{source}: malformed model: {e}")))?;
        model.check(source)?;
        Ok(model)
    }

    pub fn check(&self, source: &str) -> Result<()> {
        if self.n_features == 0 {
            // Nothing could be scored with it: predict refuses data without features.
            return Err(Error::Model(format!(
                "{source}: n_features is 0; a model has at least one weight"
            )));
        }
        if self.coef.len() != self.n_features {
            return Err(Error::Model(format!(
                "{source}: n_features is {} but coef has {} entries",
                self.n_features,
                self.coef.len()
            )));
        }
        if let Some(i) = self.coef.iter().position(|v| !v.is_finite()) {
            return Err(Error::Model(format!(
                "{source}: coef[{i}] is not a finite number"
            )));
        }
        // A score is a sum of weights times features; on binned (0/1) features it can reach
        // the sum of the weights' magnitudes, which must therefore stay finite.
        if !self.coef.iter().map(|v| v.abs()).sum::<f64>().is_finite() {
            return Err(Error::Model(format!(
                "{source}: coef: the weights' magnitudes sum beyond the float64 range (1.8e308), \
                 so scores would overflow to inf"
            )));
        }
        // The free-form parts are objects when present; a reader may look up keys in them.
        for (field, value) in [
            ("params", Some(&self.params)),
            ("binning", self.binning.as_ref()),
            ("training", self.training.as_ref()),
        ] {
            if let Some(v) = value {
                if !(v.is_object() || v.is_null()) {
                    return Err(Error::Model(format!(
                        "{source}: \"{field}\" must be a JSON object or null, got {}",
                        json_kind(v)
                    )));
                }
            }
        }
        if let Some(names) = &self.feature_names {
            if names.len() != self.n_features {
                return Err(Error::Model(format!(
                    "{source}: {} feature names for {} features",
                    names.len(),
                    self.n_features
                )));
            }
        }
        Ok(())
    }

    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string_pretty(self)
            .map_err(|e| Error::Model(format!("cannot encode model: {e}")))
    }

    pub fn load(path: &str) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        // A binary file handed over by mistake is a format problem, not an I/O failure.
        let mut text = String::from_utf8(bytes).map_err(|e| {
            Error::Model(format!(
                "{path}: not an svmmap model: the file is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })?;
        // Editors on Windows may start a saved file with a byte order mark; JSON readers may
        // ignore it (RFC 8259, 8.1), and it carries no content.
        if text.starts_with('\u{feff}') {
            text.drain(..'\u{feff}'.len_utf8());
        }
        Self::from_json(&text, path)
    }

    pub fn save(&self, path: &str) -> Result<()> {
        self.check(path)?;
        let mut text = self.to_json()?;
        text.push('\n');
        write_atomic(path, text.as_bytes())
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

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
/// What `path` names is respected: a symbolic link is followed and its target replaced (the
/// link stays a link), an existing file keeps its permission bits (a 0600 model stays
/// private, also while the temporary file exists), and a FIFO or a character device such as
/// `/dev/stdout` is written to directly, since renaming a file over it would replace the
/// device node instead of writing to it. Block devices and sockets are refused.
pub fn write_atomic(path: &str, bytes: &[u8]) -> Result<()> {
    write_atomic_then(path, bytes, &mut || Ok(()))
}

/// How `write_atomic` treats what already exists at a path.
enum Destination {
    /// Nothing there yet, a regular file, or a directory (the rename reports the error).
    Replace { target: PathBuf, mode: Option<u32> },
    /// A FIFO or a character device: written in place, as a shell redirection would.
    Stream,
}

/// Follows the final component's symbolic links (up to 40, the Linux limit) to the path that
/// is to be replaced; a dangling link yields its missing target, which is then created.
fn resolve_links(path: &Path) -> Result<PathBuf> {
    let shown = path.to_string_lossy().into_owned();
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&current).map_err(|e| Error::io(&shown, e))?;
                current = if link.is_absolute() {
                    link
                } else {
                    current.parent().unwrap_or(Path::new("")).join(link)
                };
            }
            _ => return Ok(current),
        }
    }
    Err(Error::input(format!(
        "{shown}: too many levels of symbolic links"
    )))
}

fn destination(path: &str) -> Result<Destination> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Destination::Replace {
                target: resolve_links(Path::new(path))?,
                mode: None,
            })
        }
        Err(e) => return Err(Error::io(path, e)),
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
        return Ok(Destination::Replace {
            target: resolve_links(Path::new(path))?,
            mode,
        });
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
            // No rename is possible; the reader of a pipe sees the bytes in order anyway.
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| Error::io(path, e))?;
            f.write_all(bytes).map_err(|e| Error::io(path, e))?;
            return f.flush().map_err(|e| Error::io(path, e));
        }
    };
    let target_str = target.to_string_lossy().into_owned();
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
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
        let mut f = options.open(&tmp).map_err(|e| Error::io(&tmp_str, e))?;
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
                .map_err(|e| Error::io(&tmp_str, e))?;
        }
        f.write_all(bytes).map_err(|e| Error::io(&tmp_str, e))?;
        f.sync_all().map_err(|e| Error::io(&tmp_str, e))?;
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

    fn sample() -> ModelFile {
        ModelFile {
            format: FORMAT_NAME.into(),
            version: FORMAT_VERSION,
            n_features: 2,
            coef: vec![0.1, -3.0e-17],
            params: serde_json::json!({"C": 1.0}),
            feature_names: None,
            binning: None,
            training: None,
        }
    }

    #[test]
    fn round_trip_is_exact() {
        let dir = std::env::temp_dir().join(format!("svmmap-model-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.json").to_string_lossy().into_owned();
        let m = sample();
        m.save(&path).unwrap();
        assert_eq!(ModelFile::load(&path).unwrap(), m);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn weights_read_back_bit_for_bit() {
        // Random weights of every magnitude: each must survive text and back exactly, which
        // serde_json guarantees only with its float_roundtrip feature.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let coef: Vec<f64> = (0..5000)
            .map(|_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-30..30)))
            .collect();
        let m = ModelFile {
            n_features: coef.len(),
            coef,
            ..sample()
        };
        let back = ModelFile::from_json(&m.to_json().unwrap(), "m.json").unwrap();
        assert!(back
            .coef
            .iter()
            .zip(&m.coef)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    #[test]
    fn a_byte_order_mark_is_skipped_and_a_model_without_weights_refused() {
        let dir = scratch_dir("model-bom");
        let path = dir.join("m.json");
        let text = sample().to_json().unwrap();
        std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
        assert_eq!(ModelFile::load(&path.to_string_lossy()).unwrap(), sample());
        std::fs::remove_dir_all(&dir).unwrap();
        let empty = ModelFile {
            n_features: 0,
            coef: vec![],
            ..sample()
        };
        let e = ModelFile::from_json(&empty.to_json().unwrap(), "m.json").unwrap_err();
        assert!(e.to_string().contains("n_features is 0"), "{e}");
    }

    #[test]
    fn bad_files_are_reported() {
        let text = sample().to_json().unwrap();
        let truncated = &text[..text.len() / 2];
        assert!(ModelFile::from_json(truncated, "m.json")
            .unwrap_err()
            .to_string()
            .contains("truncated"));
        let newer = text.replace("\"version\": 1", "\"version\": 2");
        assert!(ModelFile::from_json(&newer, "m.json")
            .unwrap_err()
            .to_string()
            .contains("newer svmmap"));
        let other = text.replace(FORMAT_NAME, "something-else");
        assert!(ModelFile::from_json(&other, "m.json")
            .unwrap_err()
            .to_string()
            .contains("not an svmmap model"));
        let huge = ModelFile {
            coef: vec![1e308, 1e308],
            ..sample()
        };
        assert!(ModelFile::from_json(&huge.to_json().unwrap(), "m.json")
            .unwrap_err()
            .to_string()
            .contains("overflow to inf"));
        let short = text.replace("\"n_features\": 2", "\"n_features\": 3");
        assert!(ModelFile::from_json(&short, "m.json")
            .unwrap_err()
            .to_string()
            .contains("coef has 2"));
    }

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

    #[test]
    fn binary_and_mistyped_model_files_are_format_errors() {
        let dir = scratch_dir("model-bad");
        let path = dir.join("m.json");
        std::fs::write(&path, [0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe]).unwrap();
        let e = ModelFile::load(&path.to_string_lossy()).unwrap_err();
        assert!(
            matches!(e, Error::Model(_)) && e.to_string().contains("not UTF-8"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        let text = sample().to_json().unwrap();
        let e = ModelFile::from_json(
            &text
                .replace("\"params\": {", "\"params\": [{")
                .replace("1.0\n  }", "1.0\n  }]"),
            "m.json",
        );
        let e = e.unwrap_err().to_string();
        assert!(
            e.contains("\"params\" must be a JSON object or null, got an array"),
            "{e}"
        );
    }
}
