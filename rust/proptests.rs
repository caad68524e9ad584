//! The fuzzing properties (`fuzzing.rs`) under proptest, so that `cargo test` runs a short
//! version of every fuzz target. `PROPTEST_CASES=100000 cargo test --lib proptests` runs a
//! long one; the cargo-fuzz targets in `fuzz/` explore further with coverage guidance.

use proptest::prelude::*;

use crate::fuzzing::{check_oracle, check_reader, check_solver, losses};

/// Pieces of LETOR lines, valid and broken, so that generated files reach deep into the
/// parser instead of failing on the first byte.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("qid:".to_string()),
        (0u32..4).prop_map(|q| format!("qid:{q}")),
        (1u64..6, -3i32..4).prop_map(|(i, v)| format!("{i}:{v}")),
        (1u64..4).prop_map(|i| format!("{i}:0.5e-3")),
        Just("0:1".to_string()),
        Just("-2:1".to_string()),
        Just("4294967296:1".to_string()),
        Just("1000000000000:1".to_string()),
        Just("1:NULL".to_string()),
        Just("2:nan".to_string()),
        Just("3:inf".to_string()),
        Just("1:1e39".to_string()),
        Just("1:1e400".to_string()),
        Just("2:".to_string()),
        Just(":3".to_string()),
        Just("#".to_string()),
        Just("# docid = X".to_string()),
        (-1i32..3).prop_map(|l| l.to_string()),
        Just("\t".to_string()),
        Just("\r".to_string()),
        Just("\u{00e9}".to_string()),
        "[ -~]{0,6}",
    ]
}

fn letor_text() -> impl Strategy<Value = Vec<u8>> {
    let line = prop::collection::vec(token(), 0..8).prop_map(|t| t.join(" "));
    (any::<u8>(), prop::collection::vec(line, 0..12)).prop_map(|(flags, lines)| {
        let mut bytes = vec![flags];
        bytes.extend_from_slice(lines.join("\n").as_bytes());
        bytes
    })
}

/// Cases per property: `PROPTEST_CASES` when set, else a default sized for a quick
/// `cargo test` (the solver cases take the longest).
fn cases(default: u32) -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig::with_cases(n)
}

proptest! {
    #![proptest_config(cases(300))]

    #[test]
    fn reader_on_letor_like_text(data in letor_text()) {
        check_reader(&data);
    }

    #[test]
    fn reader_on_arbitrary_bytes(data in prop::collection::vec(any::<u8>(), 0..200)) {
        check_reader(&data);
    }
}

proptest! {
    #![proptest_config(cases(2000))]

    #[test]
    fn oracles_on_small_queries(data in prop::collection::vec(any::<u8>(), 0..120)) {
        check_oracle(&data);
    }
}

proptest! {
    #![proptest_config(cases(40))]

    #[test]
    fn solver_on_tiny_problems(data in prop::collection::vec(any::<u8>(), 0..160)) {
        check_solver(&data);
    }
}

#[test]
fn every_loss_of_this_build_is_probed() {
    // MAP is on main from the start; the other candidates join when `from_name` learns them.
    let names: Vec<&str> = losses().iter().map(|(n, _)| *n).collect();
    assert!(
        names.contains(&"map") && names.contains(&"map-greedy"),
        "{names:?}"
    );
}
