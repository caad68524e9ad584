//! Coordinate ascent by pairs of variables (SMO) for the working-set dual of mod.rs,
//! max_a D(a) = sum_j a_j b_j - 1/2 a'Ga subject to a_j >= 0 and sum_{j in group s} a_j <= C_s.
//! Slow on ill-conditioned working sets, where it is the fallback of the exact solvers; the
//! plain method's first stage, which finds the support that polish.rs solves exactly.
//!
//! Method. Each group gets a pseudo-variable u_s = C_s - sum_{j in s} a_j >= 0 with gradient 0,
//! which turns the group's inequality into an equality, as in an SMO solver. A step moves mass
//! between the variable with the largest gradient grad_j = b_j - (Ga)_j and the positive variable
//! with the smallest, by the exact line maximum clipped to the feasible range (Platt's SMO with
//! maximal violating pairs: Keerthi et al., "Improvements to Platt's SMO algorithm for SVM
//! classifier design", Neural Computation 13, 2001). The group is optimal when the two gradients
//! differ by at most `tol`; then the working-set duality gap of the group is at most C_s * tol.
//! Solves are warm-started from the previous a.
//!
//! Returns the number of steps taken; a stays feasible at every step, so stopping early at
//! `max_steps` only leaves the dual objective lower (the cutting-plane loop measures the gap).

use super::WorkingSet;

impl WorkingSet {
    /// Maximizes D(a) until every group's gradient spread is at most `tol`.
    /// A `tol` below the rounding floor of the gradients is raised to it (asking for less
    /// would only spin until max_steps).
    pub fn solve(&mut self, tol: f64, max_steps: usize) -> usize {
        self.refresh_ga();
        let tol = tol.max(self.noise_floor());
        let m = self.cuts.len();
        let n_groups = self.caps.len();
        let mut steps = 0;
        while steps < max_steps {
            // Most violating pair over all groups.
            let mut best: Option<(f64, Var, Var)> = None;
            for s in 0..n_groups {
                let used: f64 = (0..m)
                    .filter(|&j| self.cuts[j].group == s)
                    .map(|j| self.alpha[j])
                    .sum();
                let free = self.caps[s] - used;
                let (mut up, mut up_grad) = (Var::Slack(s), 0.0);
                let (mut down, mut down_grad) = (Var::Slack(s), f64::INFINITY);
                if free > 0.0 {
                    down_grad = 0.0;
                }
                for j in (0..m).filter(|&j| self.cuts[j].group == s) {
                    let grad = self.cuts[j].b - self.ga[j];
                    if grad > up_grad {
                        up = Var::Cut(j);
                        up_grad = grad;
                    }
                    if self.alpha[j] > 0.0 && grad < down_grad {
                        down = Var::Cut(j);
                        down_grad = grad;
                    }
                }
                let violation = up_grad - down_grad;
                if violation > tol && best.as_ref().is_none_or(|b| violation > b.0) {
                    best = Some((violation, up, down));
                }
            }
            let Some((violation, up, down)) = best else {
                break;
            };
            let available = match down {
                Var::Cut(j) => self.alpha[j],
                Var::Slack(s) => {
                    self.caps[s]
                        - (0..m)
                            .filter(|&j| self.cuts[j].group == s)
                            .map(|j| self.alpha[j])
                            .sum::<f64>()
                }
            };
            let curvature =
                self.entry(up, up) + self.entry(down, down) - 2.0 * self.entry(up, down);
            let t = if curvature > 1e-300 {
                (violation / curvature).min(available)
            } else {
                available
            };
            if t <= 0.0 {
                break;
            }
            if let Var::Cut(u) = up {
                self.alpha[u] += t;
                for k in 0..m {
                    self.ga[k] += t * self.gram[k][u];
                }
            }
            if let Var::Cut(d) = down {
                self.alpha[d] = if t >= available {
                    0.0
                } else {
                    self.alpha[d] - t
                };
                for k in 0..m {
                    self.ga[k] -= t * self.gram[k][d];
                }
            }
            steps += 1;
        }
        self.refresh_ga();
        steps
    }

