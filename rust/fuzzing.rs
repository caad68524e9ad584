//! Property checks on inputs decoded from arbitrary bytes, shared by the cargo-fuzz targets
//! (`fuzz/`, feature `fuzzing`) and the proptest tests run by `cargo test` (`proptests.rs`).
//!
//! Each check panics when a property fails, which is what a fuzzer reports as a crash:
//!
//! - `check_reader`: any bytes either parse into a consistent matrix or give a `Parse` error
//!   with a location; float32 and float64 agree; the result does not depend on the number of
//!   threads.
//! - `check_oracle`: for every loss `oracle::from_name` accepts (probed from a list, so that
//!   new losses are covered when they land), on a small query: Delta and the coefficients are
//!   finite, the hinge is >= 0 (the correct ranking is a candidate of the argmax), permuting
//!   the documents permutes the coefficients, and for MAP the hinge equals brute-force
//!   enumeration of every ranking.
//! - `check_solver`: on a tiny training set with features on scales from 1e-8 to 1e8, C up to
//!   1e6 and duplicate documents: training stops (converged or at max_iter) or reports that no
//!   query is usable; w, the objectives and the gap are finite; the dual is a lower bound of
//!   the primal; the reported primal equals the objective recomputed from w; the result is
//!   bit-identical for 1 and 2 threads; and permuting rows within queries moves w by no more
//!   than the duality gaps allow.

use std::sync::OnceLock;

use crate::data::reader::{parse_stream, FromF64, LetorData, ReadOptions};
use crate::data::{DenseView, QueryGroups, RowMatrix};
use crate::error::Error;
use crate::oracle::interface::dot;
use crate::oracle::{self, testing, Oracle};
use crate::solver::{self, Control, Options, StopReason, Summary};

/// Every example name of the loss registry (single losses and shared-slack combinations),
/// with its oracle: a loss added to `oracle::registry::LOSSES` is checked from then on.
pub fn losses() -> &'static [(String, Box<dyn Oracle>)] {
    static LOSSES: OnceLock<Vec<(String, Box<dyn Oracle>)>> = OnceLock::new();
    LOSSES.get_or_init(|| {
        oracle::registry::example_names()
            .into_iter()
            .map(|name| {
                let oracle = oracle::from_name(&name)
                    .unwrap_or_else(|e| panic!("registry example {name} does not build: {e}"));
                (name, oracle)
            })
            .collect()
    })
}

/// DORM's target ranking is the best label-consistent one at the current w (oracle/dorm.rs),
/// so its objective is not convex: the properties that rest on convexity (the working-set dual
/// bounds the primal; two solutions lie within their gaps of one optimum) do not apply to it.
fn is_convex(name: &str) -> bool {
    let base = |part: &str| {
        oracle::registry::LossSpec::parse(part.trim())
            .and_then(|spec| oracle::registry::lookup(spec.base))
            .is_none_or(|info| info.convex)
    };
    match name.strip_prefix("max(").and_then(|r| r.strip_suffix(')')) {
        Some(inner) => inner.split(',').all(base),
        None => base(name),
    }
}

/// Losses of Yue et al.'s MAP with Psi_po, checked against brute force.
fn is_map(name: &str) -> bool {
    matches!(name, "map" | "map-greedy" | "map-fast")
}

fn pool(n_threads: usize) -> &'static rayon::ThreadPool {
    static POOLS: OnceLock<Vec<rayon::ThreadPool>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| {
        (1..=3)
            .map(|n| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .expect("a small thread pool starts")
            })
            .collect()
    });
    &pools[n_threads - 1]
}

