//! The rows of the parsed pieces appended to the output, growing its vectors fallibly so that
//! a file too large for memory is an error and not an abort.

use std::collections::HashMap;

use crate::data::reader::line::Chunk;
use crate::data::reader::options::{FromF64, LetorData};
use crate::error::Error;

/// The error of an allocation of the reader that failed.
pub(super) fn out_of_memory(path: &str, what: &str) -> Error {
    Error::Memory(format!(
        "reading {path}: no memory is left for {what} (the file is too large for the memory \
         available); read a smaller file, or free memory"
    ))
}

impl<T> LetorData<T> {
    /// Bytes held by the vectors that grow with every row.
    pub(super) fn heap_bytes(&self) -> u64 {
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
pub(super) fn reserve_for<T>(
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

pub(super) fn append_chunk<T: FromF64>(
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
