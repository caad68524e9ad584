//! An exact primal active-set method for the working-set dual of mod.rs, max_a D(a) subject to
//! a_j >= 0 and sum_{j in group s} a_j <= C_s (Nocedal and Wright, Numerical Optimization,
//! 2006, section 16.5), warm-started from the current a: OCAS's QP. Each step solves the
//! equality-constrained problem on the free cuts F and the capped groups K and moves towards
//! its solution as far as feasibility allows. The solve goes through a Cholesky factor of
//! G_FF updated as single cuts join and leave F, and the Schur complement of the capped
//! groups (factor.rs): O(|F|^2) per step. When G_FF is singular or nearly so (a cut dependent
//! on the others joined F), the step is the dense one, the KKT system built and solved from
//! scratch (linalg.rs, which also finds a kernel direction when it is singular), until the
//! dependency is gone; `solve_active_set_dense` takes every step that way (the method before
//! the factor, kept for the tests and the benchmarks). Returns whether a is optimal within
//! the tolerance; a stays feasible in any case, and SMO (smo.rs) is the caller's fallback.

use super::factor::{FreeFactor, Gram};
use super::linalg::{solve_or_kernel, Solved};
use super::WorkingSet;
use std::ops::ControlFlow;

/// Joins and leaves after which the factor is rebuilt from scratch, so that the rounding
/// of the updates cannot accumulate (a rebuild costs about |F| updates).
const REFACTOR_EVERY: usize = 64;

/// Rounds of iterative refinement on one (F, K) before the solution is taken as it is.
const MAX_REFINEMENTS: usize = 5;

/// How an active-set solve went: its steps by kind, for the tests and the benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ActiveSetStats {
    /// Whether a is optimal within the tolerance at the end.
    pub optimal: bool,
    /// Steps whose direction came from the updated factor (O(|F|^2) each).
    pub factor_steps: usize,
    /// Steps solved densely (O(|F|^3) each): all of them without the factor, else those on a
    /// free set whose Gram block is singular up to rounding.
    pub dense_steps: usize,
    /// Rebuilds of the factor from scratch after a failed refinement (not the periodic ones).
    pub repairs: usize,
}

impl WorkingSet {
    /// An exact primal active-set method for the working-set dual (Nocedal and Wright,
    /// Numerical Optimization, 2006, section 16.5), warm-started from the current a.
    ///
    /// a stays feasible throughout. The free set F holds the cuts allowed to be positive (the
    /// others are 0) and K the groups whose cap is held as an equality. Each step solves the
    /// equality-constrained problem on (F, K), the same KKT system as `polish`,
    ///
    ///   sum_{k in F} G_jk a_k + mu_s(j) = b_j   (j in F),   sum_{j in F_s} a_j = C_s   (s in K),
    ///
    /// and moves from a towards its solution as far as feasibility allows (the ratio test):
    /// a cut that reaches 0 leaves F, a cap that is reached joins K. When the solution is
    /// reached, a capped group whose multiplier mu_s is negative is released, or else the cut
    /// outside F whose gradient b_j - (Ga)_j exceeds its group's multiplier most joins F; when
    /// neither exists, a is optimal.
    ///
    /// The system is solved through a Cholesky factor of G_FF updated as single cuts join and
    /// leave F (factor.rs), with the capped groups' equalities through its small Schur
    /// complement: O(|F|^2) per step. G has rank at most the dimension, so G_FF becomes
    /// singular when a cut dependent on F joins; that cut stays out of the factor and the step
    /// is the dense one of `solve_active_set_dense` (which follows the kernel direction of the
    /// KKT system, along which D is linear, to the first blocking constraint, and so removes
    /// the dependency) until the factor holds F again. Iterative refinement removes the
    /// rounding of each solve; when it does not converge, the factor is rebuilt from scratch
    /// once (as it is every `REFACTOR_EVERY` updates). Returns false (a left feasible, possibly
    /// not optimal) when `max_steps` is reached or the final check of the optimality
    /// conditions fails by more than `tol` (raised to the rounding floor).
    pub fn solve_active_set(&mut self, tol: f64, max_steps: usize) -> bool {
        self.active_set(tol, max_steps, true).optimal
    }