/// Reads the input bytes one decision at a time; past the end it gives zeros, so that every
/// input decodes to some problem.
pub struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data, pos: 0 }
    }

    pub fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.byte() as usize % n.max(1)
    }

    pub fn pick<T: Copy>(&mut self, choices: &[T]) -> T {
        choices[self.below(choices.len())]
    }

    pub fn f64_bits(&mut self) -> f64 {
        let mut b = [0u8; 8];
        for v in &mut b {
            *v = self.byte();
        }
        f64::from_le_bytes(b)
    }

    /// A score: a few levels (ties), a fine grid, raw bits within +-1e6, or subnormal.
    pub fn score(&mut self, style: u8) -> f64 {
        match style % 4 {
            0 => self.below(3) as f64 * 0.25,
            1 => (self.byte() as i8) as f64 / 16.0,
            2 => {
                let v = self.f64_bits();
                if v.is_finite() && v.abs() <= 1e6 {
                    v
                } else {
                    (self.byte() as i8) as f64
                }
            }
            _ => (self.byte() as i8) as f64 * 1e-310,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Reader

fn check_letor<T: FromF64>(d: &LetorData<T>, opts: &ReadOptions, to_f64: fn(T) -> f64) {
    let n = d.n_rows();
    assert!(n > 0, "an accepted file has a data line");
    assert_eq!(d.indptr.len(), n + 1);
    assert_eq!(d.indptr[0], 0);
    assert!(d.indptr.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(*d.indptr.last().unwrap() as usize, d.indices.len());
    assert_eq!(d.indices.len(), d.values.len());
    if let Some(nf) = opts.n_features {
        assert_eq!(d.n_features, nf);
    }
    for r in 0..n {
        let row = &d.indices[d.indptr[r] as usize..d.indptr[r + 1] as usize];
        assert!(
            row.windows(2).all(|w| w[0] < w[1]),
            "indices sorted, unique"
        );
        assert!(row.iter().all(|&i| i >= 0 && (i as usize) < d.n_features));
    }
    assert!(d.values.iter().all(|&v| to_f64(v).is_finite()));
    assert!(d.labels.iter().all(|v| v.is_finite()));
    assert!(d
        .qid_codes
        .iter()
        .all(|&c| (c as usize) < d.qid_names.len()));
    let mut names = d.qid_names.clone();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), d.qid_names.len(), "query names are distinct");
    assert!(d.line_numbers.windows(2).all(|w| w[0] < w[1]));
    assert!(d.line_numbers[0] >= 1);
    if let Some(c) = &d.comments {
        assert_eq!(c.len(), n);
    }
    let _ = d.is_dense_complete();
}

fn same_outcome<T: PartialEq + std::fmt::Debug>(
    a: &crate::Result<LetorData<T>>,
    b: &crate::Result<LetorData<T>>,
) {
    match (a, b) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.labels, b.labels);
            assert_eq!(a.qid_codes, b.qid_codes);
            assert_eq!(a.qid_names, b.qid_names);
            assert_eq!(a.indptr, b.indptr);
            assert_eq!(a.indices, b.indices);
            assert_eq!(a.values, b.values);
            assert_eq!(a.line_numbers, b.line_numbers);
            assert_eq!(a.comments, b.comments);
            assert_eq!(a.n_features, b.n_features);
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!(
            "the outcome depends on the thread count: {:?} vs {:?}",
            a.as_ref().err(),
            b.as_ref().err()
        ),
    }
}

