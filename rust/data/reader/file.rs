//! Opening a text file: the one opener of every file svmmap reads (LETOR data, LightGBM's
//! `.query` files, runs, qrels, predictions and model files), so that they all follow the same
//! rules:
//!
//! - the memory the caller will need is checked against what is available before anything is
//!   read, from the size of the text: a plain file's size, or the size a gzip file's trailer
//!   records for its text (RFC 1952's ISIZE), so that a small compressed file that inflates to
//!   gigabytes is refused before it is inflated;
//! - gzip data is recognized by its magic bytes, whatever the file's name, and decompressed as it
//!   is read; gzip data that ends early (an interrupted download or copy) or does not decompress
//!   is an error naming the file and the line it reached, never an I/O error without a name;
//! - a UTF-8 byte order mark at the start is skipped; text in UTF-16 or UTF-32 (with or without
//!   its byte order mark) is refused at line 1, since every byte of it would be misread.
//!
//! What the text means (fields, numbers, line breaks) is the caller's: `blocks` for LETOR, the
//! Python readers for the others (through `read_text_file`), `model` for model files.

use std::io::Read;

use crate::data::reader::line::UTF8_BOM;
use crate::error::{Error, Result};
use crate::runtime::memory;

/// An opened text file: its text (decompressed, without a byte order mark) and the number of
/// bytes of text it announced, when known.
pub struct TextFile {
    pub reader: Box<dyn Read + Send>,
    /// A plain file's size, or the text size in a gzip file's trailer (at least the compressed
    /// size); None for a pipe.
    pub text_bytes: Option<u64>,
}

/// Why a file's text cannot be read, found while reading it (damaged gzip data), with the line
/// the text had reached. It travels inside an `std::io::Error` through the readers in between
/// and becomes `Error::Parse` in `read_error`.
#[derive(Debug)]
struct Damaged {
    line: u64,
    message: String,
}

impl std::fmt::Display for Damaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Damaged {}

/// The crate's error for a failed read of `path`'s text: damaged gzip data is a format error
/// naming the line reached, anything else the operating system's I/O error.
pub fn read_error(path: &str, e: std::io::Error) -> Error {
    if let Some(damaged) = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<Damaged>())
    {
        return Error::parse(path, damaged.line as usize, damaged.message.clone());
    }
    Error::io(path, e)
}

/// Opens `path` as text. `bytes_per_text_byte` is what the caller will hold per byte of
/// text at its peak (2 for a copy of the text, 3 for the LETOR reader's values and indices);
/// when that exceeds the available memory, the call is an `Error::Memory` naming the file.
///
/// `file` is the OS's path, opened by its bytes whatever they are (a Linux file name need not
/// be UTF-8); messages name it as `crate::error::shown_path` shows it, a byte that is not UTF-8 as `\\xff`.
pub fn open_text(file: &std::path::Path, bytes_per_text_byte: u64) -> Result<TextFile> {
    let name = crate::error::shown_path(file);
    let path = name.as_str();
    let file =
        crate::runtime::cancel::open_interruptibly(file, std::fs::OpenOptions::new().read(true))?;
    let size = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut magic = [0u8; 2];
    let n_magic = read_up_to(&mut reader, &mut magic).map_err(|e| Error::io(path, e))?;
    let gzip = n_magic == 2 && magic == [0x1f, 0x8b];
    let text_bytes = match size {
        Some(len) if gzip => Some(gzip_text_size(reader.get_ref(), len).max(len)),
        other => other,
    };
    if let Some(bytes) = text_bytes {
        memory::check_call(bytes.saturating_mul(bytes_per_text_byte), || {
            let text = if gzip {
                format!("{} of text once decompressed", memory::human(bytes))
            } else {
                memory::human(bytes)
            };
            (
                format!("reading {path} ({text})"),
                "read a smaller file, or free memory".to_string(),
            )
        })?;
    }
    let head = std::io::Cursor::new(magic[..n_magic].to_vec());
    let raw: Box<dyn Read + Send> = Box::new(head.chain(reader));
    let reader = text_of(raw, path, gzip)?;
    Ok(TextFile { reader, text_bytes })
}

/// The text of `source` by the opener's rules (gzip decompressed, a UTF-8 byte order mark
/// skipped, UTF-16 and UTF-32 refused); `gzip` says whether `source` starts with gzip's magic
/// bytes. `open_text` applies it to a file, `parse_stream` to any reader (tests, fuzzing).
pub fn text_of<'a>(
    source: Box<dyn Read + Send + 'a>,
    path: &str,
    gzip: bool,
) -> Result<Box<dyn Read + Send + 'a>> {
    let mut text: Box<dyn Read + Send + 'a> = if gzip {
        Box::new(GzipText {
            inner: GzipMembers {
                current: Some(flate2::bufread::GzDecoder::new(std::io::BufReader::new(
                    source,
                ))),
            },
            lines: 0,
        })
    } else {
        source
    };
    let mut head = [0u8; 4];
    let n = read_up_to(&mut text, &mut head).map_err(|e| read_error(path, e))?;
    let head = &head[..n];
    let skip = text_start(head).map_err(|message| Error::parse(path, 1, message))?;
    Ok(Box::new(
        std::io::Cursor::new(head[skip..].to_vec()).chain(text),
    ))
}

