//! Reader for the LETOR / svmlight ranking format:
//!
//!   <label> qid:<query id> <index>:<value> ... [# comment]
//!
//! Indices start at 1 and may be sparse; lines may come in any query order; blank lines and
//! lines holding only a comment are skipped; `.gz` files (detected by their magic bytes) are
//! decompressed on the fly. The file is read in blocks of whole lines and each block is parsed
//! in parallel, so memory holds one block of text at a time.
//!
//! Anything else is an error naming the file, the 1-based line, the field and what was
//! expected: a missing `qid:`, a label or value that is not a finite number (including the
//! `NULL` of LETOR's Feature-null files), an index that is 0, negative, repeated or beyond
//! `MAX_FEATURE_INDEX`, or a file without a single data line. Unsorted indices are accepted
//! and sorted.
//!
//! Two options read the layouts other tools write. `missing_nan` reads a feature value `NULL`
//! (any case) as NaN, for LETOR's Feature-null files; labels stay strict. `without_qid` reads
//! LightGBM's layout, `<label> <index>:<value> ...` with the query sizes in a separate
//! `.query` file: no line may then carry a `qid:` field, and every row gets the query id ""
//! (the caller cuts the rows into queries from the sizes).
//!
//! Text as files really come: a UTF-8 byte order mark at the start is skipped; a line ends at
//! LF, CRLF or a lone CR (classic Mac files), as Python's universal newlines and svmmap's TREC
//! readers have it; fields are separated by ASCII whitespace (space, tab, CR, VT, FF), the
//! set Python's `bytes.split()` and C's `isspace` use, so that a query id is the same string
//! here and in a run or qrels file. Query ids and kept comments must be UTF-8 (a Latin-1 byte
//! is an error naming the line and field, never a silent replacement character).
//!
//! This is one file for one job, reading the format, although it is over 600 lines: the
//! block loop, the line breaks and the field parsers share the error positions (file, line,
//! field) and the options, and none is used elsewhere. The code is about 640 lines; the rest
//! is its tests.

use rayon::prelude::*;
use std::collections::HashMap;
use std::io::Read;

use crate::error::{Error, Result};

/// The largest feature index accepted, so that column indices fit scipy's int32 and an absurd
/// index is reported instead of allocated.
pub const MAX_FEATURE_INDEX: u64 = i32::MAX as u64;

/// Bytes of text parsed per block.
const BLOCK_BYTES: usize = 16 << 20;

/// The longest line accepted. Real lines are a few kilobytes; without a bound, a binary file
/// without a newline would be read into memory whole while looking for the end of its line.
pub const MAX_LINE_BYTES: usize = 64 << 20;

#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Expected number of features; an index above it is an error. None: the largest index.
    pub n_features: Option<usize>,
    /// Keep the text after '#' of every data line.
    pub keep_comments: bool,
    /// Read a feature value `NULL` as NaN instead of refusing it.
    pub missing_nan: bool,
    /// Lines have no `qid:` field (LightGBM's layout); a line with one is an error.
    pub without_qid: bool,
}

/// A parsed file in CSR form, rows in file order.
#[derive(Debug, Clone, Default)]
pub struct LetorData<T> {
    pub labels: Vec<f64>,
    /// Index into `qid_names` for every row.
    pub qid_codes: Vec<u32>,
    /// Distinct query ids in order of first appearance.
    pub qid_names: Vec<String>,
    pub indptr: Vec<i64>,
    /// 0-based column indices.
    pub indices: Vec<i32>,
    pub values: Vec<T>,
    pub n_features: usize,
    /// The 1-based line number of every row.
    pub line_numbers: Vec<u64>,
    pub comments: Option<Vec<String>>,
}

impl<T> LetorData<T> {
    pub fn n_rows(&self) -> usize {
        self.labels.len()
    }

    /// True when every row lists exactly features 1..n_features in order, so that `values`
    /// already is the dense row-major matrix.
    pub fn is_dense_complete(&self) -> bool {
        let d = self.n_features;
        self.values.len() == self.n_rows() * d
            && self
                .indices
                .chunks(d.max(1))
                .all(|row| row.iter().enumerate().all(|(j, &i)| i as usize == j))
    }
}