    /// The same method with every step's KKT system built and solved from scratch by dense
    /// elimination with complete pivoting (linalg.rs), O(|F|^3) per step: the method before
    /// the factor updates, kept as the reference of the tests and the benchmarks.
    pub fn solve_active_set_dense(&mut self, tol: f64, max_steps: usize) -> bool {
        self.active_set(tol, max_steps, false).optimal
    }

    /// `solve_active_set` (with the factor) or `solve_active_set_dense` (without), with the
    /// counts of its steps.
    pub fn active_set(&mut self, tol: f64, max_steps: usize, use_factor: bool) -> ActiveSetStats {
        let stats = self.active_set_steps(tol, max_steps, use_factor);
        // The steps keep (Ga)_j up to date on F only (see `refresh_ga_rows`).
        self.refresh_ga_sparse();
        stats
    }

    fn active_set_steps(&mut self, tol: f64, max_steps: usize, use_factor: bool) -> ActiveSetStats {
        self.refresh_ga_sparse();
        let tol = tol.max(self.noise_floor());
        if self.cuts.is_empty() {
            return ActiveSetStats {
                optimal: true,
                ..Default::default()
            };
        }
        let mut st = self.start_steps(use_factor);
        for _ in 0..max_steps {
            if self.active_set_step(&mut st, tol).is_break() {
                break;
            }
        }
        st.stats
    }

    /// The state before the first step: F the positive cuts, K the groups at their caps, and
    /// the factor of G_FF (`use_factor`).
    fn start_steps(&self, use_factor: bool) -> Steps {
        let m = self.cuts.len();
        let n_groups = self.caps.len();
        let group: Vec<usize> = self.cuts.iter().map(|c| c.group).collect();
        let dscale: Vec<f64> = (0..m)
            .map(|j| {
                let gjj = self.gram[j][j];
                if gjj > 0.0 && gjj.is_finite() {
                    1.0 / gjj.sqrt()
                } else {
                    0.0
                }
            })
            .collect();
        let free: Vec<bool> = self.alpha.iter().map(|&a| a > 0.0).collect();
        let mut used = vec![0.0; n_groups];
        for (&s, &a) in group.iter().zip(&self.alpha) {
            used[s] += a;
        }
        let capped: Vec<bool> = (0..n_groups)
            .map(|s| used[s] > 0.0 && self.caps[s] - used[s] <= 1e-12 * self.caps[s])
            .collect();
        let mut st = Steps {
            group,
            dscale,
            free,
            used,
            capped,
            factor: None,
            pending: Vec::new(),
            refinements: 0,
            repaired: false,
            stats: ActiveSetStats::default(),
        };
        if use_factor {
            self.rebuild_factor(&mut st);
        }
        st
    }

    /// The factor of G_FF built from scratch; the free cuts dependent on those it holds wait
    /// in `pending`.
    fn rebuild_factor(&self, st: &mut Steps) {
        let g = Gram {
            gram: &self.gram,
            group: &st.group,
            dscale: &st.dscale,
        };
        let mut f = FreeFactor::new(self.caps.len());
        let free = &st.free;
        st.pending = (0..self.cuts.len())
            .filter(|&j| free[j] && !f.try_add(j, &g))
            .collect();
        f.updates = 0;
        st.factor = Some(f);
    }

