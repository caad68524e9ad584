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
//! The reader is split by job, each file importing the ones below it and never this one:
//! `options` (what a read takes and gives), `line` (one line's fields into rows of a piece),
//! `rows` (pieces appended to the output, fallibly), `file` (opening a file: the one opener of
//! every text file svmmap reads, with its memory check, gzip and byte order marks) and
//! `blocks` (a file's text in blocks of whole lines, their line breaks, the pieces parsed in
//! parallel).

mod blocks;
mod file;
mod line;
mod options;
mod rows;
#[cfg(test)]
mod tests;

pub use blocks::read_letor;
pub use blocks::{parse_stream, MAX_LINE_BYTES};
pub use file::{open_text, read_error, read_text, TextFile};
pub use options::{FromF64, LetorData, ReadOptions, MAX_FEATURE_INDEX};
