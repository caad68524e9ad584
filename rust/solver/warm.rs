//! The state from which a solve at another C starts (`WarmStart`), and its rounded form that
//! a search holds between fits.

use super::qp::{dot, Cut};
use crate::error::{Error, Result};

/// Where a solve of the same problem at another C may start: the final working set (cuts and
/// dual variables) and iterate of a solve at `c`.
///
/// Why this is exact. Each cut (b_j, g_j) is an average of the oracles' constraints, and
/// b_j - w.g_j <= the risk at w whatever C is, so the cuts of a solve at C stay valid lower
/// bounds of the risk at C'; only the dual's caps sum_j a_j <= C change, and a C'/C is feasible
/// for them. The working set's dual at C' therefore still bounds min P from below, and the
/// stopping test P(w_b) - D <= eps C' certifies the result exactly as in a cold start. The
/// iterate w_b keeps its risk, so P at C' is known there without an oracle pass:
/// P'(w_b) = 1/2 ||w_b||^2 + C' risk(w_b).
///
/// Why the iterate matters. With the cuts alone, the first iterate is the optimum of the old
/// cuts' model at C', which overshoots where the model is flat; OCAS then starts its
/// stabilization from there. Starting w_b at the previous optimum keeps the stabilization
/// centre where the risk is known, and the first proposal w_c is judged against it. On
/// MQ2008 Fold 1 over C = 0.01, 0.1, ..., 1000 (each C from the one before): 98 oracle passes
/// instead of 169 for cold starts (benchmarks/cv_path.py --path), where seeding the cuts
/// alone took 128 when this was developed (and 31 iterations
/// at C = 100, more than the cold start's 20); with the columns rescaled as in
/// benchmarks/solver.py, 242 passes instead of 759, and 384 with the cuts alone. Every cut is
/// handed on, the inactive ones too: keeping only the active cuts made the QPs smaller but
/// took about 20% more passes (benchmarks/cv_path.py). With cut blocks the retired cuts
/// (`QP_IDLE`) are handed on as well, with a = 0, and start in the QP at the new C.
///
/// A problem whose every cut is the old one's plus a fixed vector (`shifted`; the rounds of
/// a latent-target loss, whose sources subtract a constant sum from the same oracles' cuts)
/// can start from the same state: the moved cuts are exactly the new problem's cuts at the
/// same points, so they bound its risk as the old ones bounded the old risk. Only the risk at
/// w changes, and it is measured again by the first iteration, which evaluates w.
///
/// Why the held cuts are rounded. A search keeps one state per candidate path and split
/// between its fits (55 at once at C = 1 on a 573k-document fold, most of them GA2M working
/// sets of 16,500 dimensions: 80 MB), so the states of a C path (`rounded`, which
/// `train_path_from` applies between its Cs and to the state it returns) keep every g in f32,
/// half the memory, with the Euclidean norm e_j of its rounding error. A rounded cut
/// (b_j, g'_j) with |g_j - g'_j| <= e_j bounds the risk only where |w| is bounded:
/// b_j - w.g'_j <= b_j - w.g_j + |w| e_j. At C' the minimizer w* has
/// 1/2 |w*|^2 <= P'(w*) <= P'(w_b) = 1/2 |w_b|^2 + C' risk(w_b), so |w*| <= rho =
/// sqrt(2 P'(w_b)), and `cuts_at` lowers every b_j by rho e_j: the cut (b_j - rho e_j, g'_j)
/// is below the risk on the ball |w| <= rho, which holds w*. Any working-set dual is the
/// minimum of a model below the risk at w*, hence at most P'(w*) = min P', and the stopping
/// test certifies the result exactly as with the f64 cuts. The offsets move by about
/// 2^-24 |w| |g| (a relative 6e-8), so the path's fits take the same iterations within one or
/// two, and their models differ from f64 cuts' in the last digits.
#[derive(Debug, Clone)]
pub struct WarmStart {
    c: f64,
    cuts: HeldCuts,
    pub(super) alpha: Vec<f64>,
    pub(super) w: Vec<f64>,
    /// sum_s max(0, b_s - w.g_s) of the cuts taken at w: the risk at w, summed over groups;
    /// None after `shifted`, until w is evaluated again.
    pub(super) risk: Option<f64>,
    /// The fingerprint of the C path's problem (`api::problem_key`); None for a single solve's
    /// state, which its caller matches with its problem.
    problem: Option<u64>,
}

