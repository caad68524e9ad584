//! Criterion benches of the loss-augmented oracles, one query at a time.
//!
//! Every oracle runs on queries of 10 to 100,000 documents with 1%, 10% and 50% relevant
//! documents (at least one of each class), against the baseline "sort": ordering the query's
//! documents by descending score, the least any ranking oracle has to do. A second group pits
//! the two exact MAP oracles against each other over the number of relevant documents to find
//! the crossover that `MapAlgorithm::Auto` uses. A third times the losses that read graded
//! labels on queries with 3 and 5 grades.
//!
//! `cargo bench --bench oracles` takes a few minutes; `python benchmarks/oracle_table.py` turns
//! target/criterion into the README's tables (ratios to "sort" measured in the same run).
//! Algorithm 2 is skipped where |P| |N| > 1e8 (seconds per call) and "dorm" without a depth
//! (O(n^3)) beyond 100 documents.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use svmmap::oracle::{check_query_labels, from_name};

const SIZES: [usize; 5] = [10, 100, 1_000, 10_000, 100_000];
const FRACTIONS: [f64; 3] = [0.01, 0.1, 0.5];
/// The names timed: every loss's bench names from the registry, and one shared-slack combination.
fn oracle_names() -> Vec<String> {
    let mut names: Vec<String> = svmmap::oracle::registry::LOSSES
        .iter()
        .flat_map(|info| info.bench.iter().map(|s| s.to_string()))
        .collect();
    names.push("max(map,ndcg@10,mrr@10)".to_string());
    names
}

/// Scores of a half-trained model: relevant documents score higher on average, with overlap.
fn query(n: usize, n_relevant: usize, seed: u64) -> (Vec<f64>, Vec<bool>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut relevant = vec![false; n];
    let mut placed = 0;
    while placed < n_relevant {
        let i = rng.random_range(0..n);
        if !relevant[i] {
            relevant[i] = true;
            placed += 1;
        }
    }
    let scores = relevant
        .iter()
        .map(|&r| {
            let noise: f64 = (0..4).map(|_| rng.random_range(-0.5..0.5)).sum();
            noise + if r { 0.7 } else { 0.0 }
        })
        .collect();
    (scores, relevant)
}

/// The baseline: document indices by descending score (ties by index), as the oracles sort.
fn sort_by_score(scores: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_unstable_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order
}

fn n_relevant(n: usize, fraction: f64) -> usize {
    ((n as f64 * fraction).round() as usize).clamp(1, n - 1)
}

fn oracles(c: &mut Criterion) {
    let mut group = c.benchmark_group("oracle");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(700));
    for &n in &SIZES {
        for &fraction in &FRACTIONS {
            let p = n_relevant(n, fraction);
            let (scores, relevant) = query(n, p, n as u64 * 1000 + p as u64);
            let param = format!("n={n}/rel={fraction}");
            group.throughput(Throughput::Elements(n as u64));
            group.bench_with_input(BenchmarkId::new("sort", &param), &scores, |b, s| {
                b.iter(|| sort_by_score(black_box(s)))
            });
            for name in oracle_names() {
                let name = name.as_str();
                if name == "map-greedy" && (p * (n - p)) as f64 > 1e8 {
                    continue;
                }
                let oracle = from_name(name).expect("a known loss");
                let mut coef = vec![0.0; n];
                group.bench_function(BenchmarkId::new(name, &param), |b| {
                    b.iter(|| oracle.argmax(black_box(&scores), black_box(&relevant), &mut coef))
                });
            }
            if n <= 100 {
                let oracle = from_name("dorm").expect("a known loss");
                let mut coef = vec![0.0; n];
                group.bench_function(BenchmarkId::new("dorm", &param), |b| {
                    b.iter(|| oracle.argmax(black_box(&scores), black_box(&relevant), &mut coef))
                });
            }
        }
    }
    group.finish();
}

fn map_crossover(c: &mut Criterion) {
    let mut group = c.benchmark_group("map_crossover");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500));
    for &n in &[1_000usize, 10_000, 100_000] {
        for &p in &[1usize, 2, 3, 4, 6, 8, 12, 16, 32] {
            let (scores, relevant) = query(n, p, 7 + n as u64 + p as u64);
            group.throughput(Throughput::Elements(n as u64));
            for name in ["map-greedy", "map-fast"] {
                let oracle = from_name(name).expect("a known loss");
                let mut coef = vec![0.0; n];
                group.bench_function(BenchmarkId::new(name, format!("n={n}/P={p}")), |b| {
                    b.iter(|| oracle.argmax(black_box(&scores), black_box(&relevant), &mut coef))
                });
            }
        }
    }
    group.finish();
}

/// Graded labels (0..levels: grade 0 with probability (levels + 1) / (2 levels), each other
/// grade 1 / (2 levels); documents 0 and 1 of grades 0 and 1, so that every query is usable),
/// scores
/// that rise with the grade, with overlap: LETOR-like queries for the losses that read grades.
fn graded_query(n: usize, levels: usize, seed: u64) -> (Vec<f64>, Vec<f64>, Vec<bool>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let labels: Vec<f64> = (0..n)
        .map(|i| {
            let draw = match i {
                0 => 0,
                1 => levels + 1,
                _ => rng.random_range(0..2 * levels),
            };
            draw.saturating_sub(levels) as f64
        })
        .collect();
    let scores = labels
        .iter()
        .map(|&l| {
            let noise: f64 = (0..4).map(|_| rng.random_range(-0.5..0.5)).sum();
            noise + 0.5 * l
        })
        .collect();
    let relevant = labels.iter().map(|&l| l > 0.0).collect();
    (scores, labels, relevant)
}

/// The losses on graded queries (MQ2008 has 3 grades and up to about 120 documents a query,
/// MSLR-WEB 5 grades), through `argmax_labels`: the graded NDCG beside "map" and "pairwise".
fn graded(c: &mut Criterion) {
    let mut group = c.benchmark_group("graded");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500));
    for &n in &[10usize, 100, 1_000] {
        for &levels in &[3usize, 5] {
            let (scores, labels, relevant) = graded_query(n, levels, 31 * n as u64 + levels as u64);
            group.throughput(Throughput::Elements(n as u64));
            let param = format!("n={n}/grades={levels}");
            for name in [
                "map",
                "pairwise",
                "ndcg@10",
                "ndcg@10:graded",
                "ndcg:graded",
            ] {
                let oracle = from_name(name).expect("a known loss");
                if check_query_labels(oracle.as_ref(), &labels, &relevant).is_err() {
                    continue;
                }
                let mut coef = vec![0.0; n];
                group.bench_function(BenchmarkId::new(name, &param), |b| {
                    b.iter(|| {
                        oracle.argmax_labels(
                            black_box(&scores),
                            black_box(&labels),
                            black_box(&relevant),
                            &mut coef,
                        )
                    })
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, oracles, map_crossover, graded);
criterion_main!(benches);