/// Whether `source` starts with gzip's magic bytes, and its bytes again (for `text_of`).
pub fn sniff_gzip<'a>(
    mut source: impl Read + Send + 'a,
) -> std::io::Result<(bool, Box<dyn Read + Send + 'a>)> {
    let mut magic = [0u8; 2];
    let n = read_up_to(&mut source, &mut magic)?;
    let gzip = n == 2 && magic == [0x1f, 0x8b];
    Ok((
        gzip,
        Box::new(std::io::Cursor::new(magic[..n].to_vec()).chain(source)),
    ))
}

/// How many bytes of `head` (the first bytes of the text) to skip, or why the text cannot be
/// read: a UTF-8 byte order mark is skipped; UTF-16 and UTF-32, recognized by their byte order
/// marks or by the NUL bytes that come with ASCII characters in them, are refused.
fn text_start(head: &[u8]) -> std::result::Result<usize, String> {
    if head.starts_with(UTF8_BOM) {
        return Ok(UTF8_BOM.len());
    }
    if head.starts_with(b"\xff\xfe") || head.starts_with(b"\xfe\xff") {
        // Windows tools write "Unicode" text as UTF-16; every byte would be misread.
        return Err(
            "the file is UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8"
                .to_string(),
        );
    }
    if head.starts_with(b"\x00\x00\xfe\xff") {
        return Err(
            "the file is UTF-32 text (it starts with a UTF-32 byte order mark); save it as UTF-8"
                .to_string(),
        );
    }
    // ASCII text in UTF-16 or UTF-32 has NUL bytes beside every character: two characters
    // of UTF-16 are [c, 0, c, 0] (little-endian) or [0, c, 0, c], one of UTF-32 [c, 0, 0, 0]
    // or [0, 0, 0, c]. A NUL byte elsewhere is left to the readers, which name its field.
    if let [a, b, c, d] = *head {
        let utf16 =
            (a != 0 && b == 0 && c != 0 && d == 0) || (a == 0 && b != 0 && c == 0 && d != 0);
        let utf32 = b == 0 && c == 0 && (a != 0) != (d != 0);
        if utf16 || utf32 {
            return Err(format!(
                "the file is not UTF-8 text: it looks like {} without a byte order mark (NUL \
                 bytes between its first characters); save it as UTF-8",
                if utf16 { "UTF-16" } else { "UTF-32" }
            ));
        }
    }
    Ok(0)
}

/// The size of the text of a gzip file of `len` bytes as its trailer records it (the last
/// four bytes, little-endian, the size modulo 4 GiB of the last member), or 0 when it cannot
/// be read. A lower bound for a file of several members or of more than 4 GiB of text, which
/// the caller's own checks while reading then cover.
fn gzip_text_size(file: &std::fs::File, len: u64) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        let mut trailer = [0u8; 4];
        if len >= 18 && file.read_exact_at(&mut trailer, len - 4).is_ok() {
            return u32::from_le_bytes(trailer) as u64;
        }
    }
    #[cfg(not(unix))]
    let _ = (file, len);
    0
}

/// The members of gzip data one after the other (gzip's concatenation, as `gzip -d` reads
/// it); bytes after a member that do not start another one are a `TrailingData` error, not
/// the start of a member that "ends early" (which called the file truncated).
struct GzipMembers<'a> {
    current: Option<flate2::bufread::GzDecoder<std::io::BufReader<Box<dyn Read + Send + 'a>>>>,
}

/// Bytes after the end of the gzip data that are not gzip data.
#[derive(Debug)]
struct TrailingData;

impl std::fmt::Display for TrailingData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("bytes that are not gzip data follow the gzip data")
    }
}

impl std::error::Error for TrailingData {}

impl Read for GzipMembers<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::io::BufRead;
        loop {
            let Some(member) = self.current.as_mut() else {
                return Ok(0);
            };
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // This member has ended: another may follow, or nothing.
            let mut rest = self
                .current
                .take()
                .map(|m| m.into_inner())
                .expect("a member");
            let next = rest.fill_buf()?;
            if next.is_empty() {
                return Ok(0);
            }
            if !next.starts_with(&[0x1f, 0x8b]) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    TrailingData,
                ));
            }
            self.current = Some(flate2::bufread::GzDecoder::new(rest));
        }
    }
}

