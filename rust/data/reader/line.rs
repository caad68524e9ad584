//! One line of text into the rows of a piece (`Chunk`): the label, the query id, the
//! `index:value` fields (sorted, repeats refused) and the comment, with an error message
//! naming the field for anything else (the caller adds the file and line).

use crate::data::reader::options::{ReadOptions, MAX_FEATURE_INDEX};

/// The UTF-8 byte order mark, skipped at the start of a file and refused inside one.
pub(super) const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// Rows parsed from one piece of a block. Query ids and comments are byte ranges into the block.
#[derive(Default)]
pub(super) struct Chunk {
    pub(super) n_lines: u64,
    pub(super) labels: Vec<f64>,
    pub(super) qids: Vec<(usize, usize)>,
    pub(super) row_nnz: Vec<u32>,
    pub(super) indices: Vec<i32>,
    pub(super) values: Vec<f64>,
    pub(super) line_numbers: Vec<u64>,
    pub(super) comments: Vec<(usize, usize)>,
    pub(super) max_index: u64,
}

/// Whether a finite value stays finite in the output type (float32 overflows above 3.4e38).
pub(super) type Fits = fn(f64) -> bool;

/// ASCII whitespace as C's `isspace` and Python's `bytes.split()` see it (LF ends lines).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// Parses one line into `c`; the error is a message without the location.
pub(super) fn parse_line(
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
    let Some((_, label_tok)) = fields.next() else {
        return Ok(()); // blank or comment-only line
    };
    let label = parse_number(label_tok)
        .map_err(|why| format!("field 1 (the label) is {}: {why}", show(label_tok)))?;
    let (qid, qid_at) = query_id(&mut fields, opts)?;
    let row_start = c.indices.len();
    parse_features(&mut fields, c, opts, fits)?;
    sort_row(c, row_start)?;
    let qid_start = lo + qid_at;
    c.labels.push(label);
    c.qids.push((qid_start, qid_start + qid.len()));
    c.row_nnz.push((c.indices.len() - row_start) as u32);
    c.line_numbers.push(line_no);
    if opts.keep_comments {
        let from = (content_end + 1).min(line.len());
        c.comments.push(comment(block, lo + from, hi, lo)?);
    }
    Ok(())
}

/// The query id after the label and its offset in the line: the `qid:` field, checked; in
/// LightGBM's layout (`without_qid`) the empty id, after checking that the line has none.
fn query_id<'a>(
    fields: &mut Fields<'a>,
    opts: &ReadOptions,
) -> std::result::Result<(&'a [u8], usize), String> {
    if opts.without_qid {
        // In LightGBM's layout the second field is already a feature; it is parsed with the
        // others, so the field iterator is rewound to it.
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
        return Ok((&fields.line[..0], 0));
    }
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
    Ok((qid, qid_at + 4))
}

/// The `index:value` fields of the rest of the line, appended to `c` in the order given.
fn parse_features(
    fields: &mut Fields<'_>,
    c: &mut Chunk,
    opts: &ReadOptions,
    fits: Fits,
) -> std::result::Result<(), String> {
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
            parse_number(val_tok).map_err(|why| {
                format!(
                    "field {field_no} ({}): value {why}{}",
                    show(tok),
                    nan_hint(val_tok)
                )
            })?
        };
        if !value.is_nan() && !fits(value) {
            return Err(format!(
                "field {field_no} ({}): value {value:e} is beyond the float32 range (3.4e38); \
                 read the file as float64",
                show(tok)
            ));
        }
        c.max_index = c.max_index.max(index);
        c.indices.push((index - 1) as i32);
        c.values.push(value);
    }
    Ok(())
}

/// Sorts the row that starts at `row_start` by feature index (files may list them in any
/// order) and refuses an index given twice.
fn sort_row(c: &mut Chunk, row_start: usize) -> std::result::Result<(), String> {
    if c.indices[row_start..].windows(2).all(|w| w[0] < w[1]) {
        return Ok(());
    }
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
    Ok(())
}

/// The comment `block[a..b]` (after '#') without its surrounding whitespace, as a byte range;
/// `lo` is where the line starts, for the column of an invalid byte.
fn comment(
    block: &[u8],
    mut a: usize,
    mut b: usize,
    lo: usize,
) -> std::result::Result<(usize, usize), String> {
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
    Ok((a, b))
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

/// What to do about a feature value written as NaN ("nan", "NaN"), said after the refusal:
/// `missing="nan"` reads the token NULL (LETOR's missing value) as NaN, and a user who gave it
/// for a file of "nan" tokens would otherwise be left to guess why the option did not apply.
fn nan_hint(tok: &[u8]) -> &'static str {
    let is_nan = std::str::from_utf8(tok)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .is_some_and(f64::is_nan);
    if is_nan {
        "; a missing value is written NULL, and missing=\"nan\" (--missing nan on the command \
         line) reads that token as NaN, not the token nan: write NULL for the missing values \
         (index:NULL), or leave the feature out of the line to read it as 0"
    } else {
        ""
    }
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
