//! The text in blocks of whole lines: each block is read, its line breaks made LF, cut into
//! pieces at line starts, and the pieces parsed in parallel (`line`) and appended in order
//! (`rows`), so that memory holds one block of text at a time and line numbers stay exact.

use rayon::prelude::*;
use std::collections::HashMap;
use std::io::Read;

use crate::data::reader::file::{open_text, read_error, sniff_gzip, text_of};
use crate::data::reader::line::{parse_line, Chunk, Fits};
use crate::data::reader::options::{FromF64, LetorData, ReadOptions};
use crate::data::reader::rows::{append_chunk, out_of_memory, reserve_for};
use crate::error::{Error, Result};

/// Bytes of text parsed per block.
const BLOCK_BYTES: usize = 16 << 20;

/// The longest line accepted. Real lines are a few kilobytes; without a bound, a binary file
/// without a newline would be read into memory whole while looking for the end of its line.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// Reads a LETOR/svmlight file (plain or gzip) through the one opener (`file::open_text`).
/// `file` is the OS's path (see `open_text`).
pub fn read_letor<T: FromF64>(file: &std::path::Path, opts: &ReadOptions) -> Result<LetorData<T>> {
    // A parsed file takes about as many bytes as its text (a value and an index per
    // `index:value` field), twice while the blocks are joined; every block of text is guarded
    // again as it is parsed (`parse_text`), since a gzip trailer's size can be wrong.
    let text = open_text(file, 3)?;
    parse_text(text.reader, &crate::error::shown_path(file), opts)
}

/// Parses LETOR text from any reader (plain or gzip, by the opener's rules: `file::text_of`);
/// `path` only names the source in errors. `read_letor` opens a file and parses its text.
pub fn parse_stream<T: FromF64>(
    source: impl Read + Send,
    path: &str,
    opts: &ReadOptions,
) -> Result<LetorData<T>> {
    parse_stream_with_limit(source, path, opts, MAX_LINE_BYTES)
}

pub(super) fn parse_stream_with_limit<T: FromF64>(
    source: impl Read + Send,
    path: &str,
    opts: &ReadOptions,
    max_line: usize,
) -> Result<LetorData<T>> {
    let (gzip, source) = sniff_gzip(source).map_err(|e| Error::io(path, e))?;
    let text = text_of(source, path, gzip)?;
    parse_text_with_limit(text, path, opts, max_line)
}

/// Parses text that the opener has read (decompressed, without its byte order mark).
fn parse_text<T: FromF64>(text: impl Read, path: &str, opts: &ReadOptions) -> Result<LetorData<T>> {
    parse_text_with_limit(text, path, opts, MAX_LINE_BYTES)
}

fn parse_text_with_limit<T: FromF64>(
    mut source: impl Read,
    path: &str,
    opts: &ReadOptions,
    max_line: usize,
) -> Result<LetorData<T>> {
    let mut out = LetorData::<T> {
        indptr: vec![0],
        comments: opts.keep_comments.then(Vec::new),
        ..Default::default()
    };
    let mut interner: HashMap<Vec<u8>, u32> = HashMap::new();
    // Empty: appending through `take` grows it only as far as there is data (fallibly: a
    // failed growth is an `OutOfMemory` read error), so a small input costs its size rather
    // than a block of BLOCK_BYTES allocated up front, which aborted the process under a
    // memory limit whatever the file.
    let mut buf: Vec<u8> = Vec::new();
    let mut lines_done: u64 = 0;
    let mut eof = false;
    let mut pending_cr = false;
    while !eof {
        // Fill the block, then cut it after its last newline; the rest waits for the next one.
        // Appending through `take` grows the buffer only as far as there is data, so a small
        // input costs its size rather than a zeroed block of BLOCK_BYTES.
        let start = buf.len();
        let want = BLOCK_BYTES.max(start * 2) - start;
        let got = (&mut source)
            .take(want as u64)
            .read_to_end(&mut buf)
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::OutOfMemory {
                    out_of_memory(path, "a block of its text")
                } else {
                    read_error(path, e)
                }
            })?;
        eof = got < want;
        let from = start.min(buf.len());
        normalize_line_breaks(&mut buf, from, &mut pending_cr);
        let cut = if eof {
            buf.len()
        } else {
            match buf.iter().rposition(|&b| b == b'\n') {
                Some(p) => p + 1,
                None if buf.len() > max_line => {
                    return Err(Error::parse(
                        path,
                        lines_done as usize + 1,
                        format!(
                            "the line is longer than {max_line} bytes without a line break: \
                             not a LETOR/svmlight text file?"
                        ),
                    ))
                }
                None => continue, // a line longer than the block: read more
            }
        };
        crate::runtime::cancel::check()?;
        // Parsing a block takes up to three bytes per byte of text (an 8-byte value and a
        // 4-byte index per field of four characters), and appending it may move the rows
        // read so far into vectors twice their size. This guards every block, the only
        // guard of a compressed file, whose size says nothing of its text.
        let footprint = (cut as u64)
            .saturating_mul(3)
            .saturating_add(out.heap_bytes());
        crate::runtime::memory::check_call(footprint, || {
            (
                format!(
                    "reading {path} (after {} rows, {} lines)",
                    out.n_rows(),
                    lines_done
                ),
                "read a smaller file, or free memory".to_string(),
            )
        })?;
        let lines = parse_block(&buf[..cut], path, lines_done, opts, T::fits)?;
        lines_done += lines.iter().map(|c| c.n_lines).sum::<u64>();
        for chunk in lines {
            reserve_for(&mut out, &chunk).map_err(|_| out_of_memory(path, "the rows read"))?;
            append_chunk(&mut out, &mut interner, &buf[..cut], chunk);
        }
        buf.drain(..cut);
    }
    if out.n_rows() == 0 {
        return Err(Error::parse(
            path,
            0,
            "no data lines: the file is empty or holds only comments",
        ));
    }
    if let Some(d) = opts.n_features {
        out.n_features = d;
    }
    Ok(out)
}