/// Decompressed gzip text that names what went wrong: data that ends before the end of its
/// stream (a truncated file) or that does not decompress becomes a `Damaged` error with the
/// line reached. Errors of the file itself (with an OS error number) and failed allocations
/// pass through unchanged.
struct GzipText<R: Read> {
    inner: R,
    /// Line breaks (LF) read so far.
    lines: u64,
}

impl<R: Read> Read for GzipText<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
                Ok(n)
            }
            Err(e)
                if e.raw_os_error().is_some()
                    || matches!(
                        e.kind(),
                        std::io::ErrorKind::OutOfMemory | std::io::ErrorKind::Interrupted
                    ) =>
            {
                Err(e)
            }
            Err(e) => {
                let trailing = e.get_ref().is_some_and(|inner| inner.is::<TrailingData>());
                let truncated = e.kind() == std::io::ErrorKind::UnexpectedEof
                    || e.to_string().contains("incomplete");
                let message = if trailing {
                    "the gzip data is complete but bytes that are not gzip data follow it \
                     (something was appended to the file?); remove them"
                        .to_string()
                } else if truncated {
                    "the gzip data ends early: the file is truncated (an interrupted download or \
                     copy?)"
                        .to_string()
                } else {
                    format!("the file starts as gzip data but does not decompress ({e})")
                };
                Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    Damaged {
                        line: self.lines + 1,
                        message,
                    },
                ))
            }
        }
    }
}

/// The whole text of `path` (see `open_text`), in a buffer grown fallibly: a text that does
/// not fit in memory is an `Error::Memory` naming the file, never an abort of the process.
pub fn read_text(file: &std::path::Path, bytes_per_text_byte: u64) -> Result<Vec<u8>> {
    let mut text = open_text(file, bytes_per_text_byte)?;
    let name = crate::error::shown_path(file);
    let path = name.as_str();
    let mut bytes = Vec::new();
    let out_of_memory = |size: u64| {
        Error::Memory(format!(
            "reading {path}: its text ({}) could not be allocated; read a smaller file, or free \
             memory",
            memory::human(size)
        ))
    };
    if let Some(n) = text.text_bytes {
        bytes
            .try_reserve_exact(usize::try_from(n).unwrap_or(usize::MAX))
            .map_err(|_| out_of_memory(n))?;
    }
    // read_to_end grows the buffer with try_reserve: a failed growth is an OutOfMemory error.
    text.reader.read_to_end(&mut bytes).map_err(|e| {
        if e.kind() == std::io::ErrorKind::OutOfMemory {
            out_of_memory(bytes.len() as u64)
        } else {
            read_error(path, e)
        }
    })?;
    Ok(bytes)
}

pub(super) fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> Result<Vec<u8>> {
        let (gzip, source) = sniff_gzip(bytes).unwrap();
        let mut out = Vec::new();
        text_of(source, "f", gzip)?
            .read_to_end(&mut out)
            .map_err(|e| read_error("f", e))?;
        Ok(out)
    }

    #[test]
    fn the_start_of_the_text_is_read_by_one_rule() {
        assert_eq!(text(b"\xef\xbb\xbf1 2\n").unwrap(), b"1 2\n");
        assert_eq!(text(b"1\x00 0 d1 1\n").unwrap(), b"1\x00 0 d1 1\n");
        for (bytes, words) in [
            (&b"\xff\xfe1\x00"[..], "f:1: the file is UTF-16 text"),
            (
                &b"1\x00 \x00"[..],
                "f:1: the file is not UTF-8 text: it looks like UTF-16",
            ),
            (
                &b"\x001\x00 "[..],
                "f:1: the file is not UTF-8 text: it looks like UTF-16",
            ),
            (
                &b"1\x00\x00\x00"[..],
                "f:1: the file is not UTF-8 text: it looks like UTF-32",
            ),
        ] {
            let e = text(bytes).unwrap_err().to_string();
            assert!(e.starts_with(words), "{e}");
        }
    }

    #[test]
    fn damaged_gzip_data_names_the_line_it_reached() {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut encoder, "1 qid:1 1:1\n".repeat(500).as_bytes()).unwrap();
        let packed = encoder.finish().unwrap();
        assert_eq!(text(&packed).unwrap().len(), 12 * 500);
        let e = text(&packed[..packed.len() - 12]).unwrap_err();
        assert!(
            matches!(&e, Error::Parse { location, .. } if location.line > 1)
                && e.to_string().contains("the gzip data ends early"),
            "{e}"
        );
        // Two members are one text, as gzip -d reads them; bytes after the last member that
        // are not gzip data are named as such, not as a truncated file.
        let twice = [packed.clone(), packed.clone()].concat();
        assert_eq!(text(&twice).unwrap().len(), 2 * 12 * 500);
        for tail in [&b"garbage after the end"[..], &b"\n"[..], &b"\x1f"[..]] {
            let e = text(&[&packed[..], tail].concat()).unwrap_err().to_string();
            assert!(e.contains("bytes that are not gzip data follow it"), "{e}");
        }
    }
}
