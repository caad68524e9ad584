//! The exact solve of the working-set dual (mod.rs) on a given support, which turns SMO's
//! approximate optimum into the exact one: with S the cuts whose a_j > 0 and the groups whose
//! cap binds, the optimality (KKT) conditions on S are a linear system (Gaussian elimination,
//! linalg.rs), corrected over a few rounds (the support may change). Returns whether a
//! solution was accepted; otherwise a is left as SMO gave it. The plain method's second stage
//! and part of OCAS's fallback.

use super::linalg::solve_dense;
use super::WorkingSet;

impl WorkingSet {
    /// The last steps of an active-set method: solves the optimality (KKT) conditions exactly
    /// on a support, i.e. a set S of cuts with a_j > 0 and, per group, whether its cap is
    /// reached. On the support the gradients equal the group's multiplier,
    ///
    ///   sum_{k in S} G_jk a_k + lambda_s(j) = b_j   (j in S),
    ///   sum_{j in S_s} a_j = C_s                     (capped groups; else lambda_s = 0),
    ///
    /// a linear system of |S| + (capped groups) unknowns, solved by Gaussian elimination with
    /// partial pivoting. Starting from SMO's support, a few rounds correct it (drop cuts whose
    /// a would be <= 0, add the cut that violates optimality most, release a cap whose
    /// multiplier is negative, bind a cap that is exceeded). The solution is accepted when it
    /// is feasible and no cut's gradient exceeds its group's multiplier by more than `tol`
    /// (raised to the rounding floor): a is then the QP's optimum up to rounding, and w a
    /// continuous function of the cuts. Otherwise (no support found in a few rounds, a
    /// singular system) a is left as it was. Returns whether a solution was accepted.
    pub fn polish(&mut self, tol: f64) -> bool {
        const MAX_ROUNDS: usize = 32;
        self.refresh_ga();
        let tol = tol.max(self.noise_floor());
        let m = self.cuts.len();
        let n_groups = self.caps.len();
        let mut in_support: Vec<bool> = self.alpha.iter().map(|&a| a > 0.0).collect();
        let mut used = vec![0.0; n_groups];
        for (c, &a) in self.cuts.iter().zip(&self.alpha) {
            used[c.group] += a;
        }
        // SMO clips a group onto its cap exactly, up to the rounding of the sum.
        let mut capped: Vec<bool> = (0..n_groups)
            .map(|s| self.caps[s] - used[s] <= 1e-12 * self.caps[s])
            .collect();
        for _round in 0..MAX_ROUNDS {
            let support: Vec<usize> = (0..m).filter(|&j| in_support[j]).collect();
            if support.is_empty() {
                return false;
            }
            let mut lam_index = vec![None; n_groups];
            let mut n_lam = 0;
            for &j in &support {
                let s = self.cuts[j].group;
                if capped[s] && lam_index[s].is_none() {
                    lam_index[s] = Some(support.len() + n_lam);
                    n_lam += 1;
                }
            }
            let n = support.len() + n_lam;
            let mut mat = vec![vec![0.0; n]; n];
            let mut rhs = vec![0.0; n];
            for (i, &j) in support.iter().enumerate() {
                for (k, &l) in support.iter().enumerate() {
                    mat[i][k] = self.gram[j][l];
                }
                if let Some(li) = lam_index[self.cuts[j].group] {
                    mat[i][li] = 1.0;
                    mat[li][i] = 1.0;
                }
                rhs[i] = self.cuts[j].b;
            }
            for (li, &cap) in lam_index.iter().zip(&self.caps) {
                if let Some(li) = *li {
                    rhs[li] = cap;
                }
            }
            let Some(x) = solve_dense(mat, rhs) else {
                return false;
            };
            let lambda: Vec<f64> = (0..n_groups)
                .map(|s| lam_index[s].map_or(0.0, |li| x[li]))
                .collect();
            // A negative multiplier means the cap does not bind.
            if let Some(s) = (0..n_groups).find(|&s| lam_index[s].is_some() && lambda[s] < -tol) {
                capped[s] = false;
                continue;
            }
            let mut alpha = vec![0.0; m];
            for (i, &j) in support.iter().enumerate() {
                alpha[j] = x[i];
            }
            // Cuts that would need a <= 0 leave the support.
            let dropped: Vec<usize> = support
                .iter()
                .copied()
                .filter(|&j| alpha[j] <= 0.0)
                .collect();
            if !dropped.is_empty() {
                for j in dropped {
                    in_support[j] = false;
                }
                continue;
            }
            let mut used = vec![0.0; n_groups];
            for (c, &a) in self.cuts.iter().zip(&alpha) {
                used[c.group] += a;
            }
            // An exceeded cap binds.
            if let Some(s) = (0..n_groups).find(|&s| !capped[s] && used[s] > self.caps[s]) {
                capped[s] = true;
                continue;
            }
            let ga: Vec<f64> = self
                .gram
                .iter()
                .map(|row| row.iter().zip(&alpha).map(|(g, a)| g * a).sum())
                .collect();
            // The cut outside the support whose gradient exceeds its multiplier most joins it.
            let excess = |j: usize| self.cuts[j].b - ga[j] - lambda[self.cuts[j].group].max(0.0);
            let worst = (0..m)
                .filter(|&j| !in_support[j])
                .map(|j| (excess(j), j))
                .max_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((e, j)) = worst {
                if e > tol {
                    in_support[j] = true;
                    continue;
                }
            }
            if support.iter().any(|&j| excess(j).abs() > tol) {
                return false;
            }
            for (s, (&u, &cap)) in used.iter().zip(&self.caps).enumerate() {
                if u > cap {
                    // Within rounding of the cap: scale onto it so that a stays feasible.
                    let f = cap / u;
                    for (c, a) in self.cuts.iter().zip(alpha.iter_mut()) {
                        if c.group == s {
                            *a *= f;
                        }
                    }
                }
            }
            self.alpha = alpha;
            self.refresh_ga();
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::qp::Cut;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn polish_reaches_the_optimum_that_smo_approaches() {
        // On random working sets (one or two slack groups), a loosely solved SMO followed by
        // the exact solve on its support must give the w that SMO reaches at a tolerance near
        // machine precision, and the same dual objective.
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut accepted = 0;
        let trials = 200;
        for trial in 0..trials {
            let dim = rng.random_range(2..8);
            let m = rng.random_range(1..12);
            let n_groups = 1 + trial % 2;
            let caps: Vec<f64> = (0..n_groups)
                .map(|_| [0.01, 1.0, 100.0][rng.random_range(0..3)])
                .collect();
            let cuts: Vec<Cut> = (0..m)
                .map(|_| Cut {
                    g: (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect(),
                    b: rng.random_range(0.0..1.0),
                    group: rng.random_range(0..n_groups),
                })
                .collect();
            let mut loose = WorkingSet::new(dim, caps.clone());
            let mut tight = WorkingSet::new(dim, caps.clone());
            for c in &cuts {
                loose.add(c.clone());
                tight.add(c.clone());
            }
            loose.solve(1e-3, 1_000_000);
            tight.solve(1e-15, 10_000_000);
            if loose.polish(1e-12) {
                accepted += 1;
                let (a, b) = (loose.weights(), tight.weights());
                let dist = a
                    .iter()
                    .zip(&b)
                    .map(|(x, y)| (x - y).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(dist <= 1e-6, "trial {trial}: |w_polish - w_smo| = {dist}");
                let (da, db) = (loose.dual_objective(), tight.dual_objective());
                assert!(
                    da >= db - 1e-12 * db.abs().max(1.0),
                    "trial {trial}: {da} < {db}"
                );
                assert!(
                    da <= db + 1e-9 * db.abs().max(1.0),
                    "trial {trial}: {da} > {db}"
                );
                for (s, &cap) in caps.iter().enumerate() {
                    let used: f64 = (0..m)
                        .filter(|&j| cuts[j].group == s)
                        .map(|j| loose.alpha()[j])
                        .sum();
                    assert!(used <= cap);
                }
                assert!(loose.alpha().iter().all(|&a| a >= 0.0));
            }
        }
        // The exact solve is the common case, not the exception.
        assert!(
            accepted >= trials * 3 / 4,
            "accepted {accepted} of {trials}"
        );
    }
}
