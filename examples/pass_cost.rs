//! Wall-clock cost of the parts of one oracle pass on data written by
//! `benchmarks/instructions.py` (PREFIX.x float32 rows, PREFIX.y labels, PREFIX.q query codes),
//! each against one read of X in the same run, on the threads of the global rayon pool
//! (RAYON_NUM_THREADS).
//!
//!     pass_cost PREFIX N_FEATURES [REPEATS]
//!
//! It prints, best of REPEATS each: `read` (the sum of every value of X, in blocks of queries
//! as the pass takes them, the floor of any pass), then in units of that read: `score` (X w
//! row by row), `score+sort` (and each query's two classes sorted, `Sorted::fill`), `pass`
//! (`RankingProblem::cut_sums` with loss map: scores, sort, oracle and accumulation). The
//! differences are what sorting, and the oracle with the accumulation, add to a pass.
use rayon::prelude::*;
use std::time::Instant;
use svmmap::data::{DenseView, QueryGroups, RowMatrix};
use svmmap::oracle::{from_name, Oracle, Sorted};
use svmmap::solver::RankingProblem;

fn read<T>(path: &str, width: usize, parse: impl Fn(&[u8]) -> T) -> Vec<T> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    bytes.chunks_exact(width).map(parse).collect()
}

fn best(repeats: usize, mut f: impl FnMut() -> f64) -> (f64, f64) {
    let mut t = f64::INFINITY;
    let mut sink = 0.0;
    for _ in 0..repeats {
        let start = Instant::now();
        sink += f();
        t = t.min(start.elapsed().as_secs_f64());
    }
    (t, sink)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let prefix = &args[1];
    let n_features: usize = args[2].parse().expect("N_FEATURES");
    let repeats: usize = args.get(3).map_or(5, |r| r.parse().expect("REPEATS"));
    let x = read(&format!("{prefix}.x"), 4, |b| {
        f32::from_le_bytes(b.try_into().unwrap())
    });
    let labels = read(&format!("{prefix}.y"), 8, |b| {
        f64::from_le_bytes(b.try_into().unwrap())
    });
    let codes = read(&format!("{prefix}.q"), 8, |b| {
        i64::from_le_bytes(b.try_into().unwrap())
    });
    let n_queries = codes.iter().max().map_or(0, |&m| m as usize + 1);
    let view = DenseView::new(&x, labels.len(), n_features).unwrap();
    let groups = QueryGroups::from_codes(&codes, n_queries).unwrap();
    let relevant: Vec<bool> = groups.order.iter().map(|&r| labels[r] > 0.0).collect();
    let w: Vec<f64> = (0..n_features)
        .map(|j| ((j * 7919) % 13) as f64 / 13.0 - 0.4)
        .collect();
    let chunks: Vec<std::ops::Range<usize>> = (0..n_queries)
        .step_by(32)
        .map(|q| q..(q + 32).min(n_queries))
        .collect();
    let (t_read, _) = best(repeats, || {
        chunks
            .par_iter()
            .map(|qs| {
                let mut acc = [0.0f32; 16];
                for q in qs.clone() {
                    for &r in groups.rows(q) {
                        for c in view.row(r).chunks_exact(16) {
                            for j in 0..16 {
                                acc[j] += c[j];
                            }
                        }
                    }
                }
                acc.iter().map(|&v| v as f64).sum::<f64>()
            })
            .sum()
    });
    let (t_score, _) = best(repeats, || {
        chunks
            .par_iter()
            .map(|qs| {
                let mut scores = Vec::new();
                for q in qs.clone() {
                    scores.extend(groups.rows(q).iter().map(|&r| view.row_dot(r, &w)));
                }
                scores.iter().sum::<f64>()
            })
            .sum()
    });
    let (t_sort, _) = best(repeats, || {
        chunks
            .par_iter()
            .map(|qs| {
                let mut sorted = Sorted::default();
                let mut scores = Vec::new();
                let mut s = 0.0;
                for q in qs.clone() {
                    scores.clear();
                    scores.extend(groups.rows(q).iter().map(|&r| view.row_dot(r, &w)));
                    let span = groups.bounds[q]..groups.bounds[q + 1];
                    sorted.fill(&scores, &relevant[span]);
                    s += sorted.sp.first().copied().unwrap_or(0.0);
                }
                s
            })
            .sum()
    });
    let map = from_name("map").unwrap();
    let oracles: Vec<&dyn Oracle> = vec![map.as_ref()];
    let problem = RankingProblem::new(&view, &labels, &groups, 0.0).unwrap();
    let (t_pass, _) = best(repeats, || problem.cut_sums(&w, &oracles)[0].0);
    println!(
        "threads {} rows {} read {:.4} s | score {:.2} | score+sort {:.2} | pass {:.2} reads",
        rayon::current_num_threads(),
        labels.len(),
        t_read,
        t_score / t_read,
        t_sort / t_read,
        t_pass / t_read
    );
}