    /// One step of the method (see `solve_active_set`); Break when the solve is over, with
    /// `st.stats` saying whether a is optimal.
    fn active_set_step(&mut self, st: &mut Steps, tol: f64) -> ControlFlow<()> {
        let m = self.cuts.len();
        let n_groups = self.caps.len();
        if st
            .factor
            .as_ref()
            .is_some_and(|f| f.updates >= REFACTOR_EVERY)
        {
            self.rebuild_factor(st);
        }
        let mut n_free = vec![0usize; n_groups];
        for j in (0..m).filter(|&j| st.free[j]) {
            n_free[st.group[j]] += 1;
        }
        for (s, cap) in st.capped.iter_mut().enumerate() {
            if *cap && n_free[s] == 0 {
                *cap = false;
            }
        }
        if !st.free.iter().any(|&f| f) {
            return self.join_at_zero(st, tol);
        }
        // Only the entries on F are current here (the others are refreshed before use).
        let grad: Vec<f64> = (0..m).map(|j| self.cuts[j].b - self.ga[j]).collect();
        let room: Vec<f64> = (0..n_groups).map(|s| self.caps[s] - st.used[s]).collect();
        let Some(Direction {
            support,
            p,
            newton,
            mu,
        }) = self.step_direction(st, &grad, &room)
        else {
            return ControlFlow::Break(());
        };
        let (step, block) = self.ratio_test(st, &support, &p, newton);
        if !step.is_finite() {
            return ControlFlow::Break(());
        }
        self.take_step(st, &support, &p, step, block);
        // The next step needs the gradients on F only; the others are refreshed when a
        // cut may join (O(m |F|), which would otherwise dominate the O(|F|^2) steps).
        let rows: Vec<usize> = (0..m).filter(|&j| st.free[j]).collect();
        self.refresh_ga_rows(&rows);
        if block.is_some() || !newton {
            st.refinements = 0;
            st.repaired = false;
            return ControlFlow::Continue(());
        }
        self.refine_or_finish(st, tol, &support, &mu, &rows)
    }

    /// At a = 0: the cut with the largest positive gradient joins F, or a is optimal.
    fn join_at_zero(&mut self, st: &mut Steps, tol: f64) -> ControlFlow<()> {
        self.refresh_ga_sparse();
        let m = self.cuts.len();
        let grad: Vec<f64> = (0..m).map(|j| self.cuts[j].b - self.ga[j]).collect();
        match (0..m)
            .map(|j| (grad[j], j))
            .max_by(|x, y| x.0.total_cmp(&y.0).then(y.1.cmp(&x.1)))
        {
            Some((g, j)) if g > tol => {
                st.free[j] = true;
                self.join_factor(st, j);
                ControlFlow::Continue(())
            }
            _ => {
                st.stats.optimal = true;
                ControlFlow::Break(())
            }
        }
    }

    /// The direction of the next step: from the factor when it holds F, else the dense
    /// solve. None when the dense elimination fails.
    fn step_direction(&self, st: &mut Steps, grad: &[f64], room: &[f64]) -> Option<Direction> {
        let m = self.cuts.len();
        let from_factor = match &st.factor {
            Some(f) if st.pending.is_empty() => f
                .direction(grad, room, &st.capped, &st.dscale)
                .map(|(p, mu)| (f.cuts().to_vec(), p, mu)),
            _ => None,
        };
        let Some((support, mut p, mu)) = from_factor else {
            st.stats.dense_steps += 1;
            let support: Vec<usize> = (0..m).filter(|&j| st.free[j]).collect();
            let (p, newton, mu) = self.dense_direction(&support, grad, room, &st.capped)?;
            return Some(Direction {
                support,
                p,
                newton,
                mu,
            });
        };
        st.stats.factor_steps += 1;
        // The capped sums are met only up to the rounding of the solve through G_FF^-1,
        // which is far coarser than that of the dense KKT system when G_FF is
        // ill-conditioned and the caps pin a down (the final test wants a capped sum within
        // 1e-12 of its cap). Put each group's defect on its member farthest from 0, where
        // it changes the gradients least relative to a; the next refinement round absorbs
        // the change.
        let group = &st.group;
        for s in (0..self.caps.len()).filter(|&s| st.capped[s]) {
            let members = support.iter().enumerate().filter(|&(_, &j)| group[j] == s);
            let sum: f64 = members.clone().map(|(i, _)| p[i]).sum();
            if let Some((i, _)) = members
                .max_by(|x, y| (self.alpha[*x.1] + p[x.0]).total_cmp(&(self.alpha[*y.1] + p[y.0])))
            {
                p[i] += room[s] - sum;
            }
        }
        Some(Direction {
            support,
            p,
            newton: true,
            mu,
        })
    }

