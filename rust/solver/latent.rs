//! The latent-target losses ("ndcg@k:latent", "ndcg@k:graded:latent") fitted by CCCP rounds in
//! one core call.
//!
//! Problem (Yu and Joachims, ICML 2009, with the loss and feature map of the base loss,
//! "ndcg@k" or "ndcg@k:graded"): over the n usable queries,
//!
//!   F(w) = 1/2 |w|^2 + C/n sum_q [max_ybar (Delta_q(ybar) + w.Psi(ybar)) - max_{y: Delta_q(y) = 0} w.Psi(y)],
//!
//! not convex. The rounds start from the "map" model at the same C (w = 0 is a stationary
//! point: its target is the ideal ranking). Each round fixes the target at the current scores,
//! which makes the query's hinge the base loss's plus the linear term w.X_q^T e_q
//! (`target_coefficients`), and solves that convex problem with the base loss's exact oracle:
//! every cut of the base problem minus the constant sum_q X_q^T e_q / n. Its objective bounds F
//! from above and equals it at the current w, so an exact solve never raises F, and F is
//! evaluated exactly after each round (one oracle pass). Each round starts from the working set
//! of the round before, moved by the change of the constant (`WarmStart::shifted`), and is
//! solved to eps * round_eps_factor. The rounds stop when F decreases by less than
//! `relative_decrease` of its value, after a round that raised F or whose solve did not converge
//! (kept when it lowered F), after `max_rounds` rounds, and (with `stop_before_zero`) before a
//! round whose model is w = 0 when the model before it ranks: on queries with many relevant
//! documents and weak features w = 0 can have the lower F, but it ranks nothing
//! (docs/guide/losses.md). python/svmmap/_fit/latent.py is the thin wrapper that passes the settings
//! and words the warnings; the arithmetic here is the one it did before, operation for
//! operation, so the models are the same bit for bit.

use std::time::{Duration, Instant};

use super::api::{solve_from, train_path_from};
use super::options::ValidOptions;
use super::problem::{CutSource, RankingProblem};
use super::progress::{Control, IterationRecord, StopReason, Summary};
use super::warm::WarmStart;
use crate::data::kernels::{matvec, transpose_dot};
use crate::data::{QueryGroups, RowMatrix};
use crate::error::{Error, Result};
use crate::oracle::{check_query_lens, Oracle, QueryCounts};

/// The estimated peak bytes per row of a latent fit (see `fit_latent`).
const LATENT_BYTES_PER_ROW: usize = 96;

/// The settings of the rounds (their owner is python/svmmap/_fit/latent.py).
#[derive(Debug, Clone)]
pub struct LatentOptions {
    /// The target's cutoff k: the top min(k, n) of the best ranking of loss 0 is fixed.
    pub cutoff: usize,
    /// The graded feature map and loss ("ndcg@k:graded") instead of the binary ones.
    pub graded: bool,
    pub max_rounds: usize,
    pub relative_decrease: f64,
    pub round_eps_factor: f64,
    pub stop_before_zero: bool,
    /// The multiples t of the map start at which F(t w_map) is measured when the rounds
    /// stopped before w = 0.
    pub ray: Vec<f64>,
}

/// What the rounds measured when they stopped before a round that went to w = 0.
#[derive(Debug, Clone)]
pub struct ZeroRay {
    /// The rounds kept before it (0: the model is the map start).
    pub kept: usize,
    /// F(0).
    pub at_zero: f64,
    /// (t, F(t w_map)) for every t of `LatentOptions::ray`.
    pub ray: Vec<(f64, f64)>,
    /// The map start.
    pub start: Vec<f64>,
}

/// The outcome of a latent fit.
#[derive(Debug, Clone)]
pub struct LatentFit {
    pub w: Vec<f64>,
    /// The solver summary of the round that made `w` (or of the map start).
    pub summary: Summary,
    /// The query counts of the base loss when `summary` is a round's; None for the map start's
    /// (whose summary carries its own counts).
    pub round_counts: Option<QueryCounts>,
    /// F at the start and after every kept round.
    pub objectives: Vec<f64>,
    /// The rounds stopped at `max_rounds` with F still decreasing.
    pub exhausted: bool,
    /// The limit (the time limit, a stall, ...) that ended a round that was not kept.
    pub ended_by: Option<StopReason>,
    pub zero: Option<ZeroRay>,
}