/// Value types the reader can produce.
pub trait FromF64: Copy + Send + Sync + Default + 'static {
    fn from_f64(v: f64) -> Self;
    /// Whether `v` (finite) stays finite in this type.
    fn fits(_v: f64) -> bool {
        true
    }
}
impl FromF64 for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
}
impl FromF64 for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn fits(v: f64) -> bool {
        (v as f32).is_finite()
    }
}

/// Reads a LETOR/svmlight file (plain or gzip).
pub fn read_letor<T: FromF64>(path: &str, opts: &ReadOptions) -> Result<LetorData<T>> {
    let file =
        crate::runtime::cancel::open_interruptibly(path, std::fs::OpenOptions::new().read(true))?;
    // A parsed file takes about as many bytes as its text (a value and an index per
    // `index:value` field), twice while the blocks are joined; a compressed file's size says
    // little, so only plain files are guarded up front (every block of text, plain or
    // decompressed, is guarded again as it is parsed: `parse_stream`).
    if let Ok(meta) = file.metadata() {
        if meta.is_file() {
            crate::runtime::memory::check_call(meta.len().saturating_mul(3), || {
                (
                    format!(
                        "reading {path} ({})",
                        crate::runtime::memory::human(meta.len())
                    ),
                    "read a smaller file, or free memory".to_string(),
                )
            })?;
        }
    }
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut magic = [0u8; 2];
    let n_magic = read_up_to(&mut reader, &mut magic).map_err(|e| Error::io(path, e))?;
    let head = std::io::Cursor::new(magic[..n_magic].to_vec());
    let source: Box<dyn Read> = if n_magic == 2 && magic == [0x1f, 0x8b] {
        Box::new(flate2::read::MultiGzDecoder::new(head.chain(reader)))
    } else {
        Box::new(head.chain(reader))
    };
    parse_stream(source, path, opts)
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Parses LETOR text from any reader; `path` only names the source in errors.
pub fn parse_stream<T: FromF64>(
    source: impl Read,
    path: &str,
    opts: &ReadOptions,
) -> Result<LetorData<T>> {
    parse_stream_with_limit(source, path, opts, MAX_LINE_BYTES)
}

fn parse_stream_with_limit<T: FromF64>(
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
    let mut first = true;
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
                    Error::io(path, e)
                }
            })?;
        eof = got < want;
        if first {
            first = false;
            if buf.starts_with(UTF8_BOM) {
                buf.drain(..UTF8_BOM.len());
            } else if buf.starts_with(b"\xff\xfe") || buf.starts_with(b"\xfe\xff") {
                // Windows tools write "Unicode" text as UTF-16; every byte would be misread.
                return Err(Error::parse(
                    path,
                    1,
                    "the file is UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8",
                ));
            }
        }
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