/// The cuts of a `WarmStart`: as the working set had them, or rounded (`WarmStart::rounded`).
#[derive(Debug, Clone)]
enum HeldCuts {
    Exact(Vec<Cut>),
    Rounded(Vec<RoundedCut>),
}

/// A cut with g rounded to f32, and `err` >= |g - g'|, the Euclidean norm of the rounding error.
#[derive(Debug, Clone)]
struct RoundedCut {
    g: Vec<f32>,
    b: f64,
    err: f64,
    group: usize,
}

/// The error norm is summed in f64, whose own rounding (a relative d 2^-53 at most) this
/// factor covers for any dimension below 10^6.
const ERR_MARGIN: f64 = 1.0 + 1e-9;
/// The largest lowering of a rounded cut, as a fraction of its value's scale at the iterate,
/// with which it is kept (see `WarmStart::start_at`).
const MAX_LOWERING: f64 = 1e-6;

impl RoundedCut {
    /// The cut rounded; its values are within f32's range (see `WarmStart::rounded`).
    fn of(cut: &Cut) -> RoundedCut {
        let g: Vec<f32> = cut.g.iter().map(|&v| v as f32).collect();
        // Each difference is exact (Sterbenz: v and its rounding are within a factor of 2).
        let square: f64 = cut
            .g
            .iter()
            .zip(&g)
            .map(|(&v, &r)| (v - f64::from(r)) * (v - f64::from(r)))
            .sum();
        RoundedCut {
            g,
            b: cut.b,
            err: square.sqrt() * ERR_MARGIN,
            group: cut.group,
        }
    }
}

impl WarmStart {
    pub(super) fn new(c: f64, cuts: Vec<Cut>, alpha: Vec<f64>, w: Vec<f64>, risk: f64) -> Self {
        WarmStart {
            c,
            cuts: HeldCuts::Exact(cuts),
            alpha,
            w,
            risk: Some(risk),
            problem: None,
        }
    }

    /// The state stamped with the fingerprint of the path's problem.
    pub(super) fn of_problem(self, key: u64) -> WarmStart {
        WarmStart {
            problem: Some(key),
            ..self
        }
    }

    /// Whether the state is one of a path of the problem with this fingerprint.
    pub(super) fn is_of(&self, key: u64) -> bool {
        self.problem == Some(key)
    }

    /// The same state with its cuts in f32 (see the type's documentation), or as it is when
    /// the risk at its iterate is unknown (after `shifted`) or a value is beyond f32's range.
    /// Each f64 cut goes as soon as it is rounded, so the two forms are never held whole.
    pub fn rounded(self) -> WarmStart {
        let in_range = |v: &f64| (*v as f32).is_finite();
        let cuts = match self.cuts {
            HeldCuts::Exact(cuts)
                if self.risk.is_some() && cuts.iter().all(|c| c.g.iter().all(in_range)) =>
            {
                HeldCuts::Rounded(cuts.into_iter().map(|cut| RoundedCut::of(&cut)).collect())
            }
            kept => kept,
        };
        WarmStart { cuts, ..self }
    }

    /// Whether the state is one of a problem in `d` dimensions with `n_slacks` slacks.
    pub(super) fn fits(&self, d: usize, n_slacks: usize) -> bool {
        let ok = |len: usize, group: usize| len == d && group < n_slacks;
        self.w.len() == d
            && match &self.cuts {
                HeldCuts::Exact(cuts) => cuts.iter().all(|c| ok(c.g.len(), c.group)),
                HeldCuts::Rounded(cuts) => cuts.iter().all(|c| ok(c.g.len(), c.group)),
            }
    }