    /// Ratio test: the largest step in [0, 1] (Newton) or [0, inf) (kernel) that keeps
    /// a >= 0 and the uncapped groups within their caps, and the constraint that blocks it.
    fn ratio_test(
        &self,
        st: &Steps,
        support: &[usize],
        p: &[f64],
        newton: bool,
    ) -> (f64, Option<Block>) {
        let n_groups = self.caps.len();
        let mut step = if newton { 1.0 } else { f64::INFINITY };
        let mut block: Option<Block> = None;
        for (i, &j) in support.iter().enumerate() {
            if p[i] < 0.0 {
                let t = self.alpha[j] / -p[i];
                if t < step {
                    step = t;
                    block = Some(Block::Cut(j));
                }
            }
        }
        let mut rise = vec![0.0; n_groups];
        for (&j, pj) in support.iter().zip(p) {
            rise[st.group[j]] += pj;
        }
        for (s, &r) in rise.iter().enumerate() {
            if !st.capped[s] && r > 0.0 {
                let t = ((self.caps[s] - st.used[s]) / r).max(0.0);
                if t < step {
                    step = t;
                    block = Some(Block::Cap(s));
                }
            }
        }
        (step, block)
    }

    /// Moves a by `step` along p, updates F and K by the blocking constraint, and the
    /// groups' sums.
    fn take_step(
        &mut self,
        st: &mut Steps,
        support: &[usize],
        p: &[f64],
        step: f64,
        block: Option<Block>,
    ) {
        for (i, &j) in support.iter().enumerate() {
            self.alpha[j] = (self.alpha[j] + step * p[i]).max(0.0);
        }
        match block {
            Some(Block::Cut(j)) => {
                self.alpha[j] = 0.0;
                st.free[j] = false;
                self.leave_factor(st, j);
            }
            Some(Block::Cap(s)) => st.capped[s] = true,
            None => {}
        }
        st.used.iter_mut().for_each(|u| *u = 0.0);
        for (&s, &a) in st.group.iter().zip(&self.alpha) {
            st.used[s] += a;
        }
        // Rounding may leave a group a hair above its cap: scale it back onto the cap.
        for (s, (u, &cap)) in st.used.iter_mut().zip(&self.caps).enumerate() {
            if *u > cap {
                let f = cap / *u;
                for (j, a) in self.alpha.iter_mut().enumerate() {
                    if st.group[j] == s {
                        *a *= f;
                    }
                }
                *u = cap;
            }
        }
    }

