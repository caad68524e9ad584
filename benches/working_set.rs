//! Criterion bench of the working-set QP against one oracle pass (issue 15, item 2).
//!
//! The data has the shape of the SVM-combo case of `benchmarks/solver.py`: 400 queries of 100
//! documents with 30 features (40,000 rows, float64) and three slack groups (map, ndcg@10,
//! mrr@10). "oracle pass" is one `RankingProblem::cut_sums` with the three oracles, what an
//! iteration of the cutting plane costs at least. "qp/<m> cuts" is what the solver does after
//! that pass with a working set of m cuts, once the three new cuts are added: re-solve the
//! dual with the active-set method, warm-started from the previous optimum. The
//! m cuts are taken at m/3 points scattered around a reference w at several distances, as a
//! long run collects them; the QP time per iteration should stay a small fraction of the pass.
//!
//! `cargo bench --bench working_set` takes about a minute.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use svmmap::data::{DenseView, QueryGroups};
use svmmap::oracle::{from_name, Oracle};
use svmmap::solver::qp::{Cut, WorkingSet};
use svmmap::solver::RankingProblem;

const QUERIES: usize = 400;
const DOCS: usize = 100;
const FEATURES: usize = 30;
const CUT_COUNTS: [usize; 3] = [100, 300, 1_000];

/// Rows of Gaussian features whose label (0 to 2) follows a hidden linear score plus noise.
fn data() -> (Vec<f64>, Vec<f64>, Vec<i64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let truth: Vec<f64> = (0..FEATURES).map(|_| rng.random_range(-1.0..1.0)).collect();
    let n = QUERIES * DOCS;
    let mut x = Vec::with_capacity(n * FEATURES);
    let mut labels = Vec::with_capacity(n);
    let mut codes = Vec::with_capacity(n);
    for r in 0..n {
        let row: Vec<f64> = (0..FEATURES).map(|_| rng.random_range(-1.0..1.0)).collect();
        let score: f64 =
            row.iter().zip(&truth).map(|(a, b)| a * b).sum::<f64>() + rng.random_range(-1.0..1.0);
        labels.push(if score > 1.5 {
            2.0
        } else if score > 0.8 {
            1.0
        } else {
            0.0
        });
        x.extend(row);
        codes.push((r / DOCS) as i64);
    }
    (x, labels, codes, truth)
}

fn bench(c: &mut Criterion) {
    let (x, labels, codes, truth) = data();
    let view = DenseView::new(&x, labels.len(), FEATURES).unwrap();
    let groups = QueryGroups::from_codes(&codes, QUERIES).unwrap();
    let problem = RankingProblem::new(&view, &labels, &groups, 0.0).unwrap();
    let owned: Vec<_> = ["map", "ndcg@10", "mrr@10"]
        .iter()
        .map(|l| from_name(l).unwrap())
        .collect();
    let oracles: Vec<&dyn Oracle> = owned.iter().map(|o| o.as_ref()).collect();
    let inv_n = 1.0 / problem.counts.usable as f64;
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    // The cuts of the three groups at a point w_ref + r u, u random, r from 1e-3 to 1.
    let cuts_near = |rng: &mut ChaCha8Rng| -> Vec<Cut> {
        let radius = 10f64.powf(rng.random_range(-3.0..0.0));
        let w: Vec<f64> = truth
            .iter()
            .map(|t| 0.1 * t + radius * rng.random_range(-1.0..1.0))
            .collect();
        problem
            .cut_sums(&w, &oracles)
            .into_iter()
            .enumerate()
            .map(|(group, (b, g))| Cut {
                g: g.iter().map(|v| v * inv_n).collect(),
                b: b * inv_n,
                group,
            })
            .collect()
    };

    let mut group = c.benchmark_group("working_set");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    let w: Vec<f64> = truth.iter().map(|t| 0.1 * t).collect();
    group.bench_function("oracle pass", |b| {
        b.iter(|| black_box(problem.cut_sums(black_box(&w), &oracles)))
    });
    let mut ws = WorkingSet::new(FEATURES, vec![1.0; 3]);
    for &m in &CUT_COUNTS {
        while ws.len() < m {
            for cut in cuts_near(&mut rng) {
                ws.add(cut);
            }
            ws.solve_active_set(1e-12, 10 * ws.len() + 100);
        }
        let next = cuts_near(&mut rng);
        group.bench_with_input(BenchmarkId::new("qp", format!("{m} cuts")), &m, |b, _| {
            // Only the solve is timed, as the solver's `qp_seconds` counts it: not the copy
            // of the working set made for each sample (whose rows, copied at their exact
            // length, would all be reallocated by `add`), the addition nor the release.
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let mut ws = ws.clone();
                    for cut in next.iter().cloned() {
                        ws.add(cut);
                    }
                    let start = Instant::now();
                    black_box(ws.solve_active_set(1e-12, 10 * ws.len() + 100));
                    total += start.elapsed();
                    drop(ws);
                }
                total
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
