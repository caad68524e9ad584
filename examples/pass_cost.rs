//! Wall-clock cost of the parts of one oracle pass (loss map), each against one read of X in
//! the same run, on the threads of the global rayon pool (RAYON_NUM_THREADS).
//!
//!     pass_cost PREFIX N_FEATURES [REPEATS]
//!
//! reads PREFIX.x (float32 rows, C order), PREFIX.y (float64 labels) and PREFIX.q (int64
//! query codes 0..n_queries), as `benchmarks/instructions.py` and `benchmarks/scale.py` write
//! them, and PREFIX.w (float64 weights) when it exists (otherwise a fixed w). Each stage below
//! is timed as a whole pass over the queries, best of REPEATS (default 5), and each adds one
//! step to the one before, so that the differences are what the step costs:
//!
//! - `read`: every value of X summed, in the blocks of queries a pass takes (the floor of
//!   any method that reads X once);
//! - `score`: X w row by row (`row_dot`, as the pass scores);
//! - `sort`: and each query's two classes sorted (`Sorted::fill`);
//! - `oracle`: and the MAP oracle on each usable query (`argmax_sorted`);
//! - `pass`: `RankingProblem::cut_sums` itself, which also adds X^T c into the cut.
//!
//! It prints the times, their ratios to `read` and the cost per document of each step, then
//! the same as one JSON object on the last line.
use rayon::prelude::*;
use std::ops::Range;
use std::time::Instant;
use svmmap::data::{DenseView, QueryGroups, RowMatrix};
use svmmap::oracle::{from_name, Oracle, Sorted};
use svmmap::solver::RankingProblem;

fn read<T>(path: &str, width: usize, parse: impl Fn(&[u8]) -> T) -> Vec<T> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(
        bytes.len() % width,
        0,
        "{path}: not a whole number of values"
    );
    bytes.chunks_exact(width).map(parse).collect()
}

/// The shortest of `repeats` runs of `f`, in seconds. What `f` returns is summed and printed
/// so that the work cannot be optimized away.
fn best(repeats: usize, mut f: impl FnMut() -> f64) -> f64 {
    let (mut t, mut sink) = (f64::INFINITY, 0.0);
    for _ in 0..repeats {
        let start = Instant::now();
        sink += f();
        t = t.min(start.elapsed().as_secs_f64());
    }
    eprintln!("(checksum {sink})");
    t
}

