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

/// A property check on input bytes, as a fuzz target runs it.
type Check = fn(&[u8]);

/// The property check each cargo-fuzz target in `fuzz/fuzz_targets/` runs.
const FUZZ_TARGETS: &[(&str, Check)] = &[
    ("reader", check_reader),
    ("oracle", check_oracle),
    ("solver", check_solver),
];

/// Every file below `dir`, in a fixed order.
fn files_below(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn fuzz_regressions_replay() {
    // Inputs a fuzzer once crashed on are kept in fuzz/regressions/<target>/ (any depth); each
    // goes through the check its target runs, so that a fixed crash stays fixed. The files are
    // listed at run time: a new one is picked up without touching this test.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    for target in files_below(&root.join("fuzz_targets")) {
        let name = target.file_stem().unwrap().to_string_lossy().into_owned();
        assert!(
            FUZZ_TARGETS.iter().any(|(t, _)| *t == name),
            "fuzz target {name} has no entry in FUZZ_TARGETS"
        );
    }
    let regressions = root.join("regressions");
    let mut dirs: Vec<_> = std::fs::read_dir(&regressions)
        .unwrap_or_else(|e| panic!("{}: {e}", regressions.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    dirs.sort();
    assert!(
        !dirs.is_empty(),
        "no target directory in {}",
        regressions.display()
    );
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy();
        assert!(
            dir.is_dir(),
            "{}: expected a directory named after a fuzz target",
            dir.display()
        );
        let check = FUZZ_TARGETS
            .iter()
            .find(|(t, _)| *t == name)
            .unwrap_or_else(|| panic!("{}: no fuzz target of that name", dir.display()))
            .1;
        let files = files_below(dir);
        assert!(!files.is_empty(), "{}: no regression file", dir.display());
        for file in files {
            let data = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            // Every file is replayed and every failure reported, not just the first.
            if let Err(payload) = std::panic::catch_unwind(|| check(&data)) {
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("{}: {message}", file.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "fuzz regressions fail:\n{}",
        failures.join("\n")
    );
}