const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// Turns the line breaks of `buf[from..]` into LF: CRLF becomes LF and a lone CR becomes LF.
/// `pending_cr` carries a CR that ended the previous read, so that a CRLF split between two
/// reads still counts as one line break. Text without CR (most files) is only scanned.
fn normalize_line_breaks(buf: &mut Vec<u8>, from: usize, pending_cr: &mut bool) {
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

/// Rows parsed from one piece of a block. Query ids and comments are byte ranges into the block.
struct Chunk {
    n_lines: u64,
    labels: Vec<f64>,
    qids: Vec<(usize, usize)>,
    row_nnz: Vec<u32>,
    indices: Vec<i32>,
    values: Vec<f64>,
    line_numbers: Vec<u64>,
    comments: Vec<(usize, usize)>,
    max_index: u64,
}

/// Whether a finite value stays finite in the output type (float32 overflows above 3.4e38).
type Fits = fn(f64) -> bool;

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
    let mut c = Chunk {
        n_lines: 0,
        labels: Vec::new(),
        qids: Vec::new(),
        row_nnz: Vec::new(),
        indices: Vec::new(),
        values: Vec::new(),
        line_numbers: Vec::new(),
        comments: Vec::new(),
        max_index: 0,
    };
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

/// ASCII whitespace as C's `isspace` and Python's `bytes.split()` see it (LF ends lines).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// Parses one line into `c`; the error is a message without the location.
fn parse_line(
    block: &[u8],
    lo: usize,
    hi: usize,
    line_no: u64,
    c: &mut Chunk,
    opts: &ReadOptions,
    fits: Fits,
) -> std::result::Result<(), String> {
    let line = &block[lo..hi];
    let content_end = line.iter().position(|&b| b == b'#').unwrap_or(line.len());
    let mut fields = Fields {
        line,
        pos: 0,
        end: content_end,
    };
    if line.starts_with(UTF8_BOM) {
        // The start of the file has lost its mark already; one here comes from files joined
        // with cat, and would otherwise stick to the label (or, in a TREC file, to a query id).
        return Err(
            "a UTF-8 byte order mark in the middle of the file (files joined together?); \
                    remove it"
                .to_string(),
        );
    }
    let Some((label_at, label_tok)) = fields.next() else {
        return Ok(()); // blank or comment-only line
    };
    let _ = label_at;
    let label = parse_number(label_tok)
        .map_err(|why| format!("field 1 (the label) is {}: {why}", show(label_tok)))?;
    // In LightGBM's layout the second field is already a feature; it is parsed below with
    // the others, so the field iterator is rewound to it.
    let (qid, qid_start) = if opts.without_qid {
        let before = fields.pos;
        if let Some((_, tok)) = fields.next() {
            if tok.starts_with(b"qid:") {
                return Err(format!(
                    "field 2 is a query id ({}), but the query sizes were given separately \
                     (a group file); use one or the other",
                    show(tok)
                ));
            }
        }
        fields.pos = before;
        (&line[..0], lo)
    } else {
        let (qid_at, qid_tok) = fields.next().ok_or_else(|| {
            "expected 'qid:<query id>' after the label, got the end of the line".to_string()
        })?;
        let qid = qid_tok
            .strip_prefix(b"qid:")
            .filter(|q| !q.is_empty())
            .ok_or_else(|| format!("field 2 must be 'qid:<query id>', got {}", show(qid_tok)))?;
        // Query ids become Python strings; two ids that differ only in invalid bytes would
        // otherwise turn into the same string and silently merge two queries.
        if let Err(e) = std::str::from_utf8(qid) {
            return Err(format!(
                "field 2: the query id {} is not valid UTF-8 text (byte 0x{:02x}, Latin-1?); \
                 re-encode the file as UTF-8",
                show(qid_tok),
                qid[e.valid_up_to()]
            ));
        }
        if qid.contains(&0) {
            // numpy's str arrays drop trailing NULs, so "1\0" would become query "1".
            return Err(format!(
                "field 2: the query id {} contains a NUL byte",
                show(qid_tok)
            ));
        }
        (qid, lo + qid_at + 4)
    };
    let row_start = c.indices.len();
    let mut prev: u64 = 0;
    let mut sorted = true;
    let mut field_no = 2;
    while let Some((_, tok)) = fields.next() {
        field_no += 1;
        let colon = tok.iter().position(|&b| b == b':').ok_or_else(|| {
            format!(
                "field {field_no} must be '<index>:<value>', got {}",
                show(tok)
            )
        })?;
        let (idx_tok, val_tok) = (&tok[..colon], &tok[colon + 1..]);
        let index = parse_index(idx_tok)
            .map_err(|why| format!("field {field_no} ({}): {why}", show(tok)))?;
        if let Some(d) = opts.n_features {
            if index > d as u64 {
                return Err(format!(
                    "field {field_no} ({}): feature index {index} is above n_features = {d}",
                    show(tok)
                ));
            }
        }
        let value = if opts.missing_nan && val_tok.eq_ignore_ascii_case(b"null") {
            f64::NAN
        } else {
            parse_number(val_tok)
                .map_err(|why| format!("field {field_no} ({}): value {why}", show(tok)))?
        };
        if !value.is_nan() && !fits(value) {
            return Err(format!(
                "field {field_no} ({}): value {value:e} is beyond the float32 range (3.4e38); \
                 read the file as float64",
                show(tok)
            ));
        }
        if index <= prev {
            sorted = false;
        }
        prev = index;
        c.max_index = c.max_index.max(index);
        c.indices.push((index - 1) as i32);
        c.values.push(value);
    }
    if !sorted {
        let mut pairs: Vec<(i32, f64)> = c.indices[row_start..]
            .iter()
            .copied()
            .zip(c.values[row_start..].iter().copied())
            .collect();
        pairs.sort_by_key(|p| p.0);
        if let Some(w) = pairs.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(format!(
                "feature index {} appears more than once",
                w[0].0 + 1
            ));
        }
        for (k, (i, v)) in pairs.into_iter().enumerate() {
            c.indices[row_start + k] = i;
            c.values[row_start + k] = v;
        }
    }
    c.labels.push(label);
    c.qids.push((qid_start, qid_start + qid.len()));
    c.row_nnz.push((c.indices.len() - row_start) as u32);
    c.line_numbers.push(line_no);
    if opts.keep_comments {
        let from = (content_end + 1).min(line.len());
        let mut a = lo + from;
        let mut b = hi;
        while a < b && is_space(block[a]) {
            a += 1;
        }
        while b > a && is_space(block[b - 1]) {
            b -= 1;
        }
        // Comments become Python strings; a Latin-1 document id would otherwise turn into
        // replacement characters and two ids could become one.
        if let Err(e) = std::str::from_utf8(&block[a..b]) {
            return Err(format!(
                "the comment is not valid UTF-8 text (byte 0x{:02x} at column {}); \
                 re-encode the file as UTF-8",
                block[a + e.valid_up_to()],
                a + e.valid_up_to() - lo + 1
            ));
        }
        c.comments.push((a, b));
    }
    Ok(())
}