    /// After a full Newton step on (F, K): refines the solution while its residual exceeds
    /// the rounding floor (rebuilding the factor once when refinement does not converge),
    /// then releases a capped group with a negative multiplier, or lets the cut that
    /// violates its condition most join F, or ends with the final optimality test.
    fn refine_or_finish(
        &mut self,
        st: &mut Steps,
        tol: f64,
        support: &[usize],
        mu: &[f64],
        rows: &[usize],
    ) -> ControlFlow<()> {
        let m = self.cuts.len();
        // The step is computed from the gradients at a, so repeating it on the same
        // (F, K) is iterative refinement: it removes the rounding error of the solve,
        // which grows with the conditioning of G.
        let residual = support
            .iter()
            .map(|&j| (self.cuts[j].b - self.ga[j] - mu[st.group[j]]).abs())
            .fold(0.0f64, f64::max);
        // The gradients (Ga)_j are sums of terms G_jk a_k that may cancel; their rounding
        // is that of the largest term, which the final test must allow for. The floor over
        // F's rows is at most the floor over all rows: a residual within it needs no
        // O(m |F|) evaluation of the latter, and the decision is the same.
        if residual > tol.max(self.sum_noise_floor_rows(rows))
            && residual > tol.max(self.sum_noise_floor())
        {
            if st.refinements < MAX_REFINEMENTS {
                st.refinements += 1;
                return ControlFlow::Continue(());
            }
            // Refinement does not converge: the updated factor may have drifted from
            // G_FF; rebuild it once and refine again.
            if st.factor.is_some() && !st.repaired {
                self.rebuild_factor(st);
                st.stats.repairs += 1;
                st.repaired = true;
                st.refinements = 0;
                return ControlFlow::Continue(());
            }
        }
        st.refinements = 0;
        st.repaired = false;
        // At the solution of the equality-constrained problem: check the signs.
        if let Some(s) = (0..self.caps.len()).find(|&s| st.capped[s] && mu[s] < -tol) {
            st.capped[s] = false;
            return ControlFlow::Continue(());
        }
        // One pass gives the gradients and their rounding floor (`sum_noise_floor`).
        let final_tol_here = tol.max(self.refresh_ga_with_floor());
        let worst = (0..m)
            .filter(|&j| !st.free[j])
            .map(|j| (self.cuts[j].b - self.ga[j] - mu[st.group[j]].max(0.0), j))
            .max_by(|x, y| x.0.total_cmp(&y.0).then(y.1.cmp(&x.1)));
        // Only an excess above the rounding floor of the gradients lets a cut join: below
        // it the excess is not measurable, and such joins cycled on the degenerate working
        // sets of SVM-combo with rescaled columns (two cuts with excesses below the floor
        // took turns in F until max_steps, and the slow SMO fallback took over: 4.4 s of a
        // 4.9 s fit). The final test accepts the same floor.
        if let Some((e, j)) = worst {
            if e > final_tol_here {
                st.free[j] = true;
                self.join_factor(st, j);
                return ControlFlow::Continue(());
            }
        }
        st.stats.optimal = self.is_optimal(final_tol_here);
        ControlFlow::Break(())
    }

    /// Cut j has joined F: into the factor, or among the pending cuts when it is dependent
    /// on the factor's cuts.
    fn join_factor(&self, st: &mut Steps, j: usize) {
        if let Some(f) = &mut st.factor {
            let g = Gram {
                gram: &self.gram,
                group: &st.group,
                dscale: &st.dscale,
            };
            if !f.try_add(j, &g) {
                st.pending.push(j);
            }
        }
    }

    /// Cut j has left F: out of the factor (or of the pending cuts), after which the pending
    /// cuts that are no longer dependent join the factor.
    fn leave_factor(&self, st: &mut Steps, j: usize) {
        if let Some(f) = &mut st.factor {
            if f.remove(j) {
                let g = Gram {
                    gram: &self.gram,
                    group: &st.group,
                    dscale: &st.dscale,
                };
                st.pending.retain(|&k| !f.try_add(k, &g));
            } else {
                st.pending.retain(|&k| k != j);
            }
        }
    }

