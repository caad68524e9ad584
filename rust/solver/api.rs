//! The solver's entry points. `train` and `train_path` take options validated once, where they
//! were made (`ValidOptions`), check the data, prepare
//! a `RankingProblem` once (usable queries, weights) and solve it at one C or at every C of a
//! path, each C warm-started from the one before or not; `solve` and `solve_from` run the method
//! of `Options::method` (ocas.rs or plain.rs) on any `CutSource`, such as the sum of the parts
//! of several machines.

use super::ocas::solve_ocas;
use super::options::{Method, ValidOptions};
use super::plain::solve_plain;
use super::problem::{CutSource, QueryCuts, RankingProblem};
use super::progress::{Control, IterationRecord, Summary};
use super::warm::WarmStart;
use crate::data::{QueryGroups, RowMatrix};
use crate::error::{Error, Result};
use crate::oracle::Oracle;

/// The models of a C path: (w, summary) per C, in the order of the C values.
pub type Path = Vec<(Vec<f64>, Summary)>;

/// Trains w on the rows of `x` grouped by `groups`, with one slack group per oracle.
pub fn train<M: RowMatrix + ?Sized>(
    x: &M,
    labels: &[f64],
    groups: &QueryGroups,
    oracles: &[&dyn Oracle],
    opts: &ValidOptions,
    on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
) -> Result<(Vec<f64>, Summary)> {
    let mut path = train_path(
        x,
        labels,
        groups,
        None,
        oracles,
        opts,
        &[opts.c],
        false,
        on_iteration,
    )?;
    Ok(path.pop().expect("one C was given"))
}

/// Trains w for every C of `cs` in the order given (the other options from `opts`), on one
/// problem prepared once, with per-query `weights` (see `RankingProblem::set_weights`; None:
/// unweighted). With `warm`, each C starts from the final working set and iterate of the one
/// before (see `WarmStart`); without, every C is solved from scratch, exactly as `train` does.
/// `on_iteration` sees the iterations of every C in turn.
#[allow(clippy::too_many_arguments)]
pub fn train_path<M: RowMatrix + ?Sized>(
    x: &M,
    labels: &[f64],
    groups: &QueryGroups,
    weights: Option<&[f64]>,
    oracles: &[&dyn Oracle],
    opts: &ValidOptions,
    cs: &[f64],
    warm: bool,
    on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
) -> Result<Path> {
    let (path, _) = train_path_from(
        x,
        labels,
        groups,
        weights,
        oracles,
        opts,
        cs,
        warm,
        None,
        on_iteration,
    )?;
    Ok(path)
}

/// `train_path` whose first C starts from `start` (the state a path of the same problem ended
/// in; None: from scratch), also returning the state its last C ended in (None from the plain
/// method). The problem is prepared again from the same data, so a path fitted in pieces, each
/// starting from the state the one before returned, gives the models of the path fitted in one
/// call bit for bit: a caller can then look at each C's model before deciding to go on.
/// `start` is borrowed, not taken: the caller (SVMMapCV's search, through `fit_path_from`)
/// holds it until the call returns, and a copy here would hold a third working set beside
/// the caller's and the solver's during the whole fit (9 MB a state of a GA2M at C = 10 on
/// 573k rows, benchmarks/search_memory.py).
#[allow(clippy::too_many_arguments)]
pub fn train_path_from<M: RowMatrix + ?Sized>(
    x: &M,
    labels: &[f64],
    groups: &QueryGroups,
    weights: Option<&[f64]>,
    oracles: &[&dyn Oracle],
    opts: &ValidOptions,
    cs: &[f64],
    warm: bool,
    start: Option<&WarmStart>,
    on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
) -> Result<(Path, Option<WarmStart>)> {
    if cs.is_empty() {
        return Err(Error::param("Cs", "a non-empty list of numbers > 0", "[]"));
    }
    // The options were validated when made; each C of the path is the one value to check.
    let all = cs
        .iter()
        .map(|&c| opts.with(|o| o.c = c))
        .collect::<Result<Vec<_>>>()?;
    if oracles.is_empty() {
        return Err(Error::input("at least one loss is needed"));
    }
    crate::oracle::check_query_lens(oracles, groups)?;
    let mut problem = RankingProblem::new(x, labels, groups, opts.relevance_threshold)?;
    problem.check_labels(oracles)?;
    problem.admit(oracles);
    problem.split_into_blocks(opts.n_blocks);
    crate::runtime::memory::check_working_set(x.n_cols(), oracles.len() * problem.n_blocks())?;
    if let Some(s) = weights {
        problem.set_weights(s)?;
    }
    let counts = problem.counts;
    counts.require_usable(opts.relevance_threshold)?;
    let key = problem_key(x.n_cols(), labels, groups, weights, oracles, opts);
    if start.is_some_and(|s| !s.is_of(key)) {
        return Err(Error::input(
            "warm_state comes from a path of another problem (other losses, labels, queries, \
             query weights, relevance threshold or number of features): a path's state starts \
             only a path of the same data and configuration",
        ));
    }
    let mut source = QueryCuts { problem, oracles };
    let mut out = Vec::with_capacity(cs.len());
    let mut state: Option<WarmStart> = None;
    for (i, o) in all.iter().enumerate() {
        // The first C starts from the caller's state, each later one from the C before.
        let from = match (warm, i) {
            (false, _) => None,
            (true, 0) => start,
            (true, _) => state.as_ref(),
        };
        let (w, mut summary, last) = solve_from(&mut source, o, from, on_iteration)?;
        summary.n_queries = counts.usable;
        summary.n_skipped_no_relevant = counts.no_relevant;
        summary.n_skipped_all_relevant = counts.all_relevant;
        out.push((w, summary));
        // A path's states are held between its Cs, and by a search between its calls, in f32
        // (see `WarmStart`): every C of the path starts from the rounded state, so a path
        // fitted in pieces is the path fitted at once.
        state = last.map(|s| s.rounded().of_problem(key));
    }
    Ok((out, state))
}