/// Runs `per_query` on every query of every block in parallel and sums what it returns.
fn over_queries<S: Default + Send>(
    blocks: &[Range<usize>],
    per_query: impl Fn(&mut S, usize) -> f64 + Sync,
) -> f64 {
    blocks
        .par_iter()
        .map(|queries| {
            let mut state = S::default();
            queries
                .clone()
                .map(|q| per_query(&mut state, q))
                .sum::<f64>()
        })
        .sum()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: pass_cost PREFIX N_FEATURES [REPEATS]");
        std::process::exit(2);
    }
    let prefix = &args[1];
    let n_features: usize = args[2].parse().expect("N_FEATURES is a number");
    let repeats: usize = args
        .get(3)
        .map_or(5, |r| r.parse().expect("REPEATS is a number"));
    let x = read(&format!("{prefix}.x"), 4, |b| {
        f32::from_le_bytes(b.try_into().expect("4 bytes"))
    });
    let labels = read(&format!("{prefix}.y"), 8, |b| {
        f64::from_le_bytes(b.try_into().expect("8 bytes"))
    });
    let codes = read(&format!("{prefix}.q"), 8, |b| {
        i64::from_le_bytes(b.try_into().expect("8 bytes"))
    });
    let w: Vec<f64> = if std::path::Path::new(&format!("{prefix}.w")).exists() {
        read(&format!("{prefix}.w"), 8, |b| {
            f64::from_le_bytes(b.try_into().expect("8 bytes"))
        })
    } else {
        (0..n_features)
            .map(|j| ((j * 7919) % 13) as f64 / 13.0 - 0.4)
            .collect()
    };
    assert_eq!(w.len(), n_features, "PREFIX.w has one weight per feature");
    let n_queries = codes.iter().max().map_or(0, |&m| m as usize + 1);
    let view = DenseView::new(&x, labels.len(), n_features).expect("a valid matrix");
    let groups = QueryGroups::from_codes(&codes, n_queries).expect("valid query codes");
    let relevant: Vec<bool> = groups.order.iter().map(|&r| labels[r] > 0.0).collect();
    let grouped_labels: Vec<f64> = groups.order.iter().map(|&r| labels[r]).collect();
    let blocks: Vec<Range<usize>> = (0..n_queries)
        .step_by(32)
        .map(|q| q..(q + 32).min(n_queries))
        .collect();
    let score = |scores: &mut Vec<f64>, q: usize| {
        scores.clear();
        scores.extend(groups.rows(q).iter().map(|&r| view.row_dot(r, &w)));
    };

    let t_read = best(repeats, || {
        over_queries(&blocks, |acc: &mut [f32; 16], q| {
            // Sixteen lanes of sums, so that the additions keep up with memory.
            for &r in groups.rows(q) {
                for values in view.row(r).chunks_exact(16) {
                    for (a, v) in acc.iter_mut().zip(values) {
                        *a += v;
                    }
                }
            }
            acc.iter().map(|&v| v as f64).sum::<f64>() * 1e-30
        })
    });
    let t_score = best(repeats, || {
        over_queries(&blocks, |scores: &mut Vec<f64>, q| {
            score(scores, q);
            scores.iter().sum()
        })
    });
    let t_sort = best(repeats, || {
        over_queries(&blocks, |(scores, sorted): &mut (Vec<f64>, Sorted), q| {
            score(scores, q);
            sorted.fill(scores, &relevant[groups.bounds[q]..groups.bounds[q + 1]]);
            sorted.sp.first().copied().unwrap_or(0.0)
        })
    });
    let map = from_name("map").expect("the map loss");
    type OracleState = (Vec<f64>, Sorted, Vec<f64>);
    let t_oracle = best(repeats, || {
        over_queries(&blocks, |(scores, sorted, coef): &mut OracleState, q| {
            let span = groups.bounds[q]..groups.bounds[q + 1];
            let rel = &relevant[span.clone()];
            score(scores, q);
            sorted.fill(scores, rel);
            if sorted.p() == 0 || sorted.n() == 0 {
                return 0.0;
            }
            coef.clear();
            coef.resize(scores.len(), 0.0);
            map.argmax_sorted(sorted, scores, &grouped_labels[span], rel, coef) + coef[0]
        })
    });
    let oracles: Vec<&dyn Oracle> = vec![map.as_ref()];
    let problem = RankingProblem::new(&view, &labels, &groups, 0.0).expect("a valid problem");
    let t_pass = best(repeats, || problem.cut_sums(&w, &oracles)[0].0);

    let n = labels.len() as f64;
    let ns = |t: f64| 1e9 * t / n;
    let threads = rayon::current_num_threads();
    println!(
        "{threads} threads, {} documents x {n_features} features, {n_queries} queries",
        labels.len()
    );
    println!("| stage | ms | / read | step's ns per document |");
    println!("|---|---:|---:|---:|");
    let mut before = 0.0;
    for (name, t) in [
        ("read", t_read),
        ("score", t_score),
        ("sort", t_sort),
        ("oracle", t_oracle),
        ("pass", t_pass),
    ] {
        println!(
            "| {name} | {:.1} | {:.2} | {:.1} |",
            1e3 * t,
            t / t_read,
            ns(t - before)
        );
        before = if name == "read" { 0.0 } else { t };
    }
    println!(
        "{{\"threads\": {threads}, \"documents\": {}, \"read\": {t_read}, \"score\": {t_score}, \
         \"sort\": {t_sort}, \"oracle\": {t_oracle}, \"pass\": {t_pass}}}",
        labels.len()
    );
}