    fn entry(&self, a: Var, b: Var) -> f64 {
        match (a, b) {
            (Var::Cut(i), Var::Cut(j)) => self.gram[i][j],
            _ => 0.0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Var {
    Cut(usize),
    Slack(usize),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::qp::{dot, Cut};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Projected gradient ascent on the same dual, an independent (slow) solver.
    fn reference_dual(cuts: &[Cut], cap: f64) -> f64 {
        let m = cuts.len();
        let g: Vec<Vec<f64>> = cuts
            .iter()
            .map(|a| cuts.iter().map(|b| dot(&a.g, &b.g)).collect())
            .collect();
        let lipschitz: f64 = g
            .iter()
            .map(|r| r.iter().map(|v| v.abs()).sum::<f64>())
            .fold(0.0, f64::max);
        let step = 1.0 / lipschitz.max(1e-12);
        let mut a = vec![0.0; m];
        for _ in 0..200_000 {
            let grad: Vec<f64> = (0..m)
                .map(|j| cuts[j].b - (0..m).map(|k| g[j][k] * a[k]).sum::<f64>())
                .collect();
            let y: Vec<f64> = a.iter().zip(&grad).map(|(x, d)| x + step * d).collect();
            a = project_capped_simplex(&y, cap);
        }
        (0..m).map(|j| a[j] * cuts[j].b).sum::<f64>()
            - 0.5
                * (0..m)
                    .map(|j| (0..m).map(|k| a[j] * g[j][k] * a[k]).sum::<f64>())
                    .sum::<f64>()
    }

    /// Euclidean projection onto {a >= 0, sum a <= cap}, by bisection on the shift.
    fn project_capped_simplex(y: &[f64], cap: f64) -> Vec<f64> {
        let clipped: Vec<f64> = y.iter().map(|v| v.max(0.0)).collect();
        if clipped.iter().sum::<f64>() <= cap {
            return clipped;
        }
        let (mut lo, mut hi) = (0.0, y.iter().cloned().fold(0.0, f64::max));
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            let s: f64 = y.iter().map(|v| (v - mid).max(0.0)).sum();
            if s > cap {
                lo = mid
            } else {
                hi = mid
            }
        }
        y.iter().map(|v| (v - hi).max(0.0)).collect()
    }

    #[test]
    fn matches_projected_gradient_on_random_problems() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for trial in 0..40 {
            let dim = rng.random_range(1..5);
            let m = rng.random_range(1..7);
            let cap = [0.1, 1.0, 10.0][trial % 3];
            let cuts: Vec<Cut> = (0..m)
                .map(|_| Cut {
                    g: (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect(),
                    b: rng.random_range(0.0..1.0),
                    group: 0,
                })
                .collect();
            let mut ws = WorkingSet::new(dim, vec![cap]);
            for c in &cuts {
                ws.add(c.clone());
                ws.solve(1e-12, 1_000_000);
            }
            let reference = reference_dual(&cuts, cap);
            let ours = ws.dual_objective();
            assert!(
                ours >= reference - 1e-7,
                "trial {trial}: ours {ours} < reference {reference}"
            );
            assert!(
                ours <= reference + 1e-7,
                "trial {trial}: ours {ours} > reference {reference}"
            );
            let used: f64 = ws.alpha().iter().sum();
            assert!(used <= cap * (1.0 + 1e-12));
            assert!(ws.alpha().iter().all(|&a| a >= 0.0));
        }
    }

    #[test]
    fn single_cut_has_closed_form() {
        // One cut: max a b - a^2 |g|^2 / 2 over 0 <= a <= C gives a = min(C, b / |g|^2).
        let mut ws = WorkingSet::new(2, vec![0.5]);
        ws.add(Cut {
            g: vec![3.0, 4.0],
            b: 2.0,
            group: 0,
        });
        ws.solve(1e-14, 1000);
        assert!((ws.alpha()[0] - 2.0 / 25.0).abs() < 1e-15);
        let mut ws = WorkingSet::new(2, vec![0.01]);
        ws.add(Cut {
            g: vec![3.0, 4.0],
            b: 2.0,
            group: 0,
        });
        ws.solve(1e-14, 1000);
        assert!((ws.alpha()[0] - 0.01).abs() < 1e-15);
    }
}