    /// The direction of one step from the KKT system on (F = `support`, K = `capped`) built
    /// and solved from scratch: (p in the order of `support`, whether it is the Newton
    /// direction (else a kernel direction), the groups' multipliers). None when the
    /// elimination fails.
    fn dense_direction(
        &self,
        support: &[usize],
        grad: &[f64],
        room: &[f64],
        capped: &[bool],
    ) -> Option<(Vec<f64>, bool, Vec<f64>)> {
        let n_groups = self.caps.len();
        let group = |j: usize| self.cuts[j].group;
        // The KKT system on (F, K), symmetrically scaled by the diagonal of G so that
        // pivots are compared on one scale whatever the features' scales.
        let mut lam_index = vec![usize::MAX; n_groups];
        let mut n = support.len();
        for s in 0..n_groups {
            if capped[s] {
                lam_index[s] = n;
                n += 1;
            }
        }
        let mut scale = vec![1.0; n];
        for (i, &j) in support.iter().enumerate() {
            let gjj = self.gram[j][j];
            scale[i] = if gjj > 0.0 { 1.0 / gjj.sqrt() } else { 1.0 };
        }
        for s in 0..n_groups {
            if capped[s] {
                let largest = support
                    .iter()
                    .enumerate()
                    .filter(|&(_, &j)| group(j) == s)
                    .fold(0.0f64, |acc, (i, _)| acc.max(scale[i]));
                scale[lam_index[s]] = 1.0 / largest;
            }
        }
        let mut mat = vec![vec![0.0; n]; n];
        let mut rhs = vec![0.0; n];
        for (i, &j) in support.iter().enumerate() {
            for (k, &l) in support.iter().enumerate() {
                mat[i][k] = self.gram[j][l] * scale[i] * scale[k];
            }
            let li = lam_index[group(j)];
            if li != usize::MAX {
                mat[i][li] = scale[i] * scale[li];
                mat[li][i] = scale[i] * scale[li];
            }
            rhs[i] = grad[j] * scale[i];
        }
        for s in 0..n_groups {
            if capped[s] {
                rhs[lam_index[s]] = room[s] * scale[lam_index[s]];
            }
        }
        match solve_or_kernel(mat, rhs) {
            Solved::Solution(x) => {
                let p: Vec<f64> = (0..support.len()).map(|i| x[i] * scale[i]).collect();
                let mu: Vec<f64> = (0..n_groups)
                    .map(|s| {
                        if capped[s] {
                            x[lam_index[s]] * scale[lam_index[s]]
                        } else {
                            0.0
                        }
                    })
                    .collect();
                Some((p, true, mu))
            }
            Solved::Kernel(z) => {
                let mut p: Vec<f64> = (0..support.len()).map(|i| z[i] * scale[i]).collect();
                let slope: f64 = support.iter().zip(&p).map(|(&j, pj)| grad[j] * pj).sum();
                if slope < 0.0 || (slope == 0.0 && p.iter().all(|&v| v >= 0.0)) {
                    p.iter_mut().for_each(|v| *v = -*v);
                }
                Some((p, false, vec![0.0; n_groups]))
            }
            Solved::Failed => None,
        }
    }
}

/// What one active-set solve carries from step to step.
struct Steps {
    /// Every cut's slack group.
    group: Vec<usize>,
    /// 1 / sqrt(G_jj) (0 where G_jj is not positive and finite): the factor's scaling.
    dscale: Vec<f64>,
    /// F: the cuts allowed to be positive (the others are 0).
    free: Vec<bool>,
    /// Every group's sum of a.
    used: Vec<f64>,
    /// K: the groups whose cap is held as an equality.
    capped: Vec<bool>,
    /// The factor of the free cuts' Gram block and the free cuts it could not take
    /// (dependent on those it holds); None for the dense method.
    factor: Option<FreeFactor>,
    pending: Vec<usize>,
    /// Refinement rounds on the current (F, K), and whether the factor was rebuilt for it.
    refinements: usize,
    repaired: bool,
    stats: ActiveSetStats,
}

/// One step's direction p on F (in the order of `support`), whether it is Newton's (full
/// step 1) or a kernel direction (step up to the first blocking constraint), and the groups'
/// multipliers.
struct Direction {
    support: Vec<usize>,
    p: Vec<f64>,
    newton: bool,
    mu: Vec<f64>,
}

/// The constraint that stops a step: a cut reaching 0, or a group reaching its cap.
#[derive(Debug, Clone, Copy)]
enum Block {
    Cut(usize),
    Cap(usize),
}

#[cfg(test)]
mod tests;
