//! Opening a file: the memory it will take checked up front, gzip detected by its magic bytes.

use std::io::Read;

use crate::data::reader::blocks::parse_stream;
use crate::data::reader::options::{FromF64, LetorData, ReadOptions};
use crate::error::{Error, Result};

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