    /// The cuts and dual variables with which a solve at `c` starts: the exact cuts as they
    /// are, the rounded ones with b lowered by rho e (see the type's documentation), and the
    /// dual variables scaled to the new caps, which keeps them feasible.
    ///
    /// A rounded cut whose lowering is not negligible beside its value at the iterate
    /// (rho e > `MAX_LOWERING` (|b| + |w| |g'|), where rho has outgrown |w|: C jumped by many
    /// orders of magnitude) is left out with its dual variable: it would hardly bound the
    /// risk, and the remaining dual variables stay feasible. At C = 10^300 after C = 1 this
    /// keeps the exact cuts' outcome, a first step that overflows float64 and names C.
    pub(super) fn start_at(&self, c: f64) -> (Vec<Cut>, Vec<f64>) {
        let scale = c / self.c;
        let alpha = self.alpha.iter().map(|a| a * scale);
        match &self.cuts {
            HeldCuts::Exact(cuts) => (cuts.clone(), alpha.collect()),
            HeldCuts::Rounded(cuts) => {
                let risk = self
                    .risk
                    .expect("`rounded` keeps the exact cuts without a risk");
                let norm_w = dot(&self.w, &self.w).sqrt();
                let rho = (norm_w * norm_w + 2.0 * c * risk).sqrt();
                cuts.iter()
                    .zip(alpha)
                    .filter_map(|(r, a)| {
                        let g: Vec<f64> = r.g.iter().map(|&v| f64::from(v)).collect();
                        let lowering = rho * r.err;
                        let scale = r.b.abs() + norm_w * dot(&g, &g).sqrt();
                        (lowering <= MAX_LOWERING * scale).then(|| {
                            let b = r.b - lowering;
                            (
                                Cut {
                                    g,
                                    b,
                                    group: r.group,
                                },
                                a,
                            )
                        })
                    })
                    .unzip()
            }
        }
    }

    /// The bytes the state's vectors take (cuts, dual variables and iterate).
    pub fn nbytes(&self) -> usize {
        let cuts = match &self.cuts {
            HeldCuts::Exact(cuts) => cuts.iter().map(|c| 8 * c.g.len() + 24).sum::<usize>(),
            HeldCuts::Rounded(cuts) => cuts.iter().map(|c| 4 * c.g.len() + 32).sum(),
        };
        cuts + 8 * (self.alpha.len() + self.w.len())
    }