/// Per row, the coefficients e with e.s = w.(Psi(ideal) - Psi(y_t)) on every query, y_t the
/// best-scored ranking of loss 0 at `scores` (python/svmmap/_fit/latent.py documents both forms and
/// tests/ir check them against every ranking of small queries). Binary (`graded` false; `grades`
/// 1 for relevant, 0 otherwise): the m = min(P, cutoff) best-scored relevant documents first,
/// the rest in score order; a relevant document outside the top m gets 2/(P N) times the
/// non-relevant documents scored strictly above it, a non-relevant one minus 2/(P N) times those
/// relevant documents scored strictly below it. Graded: the top K = min(cutoff, n) holds every
/// document of a grade above the ideal ranking's grade at rank K and the best-scored of that
/// grade; a document d of the rest gets 2/Z (#lower-grade documents of the rest scored strictly
/// above it - #higher-grade ones scored strictly below it), Z the pairs of different grades.
pub fn target_coefficients(
    scores: &[f64],
    grades: &[f64],
    groups: &QueryGroups,
    cutoff: usize,
    graded: bool,
) -> Result<Vec<f64>> {
    let mut e = crate::runtime::memory::zeros(scores.len(), "the latent target's coefficients")?;
    for q in 0..groups.n_queries() {
        let rows = groups.rows(q);
        if graded {
            graded_query(scores, grades, rows, cutoff, &mut e);
        } else {
            binary_query(scores, grades, rows, cutoff, &mut e);
        }
    }
    Ok(e)
}

fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(|a, b| a.partial_cmp(b).expect("scores are finite"));
    v
}

/// `rows` in descending score order, ties in the order given (NumPy's stable argsort of -s).
fn by_score_descending(scores: &[f64], rows: &mut [usize]) {
    rows.sort_by(|&a, &b| {
        (-scores[a])
            .partial_cmp(&-scores[b])
            .expect("scores are finite")
    });
}

fn binary_query(scores: &[f64], grades: &[f64], rows: &[usize], cutoff: usize, e: &mut [f64]) {
    let mut pos: Vec<usize> = rows.iter().copied().filter(|&r| grades[r] > 0.0).collect();
    let neg: Vec<usize> = rows.iter().copied().filter(|&r| grades[r] <= 0.0).collect();
    let (p, n) = (pos.len(), neg.len());
    if p == 0 || n == 0 || p <= cutoff {
        return;
    }
    let scale = 2.0 / (p * n) as f64;
    by_score_descending(scores, &mut pos);
    let rest = &pos[cutoff..];
    let negative_scores = sorted(neg.iter().map(|&r| scores[r]));
    let rest_scores = sorted(rest.iter().map(|&r| scores[r]));
    for &r in rest {
        let at_most = negative_scores.partition_point(|&v| v <= scores[r]);
        e[r] = scale * (n - at_most) as f64;
    }
    for &r in &neg {
        let below = rest_scores.partition_point(|&v| v < scores[r]);
        e[r] = -scale * below as f64;
    }
}