/// Whitespace-separated fields of a line, each with its offset.
struct Fields<'a> {
    line: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> Fields<'a> {
    fn next(&mut self) -> Option<(usize, &'a [u8])> {
        while self.pos < self.end && is_space(self.line[self.pos]) {
            self.pos += 1;
        }
        if self.pos >= self.end {
            return None;
        }
        let start = self.pos;
        while self.pos < self.end && !is_space(self.line[self.pos]) {
            self.pos += 1;
        }
        Some((start, &self.line[start..self.pos]))
    }
}

fn show(tok: &[u8]) -> String {
    let s = String::from_utf8_lossy(tok);
    if s.chars().count() > 40 {
        format!("'{}...'", s.chars().take(40).collect::<String>())
    } else {
        format!("'{s}'")
    }
}

fn parse_number(tok: &[u8]) -> std::result::Result<f64, String> {
    if tok.eq_ignore_ascii_case(b"null") {
        return Err(
            "NULL: a missing value (read LETOR Feature-null files with missing=\"nan\", \
             or --missing on the command line)"
                .into(),
        );
    }
    let v: f64 = std::str::from_utf8(tok)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| "not a number".to_string())?;
    if !v.is_finite() {
        return Err(format!("{v}: values must be finite"));
    }
    Ok(v)
}

fn parse_index(tok: &[u8]) -> std::result::Result<u64, String> {
    if tok.is_empty() || !tok.iter().all(|b| b.is_ascii_digit()) {
        return Err("the feature index must be a positive integer".into());
    }
    let mut v: u64 = 0;
    for &b in tok {
        v = v.saturating_mul(10).saturating_add((b - b'0') as u64);
    }
    if v == 0 {
        return Err("feature index 0: indices start at 1".into());
    }
    if v > MAX_FEATURE_INDEX {
        return Err(format!(
            "feature index {} is above the largest supported index {MAX_FEATURE_INDEX}",
            String::from_utf8_lossy(tok)
        ));
    }
    Ok(v)
}

/// The error of an allocation of the reader that failed.
fn out_of_memory(path: &str, what: &str) -> Error {
    Error::Memory(format!(
        "reading {path}: no memory is left for {what} (the file is too large for the memory \
         available); read a smaller file, or free memory"
    ))
}

impl<T> LetorData<T> {
    /// Bytes held by the vectors that grow with every row.
    fn heap_bytes(&self) -> u64 {
        use std::mem::size_of;
        let of = |len: usize, size: usize| (len as u64).saturating_mul(size as u64);
        of(self.labels.capacity(), size_of::<f64>())
            .saturating_add(of(self.qid_codes.capacity(), size_of::<u32>()))
            .saturating_add(of(self.indptr.capacity(), size_of::<i64>()))
            .saturating_add(of(self.indices.capacity(), size_of::<i32>()))
            .saturating_add(of(self.values.capacity(), size_of::<T>()))
            .saturating_add(of(self.line_numbers.capacity(), size_of::<u64>()))
    }
}