/// Turns the line breaks of `buf[from..]` into LF: CRLF becomes LF and a lone CR becomes LF.
/// `pending_cr` carries a CR that ended the previous read, so that a CRLF split between two
/// reads still counts as one line break. Text without CR (most files) is only scanned.
pub(super) fn normalize_line_breaks(buf: &mut Vec<u8>, from: usize, pending_cr: &mut bool) {
    let Some(&head) = buf.get(from) else {
        return;
    };
    let has_cr = buf[from..].contains(&b'\r');
    if !(has_cr || *pending_cr && head == b'\n') {
        *pending_cr = false;
        return;
    }
    let mut w = from;
    for r in from..buf.len() {
        let b = buf[r];
        if b == b'\n' && *pending_cr {
            *pending_cr = false;
            continue;
        }
        *pending_cr = b == b'\r';
        buf[w] = if b == b'\r' { b'\n' } else { b };
        w += 1;
    }
    buf.truncate(w);
}

fn parse_block(
    block: &[u8],
    path: &str,
    first_line: u64,
    opts: &ReadOptions,
    fits: Fits,
) -> Result<Vec<Chunk>> {
    let n_pieces = (rayon::current_num_threads() * 4).max(1);
    let mut bounds = vec![0usize];
    for i in 1..n_pieces {
        let target = block.len() * i / n_pieces;
        let prev = *bounds.last().unwrap_or(&0);
        if target <= prev {
            continue;
        }
        match block[target..].iter().position(|&b| b == b'\n') {
            Some(p) if target + p + 1 < block.len() => bounds.push(target + p + 1),
            _ => break,
        }
    }
    bounds.push(block.len());
    bounds.dedup();
    let results: Vec<Result<Chunk>> = bounds
        .par_windows(2)
        .map(|w| parse_piece(block, w[0], w[1], path, opts, fits))
        .collect();
    // Line numbers inside a piece are relative until we know how many lines precede it.
    let mut offset = first_line;
    let mut chunks = Vec::with_capacity(results.len());
    for r in results {
        match r {
            Ok(mut c) => {
                for l in &mut c.line_numbers {
                    *l += offset;
                }
                offset += c.n_lines;
                chunks.push(c);
            }
            Err(Error::Parse {
                mut location,
                message,
            }) => {
                location.line += offset as usize;
                return Err(Error::Parse { location, message });
            }
            Err(e) => return Err(e),
        }
    }
    Ok(chunks)
}

fn parse_piece(
    block: &[u8],
    lo: usize,
    hi: usize,
    path: &str,
    opts: &ReadOptions,
    fits: Fits,
) -> Result<Chunk> {
    let mut c = Chunk::default();
    let mut pos = lo;
    while pos < hi {
        let end = block[pos..hi]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(hi, |p| pos + p);
        c.n_lines += 1;
        let line_no = c.n_lines;
        parse_line(block, pos, end, line_no, &mut c, opts, fits)
            .map_err(|msg| Error::parse(path, line_no as usize, msg))?;
        pos = end + 1;
    }
    Ok(c)
}
