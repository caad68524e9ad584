//! The reader's tests, most through `parse_stream` (the entry point of every read), so that
//! every job (blocks, line breaks, fields, rows) is checked as users meet it.

use super::blocks::{normalize_line_breaks, parse_stream_with_limit};
use super::*;
use crate::error::Result;

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
    let d = parse(
        "2 qid:10 1:0.5 3:-1e-3 # doc A\n\n# only a comment\n0 qid:7 2:4\n1 qid:10 1:1 2:2 3:3\n",
    )
    .unwrap();
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
    assert!(err("1 qid:1 1:abc\n").starts_with("test.txt:1: field 3 ('1:abc'): value not a number"));
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
    let d = parse_stream_with_limit::<f64>(text.as_bytes(), "f", &ReadOptions::default(), 1 << 13)
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
    let d = parse_stream::<f32>("1 qid:1 1:0.5 2:NULL 3:null\n".as_bytes(), "f", &opts).unwrap();
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
    // A feature value written nan is refused with or without the option, and the message says
    // that the option reads NULL, not nan: the user gave missing="nan" for this very file.
    let e = parse_stream::<f64>("1 qid:1 1:nan 2:0.5\n".as_bytes(), "f", &opts)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("f:1: field 3 ('1:nan')"), "{e}");
    assert!(
        e.contains("reads that token as NaN, not the token nan"),
        "{e}"
    );
    assert!(err("1 qid:1 1:NaN\n").contains("write NULL"));
    // A label or an infinite value gets no word on NULL.
    assert!(!err("nan qid:1 1:1\n").contains("NULL"));
    assert!(!err("1 qid:1 1:inf\n").contains("NULL"));
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