/// Any bytes: a consistent matrix or a located parse error, the same for any thread count.
pub fn check_reader(data: &[u8]) {
    let Some((&flags, text)) = data.split_first() else {
        return;
    };
    let opts = ReadOptions {
        keep_comments: flags & 1 == 1,
        n_features: (flags & 2 == 2).then(|| 1 + (flags >> 2) as usize % 8),
        ..Default::default()
    };
    let one = pool(1).install(|| parse_stream::<f64>(text, "fuzz", &opts));
    let three = pool(3).install(|| parse_stream::<f64>(text, "fuzz", &opts));
    same_outcome(&one, &three);
    let single = pool(1).install(|| parse_stream::<f32>(text, "fuzz", &opts));
    // Line breaks are LF, CRLF and a lone CR (the reader's rule): every CR, and every LF
    // that does not follow a CR, ends a line.
    let lines = text
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b == b'\r' || (b == b'\n' && (i == 0 || text[i - 1] != b'\r')))
        .count()
        + 1;
    match &one {
        Ok(d) => check_letor(d, &opts, |v| v),
        Err(Error::Parse { location, message }) => {
            assert_eq!(location.path, "fuzz");
            assert!(location.line <= lines, "line {} of {lines}", location.line);
            assert!(!message.is_empty());
        }
        Err(e) => panic!("reading bytes gave a non-parse error: {e}"),
    }
    match (&one, &single) {
        (Ok(d64), Ok(d32)) => {
            check_letor(d32, &opts, |v| v as f64);
            assert_eq!(d64.indices, d32.indices);
            let converted: Vec<f32> = d64.values.iter().map(|&v| v as f32).collect();
            assert_eq!(converted, d32.values);
        }
        (Ok(_), Err(e)) => assert!(e.to_string().contains("float32 range"), "{e}"),
        // float32 may stop earlier, at a value beyond its range.
        (Err(a), Err(b)) => assert!(
            a.to_string() == b.to_string() || b.to_string().contains("float32 range"),
            "float64: {a}; float32: {b}"
        ),
        (Err(e), Ok(_)) => panic!("float32 accepted what float64 refused: {e}"),
    }
}

// ---------------------------------------------------------------------------------------
// Oracles

fn map_brute_force(scores: &[f64], relevant: &[bool]) -> f64 {
    testing::brute_force_hinge(scores, relevant, testing::map_loss)
}

