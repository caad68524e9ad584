//! The tests of options.rs: the table's defaults and checks, and the generated setters.

use super::*;

#[test]
fn the_table_defaults_are_the_options_defaults_and_pass_the_checks() {
    let o = Options::default();
    assert!(o.validate().is_ok());
    assert_eq!(parameter("C").map(|p| p.default), Some(Value::Float(o.c)));
    assert_eq!(
        parameter("eps").map(|p| p.default),
        Some(Value::Float(o.eps))
    );
    assert_eq!(
        parameter("max_iter").map(|p| p.default),
        Some(Value::Int(o.max_iter))
    );
    // None in the table is the core's choice of one block.
    assert_eq!(o.n_blocks, 1);
}

/// A parameter's name and a change of the default options that its check refuses.
type Spoiled = (&'static str, fn(&mut Options));

#[test]
fn every_check_speaks_in_the_table_words() {
    let cases: [Spoiled; 5] = [
        ("C", |o| o.c = 0.0),
        ("eps", |o| o.eps = f64::NAN),
        ("max_iter", |o| o.max_iter = 0),
        ("relevance_threshold", |o| {
            o.relevance_threshold = f64::INFINITY
        }),
        ("cut_blocks", |o| o.n_blocks = 0),
    ];
    for (name, spoil) in cases {
        let mut o = Options::default();
        spoil(&mut o);
        match o.validate() {
            Err(Error::InvalidParameter {
                name: n, expected, ..
            }) => {
                assert_eq!(n, name);
                assert_eq!(expected, super::expected(name));
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn one_cut_only_refuses_more_blocks() {
    let mut o = Options::default();
    assert!(o.one_cut_only("by X", "None").is_none());
    o.n_blocks = 3;
    let e = o.one_cut_only("by X", "None").map(|e| e.to_string());
    assert_eq!(
        e.as_deref(),
        Some("cut_blocks=3 is not supported by X; leave cut_blocks=None")
    );
}

#[test]
fn the_generated_setters_take_the_kinds_of_their_parameters() {
    for p in PARAMETERS {
        let mut o = Options::default();
        let optional = matches!(p.kind, Kind::OptionalCount | Kind::OptionalReal);
        // None is accepted exactly by the optional parameters that the solver holds (n_jobs,
        // also None by default, is the binding's).
        assert_eq!(o.set_none(p.name), optional, "{}", p.name);
        let real = matches!(p.kind, Kind::Real | Kind::OptionalReal);
        assert_eq!(o.set_float(p.name, 2.5), real, "{}", p.name);
        let count = matches!(p.kind, Kind::Count | Kind::OptionalCount);
        assert_eq!(o.set_count(p.name, 3), count, "{}", p.name);
    }
    let mut o = Options::default();
    assert!(o.set_float("max_time", 2.5) && o.set_count("cut_blocks", 3));
    assert_eq!((o.max_seconds, o.n_blocks), (2.5, 3));
    assert!(o.set_none("max_time") && o.set_none("cut_blocks") && o.set_none("n_iter_no_change"));
    // The doc lines' None: no time limit, one block, no stall rule.
    assert_eq!(
        (o.max_seconds, o.n_blocks, o.stall_window),
        (f64::INFINITY, 1, 0)
    );
}

#[test]
fn a_field_knows_its_parameter_name() {
    assert_eq!(name_of::c, "C");
    assert_eq!(name_of::max_seconds, "max_time");
    assert_eq!(name_of::n_blocks, "cut_blocks");
    assert_eq!(
        crate::solver::StopReason::MaxTime.name(),
        "max_time",
        "the time limit's stop is named after its parameter"
    );
}

#[test]
fn a_time_limit_must_be_positive() {
    for bad in [0.0, -1.0, f64::NAN] {
        let o = Options {
            max_seconds: bad,
            ..Default::default()
        };
        assert!(matches!(
            o.validate(),
            Err(Error::InvalidParameter { ref name, .. }) if name == "max_time"
        ));
    }
}
