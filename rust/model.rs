//! The model file's bytes: read by the one opener of text files, written atomically (see
//! `crate::atomic`).
//!
//! The file is one JSON document (docs/model-format.md). What it means, and every check of it
//! (format, version, weights, repeated keys, ...), is the Python layer's
//! (python/svmmap/_files/model_json.py): Python has a JSON parser in its standard library, and
//! the text is read into Python objects there in any case. This module does what needs the
//! core: the opener's rules (memory checked, gzip, byte order mark, UTF-8) and the atomic,
//! gzip-by-name write.

use crate::atomic::write_atomic;
use crate::error::{Error, Result};

/// Reads the model file `file`, the OS's path (see `open_text`; errors name it as
/// `crate::error::shown_path` shows it), as UTF-8 text.
pub fn read_text(file: &std::path::Path) -> Result<String> {
    let name = crate::error::shown_path(file);
    let path = name.as_str();
    // The one opener of text files (gzip by its magic bytes, a byte order mark skipped,
    // UTF-16 refused), with the text's size checked against the available memory before it
    // is read or inflated: the text here and its copy in Python.
    let bytes = crate::data::reader::read_text(file, 2).map_err(|e| match e {
        // A damaged gzip file or text in another encoding is a format problem of the model
        // file; running out of memory or an OS error stays what it is.
        Error::Parse { location, message } => Error::Model(format!("{location}: {message}")),
        other => other,
    })?;
    check_parse_memory(path, &bytes)?;
    // A binary file handed over by mistake is a format problem, not an I/O failure.
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        Error::Model(format!(
            "{path}:{line}: not an svmmap model: the file is not UTF-8 text (byte 0x{:02x} at \
             offset {at}; Latin-1?)",
            bytes[at]
        ))
    })
}

/// Whether a model file's name asks for gzip: it ends in ".gz" in any case (`M.JSON.GZ` too,
/// as gzip itself and file managers take the suffix).
pub fn gzip_name(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 3 && bytes[bytes.len() - 3..].eq_ignore_ascii_case(b".gz")
}

/// Writes a model file's text to `path` atomically, gzip-compressed when the name ends in
/// ".gz" (`gzip_name`): such a name promises gzip data, which `read_text` (and gunzip) then read.
pub fn write_text(path: &str, text: &str) -> Result<()> {
    if gzip_name(path) {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut encoder, text.as_bytes())
            .and_then(|()| encoder.finish())
            .map_err(|e| Error::io(path, e))
            .and_then(|bytes| write_atomic(path, &bytes))
    } else {
        write_atomic(path, text.as_bytes())
    }
}

/// Bytes a model file's load holds per JSON value (a weight, a threshold, a name) at its peak
/// in Python: a float object (24 bytes) and its list slot (8), the list's spare room while it
/// grows, and the weights' array (8). tracemalloc measured 78 bytes a weight for a file of
/// 200,000; rounded up, a model of a million weights needs about 100 MB.
const LOAD_BYTES_PER_VALUE: u64 = 96;

/// The memory a model file's text will take once parsed in Python must be available: a
/// failed allocation there is a MemoryError at best, and the process is killed at worst (a
/// file of 40 MB of "0," holds twenty million weights and takes gigabytes). The count of
/// values is bounded by the count of commas, found without parsing.
fn check_parse_memory(path: &str, text: &[u8]) -> Result<()> {
    let values = text.iter().filter(|&&b| b == b',').count() as u64 + 1;
    let bytes = (text.len() as u64)
        .saturating_mul(2)
        .saturating_add(values.saturating_mul(LOAD_BYTES_PER_VALUE));
    crate::runtime::memory::check_call(bytes, || {
        (
            format!(
                "loading the model file {path} ({} of JSON text, up to {values} numbers)",
                crate::runtime::memory::human(text.len() as u64)
            ),
            "free memory, or load it on a machine with more".to_string(),
        )
    })
}