    /// The state for the problem whose cuts are this one's with `delta` added to every g
    /// (see the type's documentation); `delta` is in the units of the cuts (the sums of a
    /// source times 1/n). A rounded state (a C path's) cannot be moved: its cuts' offsets
    /// need the risk at the iterate, which the move makes unknown.
    pub fn shifted(&self, delta: &[f64]) -> Result<WarmStart> {
        if delta.len() != self.w.len() || delta.iter().any(|v| !v.is_finite()) {
            return Err(Error::input(format!(
                "a warm start's shift needs {} finite values, got {} values",
                self.w.len(),
                delta.len()
            )));
        }
        let HeldCuts::Exact(cuts) = &self.cuts else {
            return Err(Error::input(
                "a C path's warm state cannot be shifted: only a single solve's can",
            ));
        };
        let mut cuts = cuts.clone();
        for cut in &mut cuts {
            for (g, d) in cut.g.iter_mut().zip(delta) {
                *g += d;
            }
        }
        Ok(WarmStart {
            cuts: HeldCuts::Exact(cuts),
            risk: None,
            problem: None,
            ..self.clone()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A state of `n_cuts` cuts in `d` dimensions whose values span many binades, as the
    /// sums of a search's cuts do.
    fn random_state(rng: &mut ChaCha8Rng, d: usize, n_cuts: usize) -> WarmStart {
        let value = |rng: &mut ChaCha8Rng| {
            rng.random_range(-1.0..1.0) * 10f64.powf(rng.random_range(-6.0..3.0))
        };
        let cuts = (0..n_cuts)
            .map(|j| Cut {
                g: (0..d).map(|_| value(rng)).collect(),
                b: rng.random_range(0.0..2.0),
                group: j % 2,
            })
            .collect();
        let alpha = (0..n_cuts).map(|_| rng.random_range(0.0..0.1)).collect();
        let w = (0..d).map(|_| value(rng)).collect();
        WarmStart::new(1.0, cuts, alpha, w, rng.random_range(0.1..1.0))
    }

    fn exact_cuts(state: &WarmStart) -> Vec<Cut> {
        match &state.cuts {
            HeldCuts::Exact(cuts) => cuts.clone(),
            HeldCuts::Rounded(_) => panic!("exact cuts expected"),
        }
    }

    /// Every rounded cut, lowered for a solve at C', is below its exact cut everywhere on the
    /// ball |w| <= rho (so below the risk where the minimizer can be): at random points, at
    /// the worst point (rho times the unit vector of the rounding error), and on the sphere's
    /// points along each cut's own g. The bound is derived by hand in the type's documentation;
    /// here it is checked against the f64 cuts the rounding started from.
    #[test]
    fn lowered_rounded_cuts_are_below_the_exact_cuts_on_the_ball() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for trial in 0..20 {
            let state = random_state(&mut rng, 1 + trial * 7, 5);
            let exact = exact_cuts(&state);
            let rounded = state.clone().rounded();
            assert!(matches!(rounded.cuts, HeldCuts::Rounded(_)));
            for &c in &[0.5, 1.0, 10.0, 1000.0] {
                let (cuts, _) = rounded.start_at(c);
                let risk = state.risk.unwrap();
                let rho = (dot(&state.w, &state.w) + 2.0 * c * risk).sqrt();
                // |w| dominates rho here, so no cut is left out (see `start_at`).
                assert_eq!(cuts.len(), exact.len());
                for (cut, e) in cuts.iter().zip(&exact) {
                    let diff: Vec<f64> = cut.g.iter().zip(&e.g).map(|(a, b)| a - b).collect();
                    let norm = dot(&diff, &diff).sqrt();
                    let mut points: Vec<Vec<f64>> = (0..50)
                        .map(|_| {
                            let v: Vec<f64> = (0..e.g.len())
                                .map(|_| rng.random_range(-1.0..1.0))
                                .collect();
                            let n = dot(&v, &v).sqrt();
                            v.iter()
                                .map(|x| x * rho * rng.random_range(0.0..1.0) / n)
                                .collect()
                        })
                        .collect();
                    if norm > 0.0 {
                        points.push(diff.iter().map(|x| x * rho / norm).collect());
                    }
                    for w in points {
                        assert!(
                            cut.b - dot(&w, &cut.g) <= e.b - dot(&w, &e.g),
                            "trial {trial}, C {c}"
                        );
                    }
                }
            }
        }
    }

    /// A rounded state holds its cuts in half the bytes, keeps w, the dual variables and the
    /// risk exact, and starts a solve at its own C from cuts within f32 rounding of the exact
    /// ones, with the same dual variables.
    #[test]
    fn a_rounded_state_takes_half_the_bytes_and_keeps_its_iterate() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let state = random_state(&mut rng, 1000, 20);
        let rounded = state.clone().rounded();
        assert!(
            rounded.nbytes() * 10 < state.nbytes() * 6,
            "{} {}",
            rounded.nbytes(),
            state.nbytes()
        );
        assert_eq!(
            (rounded.w.clone(), rounded.alpha.clone(), rounded.risk),
            (state.w.clone(), state.alpha.clone(), state.risk)
        );
        let (cuts, alpha) = rounded.start_at(1.0);
        assert_eq!((cuts.len(), alpha), (20, state.alpha.clone()));
        let norm_w = dot(&state.w, &state.w).sqrt();
        for (cut, e) in cuts.iter().zip(exact_cuts(&state)) {
            assert_eq!(cut.group, e.group);
            // Lowered, by at most the kept fraction of the cut's scale at w.
            let scale = e.b.abs() + norm_w * dot(&e.g, &e.g).sqrt();
            assert!(cut.b <= e.b && cut.b >= e.b - 1.01 * MAX_LOWERING * scale);
            for (x, y) in cut.g.iter().zip(&e.g) {
                assert!((x - y).abs() <= y.abs() * f64::from(f32::EPSILON));
            }
        }
    }

    /// After a jump of C by many orders of magnitude the lowering outgrows the cuts, which are
    /// left out with their dual variables; a state without a risk (after `shifted`) is not
    /// rounded, and a rounded state is not shifted.
    #[test]
    fn rounding_leaves_out_what_it_cannot_bound() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let state = random_state(&mut rng, 30, 6);
        let (cuts, alpha) = state.clone().rounded().start_at(1e300);
        assert!(cuts.is_empty() && alpha.is_empty());
        let moved = state.shifted(&[0.0; 30]).unwrap().rounded();
        assert!(matches!(moved.cuts, HeldCuts::Exact(_)));
        assert!(state.clone().rounded().shifted(&[0.0; 30]).is_err());
        // A value beyond f32's range keeps the state exact.
        let mut far = state;
        if let HeldCuts::Exact(cuts) = &mut far.cuts {
            cuts[3].g[7] = 1e300;
        }
        assert!(matches!(far.rounded().cuts, HeldCuts::Exact(_)));
    }
}