fn graded_query(scores: &[f64], grades: &[f64], rows: &[usize], cutoff: usize, e: &mut [f64]) {
    let n = rows.len();
    let top = cutoff.min(n);
    let mut descending = sorted(rows.iter().map(|&r| grades[r]));
    descending.reverse();
    let mut levels = descending.clone();
    levels.dedup();
    if levels.len() < 2 || top == n {
        return;
    }
    let same: usize = levels
        .iter()
        .map(|&l| {
            let c = descending.iter().filter(|&&g| g == l).count();
            c * c
        })
        .sum();
    let z = (n * n - same) / 2;
    let boundary = descending[top - 1];
    let mut inside: Vec<bool> = rows.iter().map(|&r| grades[r] > boundary).collect();
    let taken = top - inside.iter().filter(|&&i| i).count();
    // The ideal top holds `taken` documents of the boundary grade: the best-scored ones.
    let mut at_boundary: Vec<usize> = (0..n).filter(|&i| grades[rows[i]] == boundary).collect();
    at_boundary.sort_by(|&a, &b| {
        (-scores[rows[a]])
            .partial_cmp(&-scores[rows[b]])
            .expect("scores are finite")
    });
    for &i in &at_boundary[..taken] {
        inside[i] = true;
    }
    let rest: Vec<usize> = (0..n).filter(|&i| !inside[i]).map(|i| rows[i]).collect();
    let mut rest_levels = sorted(rest.iter().map(|&r| grades[r]));
    rest_levels.dedup();
    for &level in &rest_levels {
        let lower = sorted(
            rest.iter()
                .filter(|&&r| grades[r] < level)
                .map(|&r| scores[r]),
        );
        let higher = sorted(
            rest.iter()
                .filter(|&&r| grades[r] > level)
                .map(|&r| scores[r]),
        );
        for &r in rest.iter().filter(|&&r| grades[r] == level) {
            let above = lower.len() - lower.partition_point(|&v| v <= scores[r]);
            let below = higher.partition_point(|&v| v < scores[r]);
            e[r] = 2.0 * (above as i64 - below as i64) as f64 / z as f64;
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The base problem's cuts with a fixed target: the base oracle's sums at w minus `shift`
/// (sum_q X_q^T e_q), divided by n, formed as the Python cut source formed them.
struct ShiftedCuts<'p, 'a, M: RowMatrix + ?Sized> {
    problem: &'p RankingProblem<'a, M>,
    base: &'p dyn Oracle,
    shift: &'p [f64],
    inv_n: f64,
}

impl<M: RowMatrix + ?Sized> CutSource for ShiftedCuts<'_, '_, M> {
    fn dim(&self) -> usize {
        self.shift.len()
    }
    fn n_groups(&self) -> usize {
        1
    }
    fn cuts(&mut self, w: &[f64]) -> Result<Vec<(f64, Vec<f64>)>> {
        crate::runtime::cancel::check()?;
        let (b, g) = self.problem.cut_sums(w, &[self.base]).remove(0);
        let b = (0.0 + b) * self.inv_n;
        let g: Vec<f64> = g
            .iter()
            .zip(self.shift)
            .map(|(g, s)| (0.0 + (g - s)) * self.inv_n)
            .collect();
        if !b.is_finite() || g.iter().any(|v| !v.is_finite()) {
            return Err(Error::input(
                "the cut source returned a non-finite value for loss 0",
            ));
        }
        Ok(vec![(b, g)])
    }
}

/// The pieces of F at a point that the rounds need.
struct Evaluator<'p, 'a, M: RowMatrix + ?Sized> {
    x: &'a M,
    problem: &'p RankingProblem<'a, M>,
    base: &'p dyn Oracle,
    grades: &'p [f64],
    groups: &'a QueryGroups,
    cutoff: usize,
    graded: bool,
    c: f64,
    n_used: f64,
}

impl<M: RowMatrix + ?Sized> Evaluator<'_, '_, M> {
    fn scores(&self, w: &[f64]) -> Result<Vec<f64>> {
        let n = self.x.n_rows();
        let mut out = crate::runtime::memory::zeros(n, &format!("the scores of {n} rows"))?;
        matvec(self.x, w, &mut out);
        crate::runtime::cancel::check()?;
        Ok(out)
    }

    /// (sum_q X_q^T e_q, e.s) at w.
    fn target_sum(&self, w: &[f64]) -> Result<(Vec<f64>, f64)> {
        let s = self.scores(w)?;
        let e = target_coefficients(&s, self.grades, self.groups, self.cutoff, self.graded)?;
        Ok((transpose_dot(self.x, &e)?, dot(&e, &s)))
    }

    /// F(0) and F(t start) for every t of `ray`, when the rounds stopped before w = 0 after
    /// `kept` rounds.
    fn zero_ray(&self, start: &[f64], kept: usize, ray: &[f64]) -> Result<ZeroRay> {
        let mut points = Vec::with_capacity(ray.len());
        for &t in ray {
            let w: Vec<f64> = start.iter().map(|v| t * v).collect();
            points.push((t, self.objective(&w)?));
        }
        Ok(ZeroRay {
            kept,
            at_zero: self.objective(&vec![0.0; start.len()])?,
            ray: points,
            start: start.to_vec(),
        })
    }

    fn objective(&self, w: &[f64]) -> Result<f64> {
        let (b, g) = self.problem.cut_sums(w, &[self.base]).remove(0);
        let (_, es) = self.target_sum(w)?;
        Ok(0.5 * dot(w, w) + self.c * (b - dot(w, &g) + es) / self.n_used)
    }
}

/// Every round's cuts are the base cuts minus its shift, times 1/n: the last round's working
/// set moved by (its shift - this one) / n holds exactly this round's cuts at the same points
/// (`WarmStart::shifted`), so the round starts from it and is certified like a cold solve.
fn moved(state: &WarmStart, before: &[f64], shift: &[f64], n: f64) -> Result<WarmStart> {
    let delta: Vec<f64> = before.iter().zip(shift).map(|(a, b)| (a - b) / n).collect();
    state.shifted(&delta)
}

/// The time limit (`Options::max_seconds`) bounds the whole fit: each solve gets what is left
/// of it.
struct Deadline {
    began: Instant,
    seconds: f64,
}

impl Deadline {
    fn new(seconds: f64) -> Self {
        Deadline {
            began: Instant::now(),
            seconds,
        }
    }

    /// `o` with the time left as its limit (none when the fit has none).
    fn options(&self, o: &ValidOptions) -> Result<ValidOptions> {
        if !self.seconds.is_finite() {
            return Ok(o.clone());
        }
        let limit = Duration::from_secs_f64(self.seconds);
        let left = limit.saturating_sub(self.began.elapsed()).as_secs_f64();
        o.with(|o| o.max_seconds = left.max(1e-9))
    }
}

/// Rust aborts the process when an allocation fails, so a latent fit's peak is checked first
/// (`memory::check_call`): per row the problem's grouped labels and order, the scores, the
/// target's grades and coefficients and the sorts of one query (`LATENT_BYTES_PER_ROW`), and per
/// query its bounds and counts.
fn check_room(n: usize, n_queries: usize) -> Result<()> {
    let bytes = crate::runtime::memory::bytes_of(n, LATENT_BYTES_PER_ROW)
        .saturating_add(crate::runtime::memory::bytes_of(n_queries, 64));
    crate::runtime::memory::check_call(bytes, || {
        (
            format!("a latent-target fit over {n} rows"),
            "train on fewer queries".to_string(),
        )
    })
}

/// The base loss's problem, prepared as a `Partition` of the Python rounds prepared it.
fn prepared<'a, M: RowMatrix + ?Sized>(
    x: &'a M,
    labels: &[f64],
    groups: &'a QueryGroups,
    base: &dyn Oracle,
    threshold: f64,
) -> Result<RankingProblem<'a, M>> {
    let mut problem = RankingProblem::new(x, labels, groups, threshold)?;
    problem.admit(&[base]);
    check_query_lens(&[base], groups)?;
    problem.check_labels(&[base])?;
    problem.counts.require_usable(threshold)?;
    Ok(problem)
}

/// The grades of the target: the label of a relevant document for the graded loss, 1 for the
/// binary one, 0 for the others.
fn target_grades(labels: &[f64], threshold: f64, graded: bool) -> Result<Vec<f64>> {
    let mut grades = crate::runtime::memory::zeros(labels.len(), "the latent target's grades")?;
    for (g, &l) in grades.iter_mut().zip(labels) {
        if l > threshold {
            *g = if graded { l } else { 1.0 };
        }
    }
    Ok(grades)
}

/// Fits a latent-target loss whose base loss is `base` (see the module comment); `start` is the
/// "map" oracle of the start. `opts` are the fit's options (C, eps, max_seconds for the whole
/// fit, ...); `on_iteration` sees every iteration of the start and of every round.
#[allow(clippy::too_many_arguments)]
pub fn fit_latent<M: RowMatrix + ?Sized>(
    x: &M,
    labels: &[f64],
    groups: &QueryGroups,
    start: &dyn Oracle,
    base: &dyn Oracle,
    opts: &ValidOptions,
    latent: &LatentOptions,
    on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
) -> Result<LatentFit> {
    check_room(x.n_rows(), groups.n_queries())?;
    let deadline = Deadline::new(opts.max_seconds);
    let mut path = train_path_from(
        x,
        labels,
        groups,
        None,
        &[start],
        &deadline.options(opts)?,
        &[opts.c],
        true,
        None,
        on_iteration,
    )?
    .0;
    let (mut coef, mut summary) = path.pop().expect("one C was given");
    let first = coef.clone();
    let problem = prepared(x, labels, groups, base, opts.relevance_threshold)?;
    let counts = problem.counts;
    let grades = target_grades(labels, opts.relevance_threshold, latent.graded)?;
    let at = Evaluator {
        x,
        problem: &problem,
        base,
        grades: &grades,
        groups,
        cutoff: latent.cutoff,
        graded: latent.graded,
        c: opts.c,
        n_used: counts.usable as f64,
    };
    let mut objectives = vec![at.objective(&coef)?];
    let mut exhausted = true;
    let mut ended_by = None;
    let mut zero = None;
    let mut round_counts = None;
    let mut state: Option<WarmStart> = None;
    let mut state_shift: Vec<f64> = Vec::new();
    for _ in 0..latent.max_rounds {
        if summary.stop != StopReason::Converged {
            exhausted = false;
            break;
        }
        let (shift, _) = at.target_sum(&coef)?;
        if let Some(s) = &state {
            state = Some(moved(s, &state_shift, &shift, at.n_used)?);
        }
        let mut source = ShiftedCuts {
            problem: &problem,
            base,
            shift: &shift,
            inv_n: 1.0 / counts.usable as f64,
        };
        crate::runtime::memory::check_working_set(x.n_cols(), 1)?;
        let (new_coef, new_summary, new_state) = solve_from(
            &mut source,
            &deadline.options(&opts.with(|o| o.eps *= latent.round_eps_factor)?)?,
            state.as_ref(),
            on_iteration,
        )?;
        let value = at.objective(&new_coef)?;
        let last = *objectives.last().expect("the start's objective");
        let ranks = |w: &[f64]| w.iter().any(|&v| v != 0.0);
        if latent.stop_before_zero && value < last && !ranks(&new_coef) && ranks(&coef) {
            zero = Some(at.zero_ray(&first, objectives.len() - 1, &latent.ray)?);
            exhausted = false;
            break;
        }
        if value >= last || new_summary.stop != StopReason::Converged {
            // A round that stalled or ran out of time ends the rounds, kept when it helped.
            if value < last {
                coef = new_coef;
                summary = new_summary;
                round_counts = Some(counts);
                objectives.push(value);
            } else if new_summary.stop != StopReason::Converged {
                ended_by = Some(new_summary.stop);
            }
            exhausted = false;
            break;
        }
        coef = new_coef;
        summary = new_summary;
        round_counts = Some(counts);
        state = new_state;
        state_shift = shift;
        objectives.push(value);
        if last - value < latent.relative_decrease * value.abs() {
            exhausted = false;
            break;
        }
    }
    Ok(LatentFit {
        w: coef,
        summary,
        round_counts,
        objectives,
        exhausted,
        ended_by,
        zero,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One query, scores 3, 2, 1, 0 with labels 1, 0, 1, 1 and k = 1: the target puts the
    /// best-scored relevant document (score 3) first and the rest in score order, which
    /// misorders the pairs (score 1, score 2) and (score 0, score 2) against the ideal ranking.
    /// With P N = 3 each misordered relevant document gets 2/3 per non-relevant one above it,
    /// the non-relevant one -2/3 per such relevant one below it: e = (0, -4/3, 2/3, 2/3), and
    /// e.s = 2/3 (1 - 2) + 2/3 (0 - 2) = -2. The graded form on grades 1/0 is the same.
    #[test]
    fn target_coefficients_by_hand() {
        let scores = [3.0, 2.0, 1.0, 0.0];
        let grades = [1.0, 0.0, 1.0, 1.0];
        let groups = QueryGroups::contiguous(&[4]);
        let expected = [0.0, -4.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0];
        for graded in [false, true] {
            let e = target_coefficients(&scores, &grades, &groups, 1, graded).unwrap();
            for (a, b) in e.iter().zip(expected) {
                assert!((a - b).abs() < 1e-15, "{graded}: {e:?}");
            }
            assert!((dot(&e, &scores) + 2.0).abs() < 1e-12);
        }
        // With k >= P the target is the ideal ranking: no misordered pair.
        let e = target_coefficients(&scores, &grades, &groups, 3, false).unwrap();
        assert!(e.iter().all(|&v| v == 0.0));
    }
}