/// Grows the output's vectors for a chunk fallibly, so that running out of memory while the
/// rows accumulate is an error and not an abort ("memory allocation of N bytes failed").
fn reserve_for<T>(
    out: &mut LetorData<T>,
    chunk: &Chunk,
) -> std::result::Result<(), std::collections::TryReserveError> {
    let rows = chunk.labels.len();
    out.labels.try_reserve(rows)?;
    out.qid_codes.try_reserve(chunk.qids.len())?;
    out.indptr.try_reserve(chunk.row_nnz.len())?;
    out.indices.try_reserve(chunk.indices.len())?;
    out.values.try_reserve(chunk.values.len())?;
    out.line_numbers.try_reserve(chunk.line_numbers.len())?;
    if let Some(comments) = out.comments.as_mut() {
        comments.try_reserve(chunk.comments.len())?;
    }
    Ok(())
}

fn append_chunk<T: FromF64>(
    out: &mut LetorData<T>,
    interner: &mut HashMap<Vec<u8>, u32>,
    block: &[u8],
    chunk: Chunk,
) {
    let mut last: Option<(&[u8], u32)> = None;
    for &(a, b) in &chunk.qids {
        let q = &block[a..b];
        let code = match last {
            Some((prev, code)) if prev == q => code,
            _ => {
                let next = out.qid_names.len() as u32;
                let code = *interner.entry(q.to_vec()).or_insert(next);
                if code == next {
                    out.qid_names.push(String::from_utf8_lossy(q).into_owned());
                }
                code
            }
        };
        last = Some((q, code));
        out.qid_codes.push(code);
    }
    let mut total = *out.indptr.last().unwrap_or(&0);
    for nnz in &chunk.row_nnz {
        total += *nnz as i64;
        out.indptr.push(total);
    }
    out.labels.extend_from_slice(&chunk.labels);
    out.indices.extend_from_slice(&chunk.indices);
    out.values
        .extend(chunk.values.iter().map(|&v| T::from_f64(v)));
    out.line_numbers.extend_from_slice(&chunk.line_numbers);
    out.n_features = out.n_features.max(chunk.max_index as usize);
    if let Some(comments) = out.comments.as_mut() {
        comments.extend(
            chunk
                .comments
                .iter()
                .map(|&(a, b)| String::from_utf8_lossy(&block[a..b]).into_owned()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LetorData<f64>> {
        parse_stream(
            text.as_bytes(),
            "test.txt",
            &ReadOptions {
                keep_comments: true,
                ..Default::default()
            },
        )
    }

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn reads_sparse_and_dense_rows() {
        let d = parse("2 qid:10 1:0.5 3:-1e-3 # doc A\n\n# only a comment\n0 qid:7 2:4\n1 qid:10 1:1 2:2 3:3\n").unwrap();
        assert_eq!(d.labels, vec![2.0, 0.0, 1.0]);
        assert_eq!(d.qid_names, vec!["10", "7"]);
        assert_eq!(d.qid_codes, vec![0, 1, 0]);
        assert_eq!(d.indptr, vec![0, 2, 3, 6]);
        assert_eq!(d.indices, vec![0, 2, 1, 0, 1, 2]);
        assert_eq!(d.values, vec![0.5, -1e-3, 4.0, 1.0, 2.0, 3.0]);
        assert_eq!(d.n_features, 3);
        assert_eq!(d.line_numbers, vec![1, 4, 5]);
        assert_eq!(d.comments.unwrap(), vec!["doc A", "", ""]);
    }

    #[test]
    fn sorts_unsorted_indices() {
        let d = parse("1 qid:1 3:3 1:1\n").unwrap();
        assert_eq!(d.indices, vec![0, 2]);
        assert_eq!(d.values, vec![1.0, 3.0]);
    }

    #[test]
    fn errors_name_file_line_and_field() {
        assert_eq!(
            err("1 qid:1 1:1\n0 1:2\n"),
            "test.txt:2: field 2 must be 'qid:<query id>', got '1:2'"
        );
        assert!(
            err("1 qid:1 1:abc\n").starts_with("test.txt:1: field 3 ('1:abc'): value not a number")
        );
        assert!(err("1 qid:1 1:NULL\n").contains("NULL"));
        assert!(err("1 qid:1 0:1\n").contains("indices start at 1"));
        assert!(err("1 qid:1 -2:1\n").contains("positive integer"));
        assert!(err("1 qid:1 2:1 2:3\n").contains("more than once"));
        assert!(err("1 qid:1 1000000000000:1\n").contains("largest supported index"));
        assert!(err("nan qid:1 1:1\n").contains("field 1 (the label)"));
        assert!(err("1 qid:1 1:inf\n").contains("finite"));
        assert!(err("1 qid:1 1\n").contains("'<index>:<value>'"));
        assert!(err("1\n").contains("end of the line"));
        assert_eq!(
            err(""),
            "test.txt: no data lines: the file is empty or holds only comments"
        );
        assert_eq!(
            err("# nothing\n\n"),
            "test.txt: no data lines: the file is empty or holds only comments"
        );
    }

    #[test]
    fn line_numbers_survive_block_and_piece_boundaries() {
        let mut text = String::new();
        for i in 0..20_000 {
            text.push_str(&format!("{} qid:{} 1:{}.5 2:1\n", i % 3, i / 50, i));
        }
        text.push_str("1 qid:9 1:oops\n");
        let e = err(&text);
        assert!(e.starts_with("test.txt:20001: field 3"), "{e}");
        let d = parse(&text[..text.len() - 15]).unwrap();
        assert_eq!(d.n_rows(), 20_000);
        assert_eq!(d.qid_names.len(), 400);
        assert!(d.is_dense_complete());
        assert_eq!(d.values[2 * 12345], 12345.5);
    }

    #[test]
    fn n_features_bounds_indices() {
        let opts = ReadOptions {
            n_features: Some(2),
            ..Default::default()
        };
        let e = parse_stream::<f64>("1 qid:1 3:1\n".as_bytes(), "f", &opts).unwrap_err();
        assert!(e.to_string().contains("above n_features = 2"));
        let d = parse_stream::<f64>("1 qid:1 1:1\n".as_bytes(), "f", &opts).unwrap();
        assert_eq!(d.n_features, 2);
    }

    #[test]
    fn a_stream_without_line_breaks_is_refused_not_buffered() {
        // An endless stream of 'x' (think of a binary file without a newline): the reader
        // must stop once the line exceeds the limit instead of buffering forever.
        let e = parse_stream_with_limit::<f64>(
            std::io::repeat(b'x'),
            "endless",
            &ReadOptions::default(),
            1 << 10,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("endless:1: the line is longer than 1024 bytes"),
            "{e}"
        );
        // Lines shorter than the limit are read whatever the block boundaries.
        let text = format!("1 qid:1 1:0.5{}\n0 qid:1 1:2\n", "0".repeat(3000));
        let d =
            parse_stream_with_limit::<f64>(text.as_bytes(), "f", &ReadOptions::default(), 1 << 13)
                .unwrap();
        assert_eq!(d.n_rows(), 2);
    }

    #[test]
    fn bom_and_every_line_break_convention_read_the_same() {
        let lf = "2 qid:01 1:0.5 2:1 # a\n\n0 qid:01 1:0.25 # b\n1 qid:7 2:3\n";
        let want = parse(lf).unwrap();
        let variants = [
            format!("\u{feff}{lf}"),
            lf.replace('\n', "\r\n"),
            lf.replace('\n', "\r"),
            format!("\u{feff}{}", lf.replace('\n', "\r")),
            lf.trim_end().to_string(),
        ];
        for text in &variants {
            let d = parse(text).unwrap();
            assert_eq!(d.labels, want.labels, "{text:?}");
            assert_eq!(d.qid_names, vec!["01", "7"], "{text:?}");
            assert_eq!(d.qid_codes, want.qid_codes);
            assert_eq!(d.indices, want.indices);
            assert_eq!(d.values, want.values);
            assert_eq!(d.line_numbers, vec![1, 3, 4], "{text:?}");
        }
        // The error line counts CR line breaks too.
        let e = err("1 qid:1 1:1\r1 qid:1 1:x\r");
        assert!(e.starts_with("test.txt:2: field 3"), "{e}");
        // A CRLF split across two reads is still one line break.
        let mut buf = b"a\r".to_vec();
        let mut pending = false;
        normalize_line_breaks(&mut buf, 0, &mut pending);
        assert!(pending);
        buf.extend_from_slice(b"\nb");
        normalize_line_breaks(&mut buf, 2, &mut pending);
        assert_eq!(buf, b"a\nb");
    }

    #[test]
    fn utf16_files_and_marks_inside_the_file_are_refused() {
        for bom in [&b"\xff\xfe"[..], &b"\xfe\xff"[..]] {
            let text = [bom, b"1\x00 \x00q\x00"].concat();
            let e = parse_stream::<f64>(&text[..], "f", &ReadOptions::default())
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("f:1: the file is UTF-16 text"), "{e}");
        }
        let e = err("1 qid:1 1:1\n\u{feff}0 qid:1 1:2\n");
        assert!(
            e.starts_with("test.txt:2: a UTF-8 byte order mark in the middle"),
            "{e}"
        );
    }

    #[test]
    fn nul_bytes_in_query_ids_are_refused() {
        let e = err("1 qid:1 1:1\n0 qid:1\u{0} 1:2\n");
        assert!(
            e.starts_with("test.txt:2: field 2: the query id") && e.contains("NUL"),
            "{e}"
        );
    }

    #[test]
    fn vertical_tab_and_form_feed_separate_fields() {
        let d = parse("1 qid:3\x0b1:2\x0c2:4\n").unwrap();
        assert_eq!(d.qid_names, vec!["3"]);
        assert_eq!(d.values, vec![2.0, 4.0]);
    }

    #[test]
    fn latin1_comments_are_refused_when_kept() {
        let text = &b"1 qid:1 1:1 # caf\xe9\n"[..];
        let opts = ReadOptions {
            keep_comments: true,
            ..Default::default()
        };
        let e = parse_stream::<f64>(text, "f", &opts)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("f:1: the comment is not valid UTF-8") && e.contains("0xe9"),
            "{e}"
        );
        // Not kept, the comment is not looked at.
        assert!(parse_stream::<f64>(text, "f", &ReadOptions::default()).is_ok());
    }

    #[test]
    fn query_ids_must_be_utf8() {
        let e = parse_stream::<f64>(&b"1 qid:\xff\xfe 1:1\n"[..], "f", &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("f:1: field 2: the query id"), "{e}");
        assert!(e.contains("not valid UTF-8"), "{e}");
    }

    #[test]
    fn values_beyond_float32_are_errors_when_reading_float32() {
        let text = "1 qid:1 1:1e39\n";
        let e = parse_stream::<f32>(text.as_bytes(), "f", &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("f:1: field 3 ('1:1e39'): value 1e39 is beyond the float32"),
            "{e}"
        );
        let d = parse_stream::<f64>(text.as_bytes(), "f", &ReadOptions::default()).unwrap();
        assert_eq!(d.values, vec![1e39]);
        // f32::MAX itself is fine.
        let d = parse_stream::<f32>(
            "1 qid:1 1:3.4028235e38\n".as_bytes(),
            "f",
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(d.values, vec![f32::MAX]);
    }

    #[test]
    fn missing_nan_reads_null_feature_values_as_nan() {
        let opts = ReadOptions {
            missing_nan: true,
            ..Default::default()
        };
        let d =
            parse_stream::<f32>("1 qid:1 1:0.5 2:NULL 3:null\n".as_bytes(), "f", &opts).unwrap();
        assert_eq!(d.values[0], 0.5);
        assert!(d.values[1].is_nan() && d.values[2].is_nan());
        assert!(d.is_dense_complete());
        // Labels are never missing.
        let e = parse_stream::<f64>("NULL qid:1 1:1\n".as_bytes(), "f", &opts)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("f:1: field 1 (the label)"), "{e}");
        // Without the option the message names it.
        assert!(err("1 qid:1 1:NULL\n").contains("missing=\"nan\""));
    }

    #[test]
    fn without_qid_reads_lightgbm_lines() {
        let opts = ReadOptions {
            without_qid: true,
            ..Default::default()
        };
        let d = parse_stream::<f64>("2 1:0.5 2:1\n0 2:3 # x\n1\n".as_bytes(), "f", &opts).unwrap();
        assert_eq!(d.labels, vec![2.0, 0.0, 1.0]);
        assert_eq!(d.qid_names, vec![""]);
        assert_eq!(d.qid_codes, vec![0, 0, 0]);
        assert_eq!(d.indptr, vec![0, 2, 3, 3]);
        assert_eq!(d.indices, vec![0, 1, 1]);
        assert_eq!(d.values, vec![0.5, 1.0, 3.0]);
        let e = parse_stream::<f64>("1 1:1\n0 qid:4 1:2\n".as_bytes(), "f", &opts)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("f:2: field 2 is a query id ('qid:4')"), "{e}");
    }
}