/// A fingerprint of what makes a path's cuts bound its risk: the losses, the labels and their
/// relevance threshold, the queries, the query weights and the cut blocks. A state carries
/// the one of the path that made it, and a path refuses another's: the cuts and the risk a
/// state holds are those of its own problem, and starting another problem from them gave a
/// "converged" fit whose primal objective was the old problem's (below the new optimum, with
/// a negative gap). The feature values are not read (that would cost an oracle pass), only
/// their number; O(n) beside a fit's passes over X.
fn problem_key(
    n_cols: usize,
    labels: &[f64],
    groups: &QueryGroups,
    weights: Option<&[f64]>,
    oracles: &[&dyn Oracle],
    opts: &ValidOptions,
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    n_cols.hash(&mut h);
    labels.iter().for_each(|v| v.to_bits().hash(&mut h));
    groups.order.hash(&mut h);
    groups.bounds.hash(&mut h);
    weights
        .map(|w| w.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
        .hash(&mut h);
    oracles.iter().for_each(|o| o.name().hash(&mut h));
    opts.relevance_threshold.to_bits().hash(&mut h);
    opts.n_blocks.hash(&mut h);
    h.finish()
}

/// The cutting-plane loop on any source of cuts (the query counts of the summary are left 0).
pub fn solve(
    source: &mut dyn CutSource,
    opts: &ValidOptions,
    on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
) -> Result<(Vec<f64>, Summary)> {
    let (w, summary, _) = solve_from(source, opts, None, on_iteration)?;
    Ok((w, summary))
}

/// `solve`, optionally started from `warm` (OCAS only), also returning the state a solve at
/// another C can start from (None from the plain method).
pub fn solve_from(
    source: &mut dyn CutSource,
    opts: &ValidOptions,
    warm: Option<&WarmStart>,
    on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
) -> Result<(Vec<f64>, Summary, Option<WarmStart>)> {
    match opts.method {
        Method::Plain if warm.is_some() => Err(Error::input(
            "a warm start needs the OCAS method, got the plain cutting plane",
        )),
        Method::Plain => {
            let (w, summary) = solve_plain(source, opts, on_iteration)?;
            Ok((w, summary, None))
        }
        Method::Ocas => {
            let (w, summary, state) = solve_ocas(source, opts, warm, on_iteration)?;
            Ok((w, summary, Some(state)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DenseView;
    use crate::oracle::from_name;
    use crate::solver::problem::tests::problem;
    use crate::solver::progress::StopReason;
    use crate::solver::qp::dot;
    use crate::solver::Options;

    /// A warm-started path must give, at every C, a model certified within eps C of the
    /// optimum like a cold solve: the two objectives then differ by at most eps C (each is at
    /// most eps C above the common optimum), and the two weight vectors by at most
    /// sqrt(2 (gap_cold + gap_warm)) (P is 1-strongly convex, so P(w) - P* >= |w - w*|^2 / 2).
    #[test]
    fn warm_started_path_is_certified_like_cold_solves() {
        let d = 6;
        let (data, labels, codes) = problem(21, 80, d);
        let n = labels.len();
        let groups = QueryGroups::from_codes(&codes, 80).unwrap();
        let x = DenseView::new(&data, n, d).unwrap();
        let map = from_name("map").unwrap();
        let oracles = [map.as_ref()];
        let opts = Options::default().checked().unwrap();
        let cs = [0.01, 0.1, 1.0, 10.0, 100.0];
        let run = |warm: bool| {
            train_path(
                &x,
                &labels,
                &groups,
                None,
                &oracles,
                &opts,
                &cs,
                warm,
                &mut |_, _| Ok(Control::Continue),
            )
            .unwrap()
        };
        let (cold, warm) = (run(false), run(true));
        for ((c, (wc, sc)), (ww, sw)) in cs.iter().zip(&cold).zip(&warm) {
            assert_eq!(sc.stop, StopReason::Converged);
            assert_eq!(sw.stop, StopReason::Converged);
            assert!(sw.gap <= opts.eps * c, "C={c}: gap {}", sw.gap);
            assert!((sw.primal - sc.primal).abs() <= opts.eps * c, "C={c}");
            let dist = wc.iter().zip(ww).map(|(a, b)| (a - b).powi(2)).sum::<f64>();
            assert!(
                dist.sqrt() <= (2.0 * (sc.gap + sw.gap)).sqrt() + 1e-12,
                "C={c}"
            );
        }
        // The first C has nothing to start from: it is the cold solve, bit for bit.
        assert_eq!(cold[0].0, warm[0].0);
        // A single cold C is what `train` returns.
        let alone = train(
            &x,
            &labels,
            &groups,
            &oracles,
            &opts.with(|o| o.c = cs[2]).unwrap(),
            &mut |_, _| Ok(Control::Continue),
        )
        .unwrap();
        assert_eq!(alone.0, cold[2].0);
        assert_eq!(alone.1.n_iter, cold[2].1.n_iter);
    }

    /// A path fitted in pieces, each starting from the state the one before returned, is the
    /// path fitted in one call, bit for bit (SVMMapCV's search scores each C in between).
    #[test]
    fn a_path_fitted_in_pieces_is_the_path_fitted_at_once() {
        let d = 5;
        let (data, labels, codes) = problem(7, 40, d);
        let n = labels.len();
        let groups = QueryGroups::from_codes(&codes, 40).unwrap();
        let x = DenseView::new(&data, n, d).unwrap();
        let map = from_name("map").unwrap();
        let oracles = [map.as_ref()];
        let opts = Options::default().checked().unwrap();
        let cs = [0.01, 1.0, 100.0];
        let go = &mut |_: &IterationRecord, _: &[f64]| Ok(Control::Continue);
        let whole = train_path(&x, &labels, &groups, None, &oracles, &opts, &cs, true, go).unwrap();
        let mut state = None;
        for (c, (w, s)) in cs.iter().zip(&whole) {
            let (mut piece, last) = train_path_from(
                &x,
                &labels,
                &groups,
                None,
                &oracles,
                &opts,
                &[*c],
                true,
                state.as_ref(),
                go,
            )
            .unwrap();
            let (wp, sp) = piece.pop().unwrap();
            assert_eq!(&wp, w, "C={c}");
            assert_eq!(sp.n_iter, s.n_iter, "C={c}");
            assert_eq!(sp.primal.to_bits(), s.primal.to_bits(), "C={c}");
            state = last;
        }
    }

    /// A source whose every cut is `inner`'s with `shift` added to g (the rounds of a
    /// latent-target loss are such sources).
    struct Shifted<'s> {
        inner: &'s mut dyn CutSource,
        shift: Vec<f64>,
    }

    impl CutSource for Shifted<'_> {
        fn dim(&self) -> usize {
            self.inner.dim()
        }
        fn n_groups(&self) -> usize {
            self.inner.n_groups()
        }
        fn cuts(&mut self, w: &[f64]) -> Result<Vec<(f64, Vec<f64>)>> {
            let mut cuts = self.inner.cuts(w)?;
            for (_, g) in &mut cuts {
                for (v, s) in g.iter_mut().zip(&self.shift) {
                    *v += s;
                }
            }
            Ok(cuts)
        }
    }

    /// A solve of a shifted problem from the unshifted one's state moved by the difference
    /// (`WarmStart::shifted`) is certified like a cold solve of it: converged, its gap within
    /// eps C, its primal within eps C of the cold one's and recomputed exactly by an oracle
    /// pass at its w. The state handed on unmoved holds cuts of the other problem: with the
    /// shift along the old optimum, its first dual bound exceeds the shifted problem's
    /// optimum (what a solve from it would certify wrongly).
    #[test]
    fn a_shifted_warm_start_is_certified_like_a_cold_solve() {
        let d = 5;
        let (data, labels, codes) = problem(44, 60, d);
        let n = labels.len();
        let groups = QueryGroups::from_codes(&codes, 60).unwrap();
        let x = DenseView::new(&data, n, d).unwrap();
        let map = from_name("map").unwrap();
        let oracles = [map.as_ref()];
        let mut problem_a = RankingProblem::new(&x, &labels, &groups, 0.0).unwrap();
        problem_a.admit(&oracles);
        let mut base = QueryCuts {
            problem: problem_a,
            oracles: &oracles,
        };
        for c in [1.0, 100.0] {
            let opts = Options {
                c,
                ..Options::default()
            }
            .checked()
            .unwrap();
            let go = |_: &IterationRecord, _: &[f64]| Ok(Control::Continue);
            let (w_a, _, state) = solve_from(&mut base, &opts, None, &mut go.clone()).unwrap();
            let state = state.unwrap();
            // Along w_a, so that the shifted risk is 0.1 lower at the old optimum (w_a.shift
            // = 0.1) and the unmoved cuts overstate it there by 0.1 C, far above eps C.
            let square = dot(&w_a, &w_a);
            assert!(square > 0.0);
            let shift: Vec<f64> = w_a.iter().map(|v| 0.1 * v / square).collect();
            let mut shifted = Shifted {
                inner: &mut base,
                shift: shift.clone(),
            };
            let (_, cold, _) = solve_from(&mut shifted, &opts, None, &mut go.clone()).unwrap();
            let moved = state.shifted(&shift).unwrap();
            let (w, warm, _) =
                solve_from(&mut shifted, &opts, Some(&moved), &mut go.clone()).unwrap();
            assert_eq!(warm.stop, StopReason::Converged, "C={c}");
            assert!(warm.gap <= opts.eps * c, "C={c}: gap {}", warm.gap);
            assert!((warm.primal - cold.primal).abs() <= opts.eps * c, "C={c}");
            let cuts = shifted.cuts(&w).unwrap();
            let risk: f64 = cuts.iter().map(|(b, g)| (b - dot(&w, g)).max(0.0)).sum();
            let primal = 0.5 * dot(&w, &w) + c * risk;
            assert!((warm.primal - primal).abs() <= 1e-9 * primal.abs(), "C={c}");
            // Unmoved, the old cuts overstate the shifted risk: the first iteration's dual
            // bound lies above the shifted problem's optimum (at least cold.primal - eps C).
            let mut first_dual = None;
            let mut record = |r: &IterationRecord, _: &[f64]| {
                first_dual.get_or_insert(r.dual);
                Ok(Control::Stop)
            };
            solve_from(&mut shifted, &opts, Some(&state), &mut record).unwrap();
            assert!(
                first_dual.unwrap() > cold.primal + opts.eps * c,
                "C={c}: the unmoved state's bound {} is not above the optimum {}",
                first_dual.unwrap(),
                cold.primal
            );
        }
    }

    /// `problem`'s data with every column replaced by `k` threshold indicators 1[x > t] at
    /// evenly spaced thresholds over [-1, 1] (the columns a Binner makes: each a step of a
    /// cumulative code, strongly correlated with its neighbours).
    fn indicator_columns(data: &[f64], n: usize, d: usize, k: usize) -> Vec<f64> {
        let mut out = Vec::with_capacity(n * d * k);
        for r in 0..n {
            for j in 0..d {
                // Squash the heavy-tailed values of `problem` into (-1, 1) first.
                let v = data[r * d + j].tanh();
                for t in 0..k {
                    let threshold = -1.0 + 2.0 * (t as f64 + 0.5) / k as f64;
                    out.push(if v > threshold { 1.0 } else { 0.0 });
                }
            }
        }
        out
    }

    /// Cut blocks change the cutting-plane model, never the objective: at every C, on plain
    /// and on indicator columns, solves with 1, 3 and one block per query are each certified
    /// within eps C of the same optimum (gap <= tolerance, dual <= primal), so their primals
    /// differ by at most eps C; the primal each reports is the objective recomputed here from
    /// its w by brute force (every ranking of a query is not enumerable, so the risk is the
    /// 1-block cut's violation at w, an independent pass); and the result is the same for 1
    /// and 2 threads.
    #[test]
    fn cut_blocks_keep_the_objective_and_its_certificate() {
        use crate::runtime::pool::with_threads;
        let (d, n_queries) = (3, 40);
        let (data, labels, codes) = problem(31, n_queries, d);
        let n = labels.len();
        let groups = QueryGroups::from_codes(&codes, n_queries).unwrap();
        let binned = indicator_columns(&data, n, d, 8);
        let plain = DenseView::new(&data, n, d).unwrap();
        let steps = DenseView::new(&binned, n, d * 8).unwrap();
        let map = from_name("map").unwrap();
        let oracles = [map.as_ref()];
        for (name, x) in [("plain", &plain), ("indicators", &steps)] {
            for c in [0.1, 10.0, 1000.0] {
                let solve = |blocks: usize, threads: usize| {
                    let opts = Options {
                        c,
                        n_blocks: blocks,
                        ..Options::default()
                    }
                    .checked()
                    .unwrap();
                    with_threads(threads, || {
                        train(x, &labels, &groups, &oracles, &opts, &mut |_, _| {
                            Ok(Control::Continue)
                        })
                    })
                    .unwrap()
                    .unwrap()
                };
                let (w1, s1) = solve(1, 1);
                for blocks in [3, crate::solver::PER_QUERY] {
                    let (w, s) = solve(blocks, 1);
                    let tag = format!("{name}, C={c}, {blocks} blocks");
                    assert_eq!(s.stop, StopReason::Converged, "{tag}");
                    assert!(s.dual <= s.primal, "{tag}");
                    assert!(s.gap <= s.tolerance && s.tolerance == 1e-3 * c, "{tag}");
                    assert!((s.primal - s1.primal).abs() <= 1e-3 * c, "{tag}");
                    // The objective at w from one aggregated oracle pass.
                    let mut one = RankingProblem::new(x, &labels, &groups, 0.0).unwrap();
                    one.admit(&oracles);
                    let n_usable = one.counts.usable as f64;
                    let (b, g) = &one.cut_sums(&w, &oracles)[0];
                    let risk = (b - dot(&w, g)) / n_usable;
                    let objective = 0.5 * dot(&w, &w) + c * risk;
                    assert!(
                        (objective - s.primal).abs() <= 1e-9 * objective.max(1.0),
                        "{tag}: {objective} vs {}",
                        s.primal
                    );
                    let (w2, s2) = solve(blocks, 2);
                    assert_eq!(w, w2, "{tag}: threads");
                    assert_eq!(s.n_iter, s2.n_iter, "{tag}: threads");
                }
                assert!(!w1.is_empty());
            }
        }
    }

    #[test]
    fn weights_of_one_give_the_unweighted_model_bit_for_bit() {
        let d = 5;
        let (data, labels, codes) = problem(8, 50, d);
        let n = labels.len();
        let groups = QueryGroups::from_codes(&codes, 50).unwrap();
        let x = DenseView::new(&data, n, d).unwrap();
        let map = from_name("map").unwrap();
        let oracles = [map.as_ref()];
        let opts = Options {
            c: 10.0,
            ..Options::default()
        }
        .checked()
        .unwrap();
        let ones = vec![1.0; 50];
        let run = |weights: Option<&[f64]>| {
            train_path(
                &x,
                &labels,
                &groups,
                weights,
                &oracles,
                &opts,
                &[opts.c],
                false,
                &mut |_, _| Ok(Control::Continue),
            )
            .unwrap()
            .pop()
            .unwrap()
        };
        let (plain, weighted) = (run(None), run(Some(&ones)));
        assert_eq!(plain.0, weighted.0);
        assert_eq!(plain.1.primal.to_bits(), weighted.1.primal.to_bits());
        // Doubling every weight doubles the risk, which is the problem at 2C.
        let twos = vec![2.0; 50];
        let doubled = run(Some(&twos));
        let at_2c = train_path(
            &x,
            &labels,
            &groups,
            None,
            &oracles,
            &opts.with(|o| o.c = 20.0).unwrap(),
            &[20.0],
            false,
            &mut |_, _| Ok(Control::Continue),
        )
        .unwrap()
        .pop()
        .unwrap();
        assert!((doubled.1.primal - at_2c.1.primal).abs() <= 20.0 * opts.eps);
    }
}