/// One small query for one candidate loss.
pub fn check_oracle(data: &[u8]) {
    let mut b = Bytes::new(data);
    let all = losses();
    let (name, oracle) = &all[b.below(all.len())];
    let n = 2 + b.below(8);
    let style = b.byte();
    let scores: Vec<f64> = (0..n).map(|_| b.score(style)).collect();
    let relevant: Vec<bool> = (0..n).map(|_| b.byte() & 1 == 1).collect();
    if relevant.iter().all(|&r| r) || !relevant.iter().any(|&r| r) {
        return;
    }
    let mut coef = vec![0.0; n];
    let delta = oracle.argmax(&scores, &relevant, &mut coef);
    assert!(delta.is_finite(), "{name}: Delta {delta}");
    assert!(
        coef.iter().all(|c| c.is_finite()),
        "{name}: coefficients {coef:?}"
    );
    let magnitude: f64 = 1.0
        + delta.abs()
        + coef
            .iter()
            .zip(&scores)
            .map(|(c, s)| (c * s).abs())
            .sum::<f64>();
    let hinge = delta - dot(&coef, &scores);
    assert!(
        hinge >= -1e-9 * magnitude,
        "{name}: hinge {hinge} < 0 for scores {scores:?}, relevant {relevant:?}"
    );
    // Reversing the documents reverses the coefficients (ties share theirs, so no order
    // of listing can matter).
    let rs: Vec<f64> = scores.iter().rev().copied().collect();
    let rr: Vec<bool> = relevant.iter().rev().copied().collect();
    let mut rc = vec![0.0; n];
    let rdelta = oracle.argmax(&rs, &rr, &mut rc);
    let rhinge = rdelta - dot(&rc, &rs);
    assert!(
        (rhinge - hinge).abs() <= 1e-9 * magnitude,
        "{name}: hinge {hinge} vs {rhinge} after reversing {scores:?} {relevant:?}"
    );
    assert!(
        (rdelta - delta).abs() <= 1e-9 * (1.0 + delta.abs()),
        "{name}: Delta {delta} vs {rdelta} after reversing {scores:?} {relevant:?}"
    );
    for (i, c) in coef.iter().enumerate() {
        assert!(
            (rc[n - 1 - i] - c).abs() <= 1e-9 * (1.0 + c.abs()),
            "{name}: coefficients {coef:?} vs reversed {rc:?} for {scores:?} {relevant:?}"
        );
    }
    if is_map(name) && n <= 7 {
        let brute = map_brute_force(&scores, &relevant);
        assert!(
            (hinge - brute).abs() <= 1e-9 * magnitude,
            "{name}: hinge {hinge}, brute force {brute}, scores {scores:?}, relevant {relevant:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Solver

/// A tiny training set decoded from bytes.
pub struct TinyProblem {
    pub x: Vec<f64>,
    pub n_rows: usize,
    pub n_cols: usize,
    pub labels: Vec<f64>,
    pub codes: Vec<i64>,
    pub n_queries: usize,
    pub loss: &'static str,
    pub c: f64,
}

impl TinyProblem {
    pub fn decode(data: &[u8]) -> Self {
        let mut b = Bytes::new(data);
        let all = losses();
        let loss = all[b.below(all.len())].0.as_str();
        let c = b.pick(&[1e-3, 0.1, 1.0, 10.0, 1e3, 1e6]);
        let n_queries = 1 + b.below(4);
        let n_cols = 1 + b.below(3);
        let scales: Vec<f64> = (0..n_cols).map(|_| b.pick(&[1e-8, 1.0, 1e8])).collect();
        let graded = b.byte() & 1 == 1;
        let (mut x, mut labels, mut codes) = (Vec::new(), Vec::new(), Vec::new());
        for q in 0..n_queries {
            let n_docs = 1 + b.below(5);
            for _ in 0..n_docs {
                // Few distinct values: duplicate documents (with any labels) are common.
                for &s in &scales {
                    x.push(b.pick(&[-1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 2.0, 0.25]) * s);
                }
                labels.push(if graded {
                    b.below(3) as f64
                } else if b.byte() & 1 == 1 {
                    1.0
                } else {
                    -1.0
                });
                codes.push(q as i64);
            }
        }
        TinyProblem {
            n_rows: labels.len(),
            x,
            n_cols,
            labels,
            codes,
            n_queries,
            loss,
            c,
        }
    }

    /// The same problem with the rows of every query listed in reverse.
    pub fn reversed_within_queries(&self) -> Self {
        let groups = QueryGroups::from_codes(&self.codes, self.n_queries).unwrap();
        let mut order: Vec<usize> = Vec::with_capacity(self.n_rows);
        for q in 0..self.n_queries {
            order.extend(groups.rows(q).iter().rev());
        }
        let d = self.n_cols;
        TinyProblem {
            x: order
                .iter()
                .flat_map(|&r| self.x[r * d..(r + 1) * d].iter().copied())
                .collect(),
            labels: order.iter().map(|&r| self.labels[r]).collect(),
            codes: order.iter().map(|&r| self.codes[r]).collect(),
            ..*self
        }
    }

    pub fn train(&self, n_threads: usize, max_iter: usize) -> crate::Result<(Vec<f64>, Summary)> {
        let x = DenseView::new(&self.x, self.n_rows, self.n_cols)?;
        let groups = QueryGroups::from_codes(&self.codes, self.n_queries)?;
        let oracle = oracle::from_name(self.loss)?;
        let opts = Options {
            c: self.c,
            eps: 1e-3,
            max_iter,
            ..Options::default()
        }
        .checked()?;
        pool(n_threads).install(|| {
            solver::train(
                &x,
                &self.labels,
                &groups,
                &[oracle.as_ref()],
                &opts,
                &mut |_, _| Ok(Control::Continue),
            )
        })
    }

    /// 1/2 |w|^2 + C/n sum_q hinge_q(w), recomputed from w with plain dot products; for MAP
    /// on queries of at most 7 documents the hinge is enumerated by brute force.
    pub fn primal(&self, w: &[f64]) -> f64 {
        let x = DenseView::new(&self.x, self.n_rows, self.n_cols).unwrap();
        let groups = QueryGroups::from_codes(&self.codes, self.n_queries).unwrap();
        let oracle = oracle::from_name(self.loss).unwrap();
        let (mut total, mut usable) = (0.0, 0usize);
        for q in 0..self.n_queries {
            let rows = groups.rows(q);
            let scores: Vec<f64> = rows.iter().map(|&r| x.row_dot(r, w)).collect();
            let labels: Vec<f64> = rows.iter().map(|&r| self.labels[r]).collect();
            let relevant: Vec<bool> = labels.iter().map(|&l| l > 0.0).collect();
            // A graded loss ("pairwise") also uses queries whose labels are all above or all
            // at most the threshold, as long as two of them differ.
            if !oracle.usable(&labels, &relevant) {
                continue;
            }
            usable += 1;
            total += if is_map(self.loss) && rows.len() <= 7 {
                map_brute_force(&scores, &relevant)
            } else {
                let mut coef = vec![0.0; rows.len()];
                let delta = oracle.argmax_labels(&scores, &labels, &relevant, &mut coef);
                delta - dot(&coef, &scores)
            };
        }
        0.5 * dot(w, w) + self.c / usable.max(1) as f64 * total
    }
}

/// A tiny training problem: see the module documentation for the properties.
pub fn check_solver(data: &[u8]) {
    let problem = TinyProblem::decode(data);
    // Badly scaled problems (a feature at 1e8 acts like C times 1e16) need very many
    // iterations; a few dozen exercise every code path at bounded cost.
    let max_iter = 25;
    let (w, s) = match problem.train(1, max_iter) {
        Ok(v) => v,
        Err(Error::NoUsableQueries { .. }) => return,
        Err(e) => panic!("{}: training failed: {e}", problem.loss),
    };
    let name = problem.loss;
    assert!(w.iter().all(|v| v.is_finite()), "{name}: w = {w:?}");
    assert!(s.primal.is_finite() && s.dual.is_finite() && s.gap.is_finite());
    assert!(s.n_iter >= 1 && s.n_iter <= max_iter);
    let scale = 1.0 + s.primal.abs();
    assert!(
        s.dual <= s.primal + 1e-9 * scale || !is_convex(name),
        "{name}: dual {} above primal {}",
        s.dual,
        s.primal
    );
    if s.stop == StopReason::Converged {
        assert!(s.gap <= 1e-3 * problem.c + 1e-9 * scale);
    }
    let recomputed = problem.primal(&w);
    assert!(
        (recomputed - s.primal).abs() <= 1e-7 * (1.0 + recomputed.abs()),
        "{name}: reported primal {} but P(w) = {recomputed}",
        s.primal
    );
    // Results must not depend on the number of threads.
    let (w2, s2) = problem
        .train(2, max_iter)
        .expect("it trained with one thread");
    assert_eq!(w, w2, "{name}: w differs between 1 and 2 threads");
    assert_eq!(s.n_iter, s2.n_iter);
    // Listing a query's documents in another order gives the same problem; both solutions
    // are within their gaps of the optimum: 1/2 |w - w*|^2 <= P(w) - P* <= gap.
    let (w3, s3) = problem
        .reversed_within_queries()
        .train(1, max_iter)
        .expect("the reversed problem trains");
    let distance = w
        .iter()
        .zip(&w3)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f64>()
        .sqrt();
    // The gaps are only known up to rounding, to the 1e-9 * scale the dual bound above allows
    // (a flat problem, e.g. a query of identical documents, lets rounding of c.s of order 1e-16
    // pull w by 1e-8 at no visible cost), so each enters the bound with that slack.
    let slack = |gap: f64, primal: f64| (2.0 * (gap.max(0.0) + 1e-9 * (1.0 + primal.abs()))).sqrt();
    let bound = slack(s.gap, s.primal) + slack(s3.gap, s3.primal);
    let norm = dot(&w, &w).sqrt();
    assert!(
        distance <= bound + 1e-9 * (1.0 + norm) || !is_convex(name),
        "{name}: |w - w_reversed| = {distance} > {bound}"
    );
}
