//! One fit of the numeric core on data written by `benchmarks/instructions.py`, on one thread,
//! for counting its instructions under Valgrind (wall-clock times on shared machines vary by
//! tens of percent from run to run; instruction and branch-miss counts do not).
//!
//!     fit_cost PREFIX N_FEATURES LOSSES [setup]
//!
//! reads PREFIX.x (float32 rows, C order), PREFIX.y (float64 labels) and PREFIX.q (int64 query
//! codes 0..n_queries), and trains with `loss` = LOSSES (comma-separated, separate slacks),
//! C = 1, eps = 1e-3 and the default solver. With `setup` it stops after reading the data and
//! building the problem, so that the difference of the two counts is the fit's own. It prints
//! the iterations and oracle passes.

use svmmap::data::{DenseView, QueryGroups};
use svmmap::oracle::{from_name, Oracle};
use svmmap::solver::{train, Control, Options, RankingProblem};

fn read<T>(path: &str, width: usize, parse: impl Fn(&[u8]) -> T) -> Vec<T> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(
        bytes.len() % width,
        0,
        "{path}: not a whole number of values"
    );
    bytes.chunks_exact(width).map(parse).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: fit_cost PREFIX N_FEATURES LOSSES [setup]");
        std::process::exit(2);
    }
    let (prefix, losses) = (&args[1], &args[3]);
    let n_features: usize = args[2].parse().expect("N_FEATURES is a number");
    let x = read(&format!("{prefix}.x"), 4, |b| {
        f32::from_le_bytes(b.try_into().expect("4 bytes"))
    });
    let labels = read(&format!("{prefix}.y"), 8, |b| {
        f64::from_le_bytes(b.try_into().expect("8 bytes"))
    });
    let codes = read(&format!("{prefix}.q"), 8, |b| {
        i64::from_le_bytes(b.try_into().expect("8 bytes"))
    });
    let n_queries = codes.iter().max().map_or(0, |&m| m as usize + 1);
    let view = DenseView::new(&x, labels.len(), n_features).expect("a valid matrix");
    let groups = QueryGroups::from_codes(&codes, n_queries).expect("valid query codes");
    let owned: Vec<_> = losses
        .split(',')
        .map(|name| from_name(name).expect("a known loss"))
        .collect();
    let oracles: Vec<&dyn Oracle> = owned.iter().map(|o| o.as_ref()).collect();
    if args.get(4).map(String::as_str) == Some("setup") {
        let problem = RankingProblem::new(&view, &labels, &groups, 0.0).expect("a valid problem");
        println!("usable queries {}", problem.counts.usable);
        return;
    }
    let opts = Options {
        c: 1.0,
        eps: 1e-3,
        ..Default::default()
    }
    .checked()
    .expect("the options are valid");
    let (_, summary) = train(&view, &labels, &groups, &oracles, &opts, &mut |_, _| {
        Ok(Control::Continue)
    })
    .expect("the fit runs");
    println!(
        "iterations {} passes {} stop {:?}",
        summary.n_iter, summary.n_evals, summary.stop
    );
}
