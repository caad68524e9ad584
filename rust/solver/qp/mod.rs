//! The working-set dual of the 1-slack structural SVM, and the working set that holds it.
//!
//! Problem. Given cuts (g_j, b_j), each belonging to a slack group s(j) with cap C_s, solve
//!
//!   max_a  D(a) = sum_j a_j b_j - 1/2 a'Ga,   G_jk = g_j . g_k,
//!   s.t.   a_j >= 0,   sum_{j in group s} a_j <= C_s  for every group s,
//!
//! which is the Lagrange dual of  min_{w, xi >= 0} 1/2 ||w||^2 + sum_s C_s xi_s  subject to
//! w . g_j >= b_j - xi_{s(j)} for the cuts in the working set, with w = sum_j a_j g_j.
//! One group is SVM^map's single slack; several are SVM-combo's separate slacks.
//!
//! `WorkingSet` keeps the cuts, their Gram matrix, the dual variables a and (Ga); its solvers
//! maximize D(a) warm-started from the current a, and each keeps a feasible:
//!
//!   smo.rs         SMO pair steps (the fallback, and the plain method's first stage)
//!   polish.rs      the exact solve of the optimality conditions on SMO's support
//!   active_set.rs  the exact primal active-set method (OCAS's QP), O(|F|^2) per step through
//!                  factor.rs, with the dense O(|F|^3) step kept for singular free sets
//!   factor.rs      the Cholesky factor of the free cuts' Gram block, updated as cuts join
//!                  and leave, and the Schur complement of the capped groups
//!   linalg.rs      the dense linear solves of polish and of the active set's dense step
//!
//! Here: the working set itself (adding cuts, w = sum_j a_j g_j, D(a), the slacks, the
//! rounding floors, the optimality test and the dropping of idle cuts).

mod active_set;
mod factor;
mod linalg;
mod polish;
mod smo;

/// Rounding units of the gradients' magnitude below which a violation is not measurable.
/// 1024 was too cautious: on SVM-combo with rescaled columns at C = 10^4 it put the floor at
/// 2.05e-3, above a cut's measurable excess of 1.8e-3, and the outer loop stalled with a gap
/// just above eps * sum C_s (the working set's QP was short of its optimum by C * 1.8e-3 per
/// iteration). Rounding of a sum of m terms is near sqrt(m) units, far below 64 for the
/// working sets seen (tens of active cuts).
const NOISE_ULPS: f64 = 64.0;

/// One cutting plane: w . g >= b - xi_group.
#[derive(Debug, Clone)]
pub struct Cut {
    pub g: Vec<f64>,
    pub b: f64,
    pub group: usize,
}

/// The cuts kept so far, their Gram matrix and their dual variables.
#[derive(Debug, Clone)]
pub struct WorkingSet {
    dim: usize,
    caps: Vec<f64>,
    cuts: Vec<Cut>,
    gram: Vec<Vec<f64>>,
    alpha: Vec<f64>,
    /// (G a)_j, which equals w . g_j.
    ga: Vec<f64>,
    /// Consecutive outer iterations in which a_j stayed at zero.
    idle: Vec<usize>,
    /// Cuts retired from the QP by `retire_idle`, with the iterations each has been idle:
    /// still part of the model, priced against w by `readmit` (O(d) each) instead of
    /// holding a Gram row (O(m d) for every cut that joins).
    retired: Vec<(Cut, usize)>,
}

impl WorkingSet {
    pub fn new(dim: usize, caps: Vec<f64>) -> Self {
        WorkingSet {
            dim,
            caps,
            cuts: Vec::new(),
            gram: Vec::new(),
            alpha: Vec::new(),
            ga: Vec::new(),
            idle: Vec::new(),
            retired: Vec::new(),
        }
    }

    /// A working set holding `cuts` with the dual variables `alpha` (one per cut, each group's
    /// sum within its cap), e.g. the final state of a solve at another C rescaled to `caps`.
    pub fn with_cuts(dim: usize, caps: Vec<f64>, cuts: Vec<Cut>, alpha: Vec<f64>) -> Self {
        debug_assert_eq!(cuts.len(), alpha.len());
        let mut ws = WorkingSet::new(dim, caps);
        for cut in cuts {
            ws.add(cut);
        }
        ws.alpha = alpha;
        ws.refresh_ga();
        ws
    }

    pub fn len(&self) -> usize {
        self.cuts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cuts.is_empty()
    }

    /// Number of cuts with a positive dual variable (the support of w).
    pub fn n_active(&self) -> usize {
        self.alpha.iter().filter(|&&a| a > 0.0).count()
    }

    pub fn cuts(&self) -> &[Cut] {
        &self.cuts
    }

    pub fn alpha(&self) -> &[f64] {
        &self.alpha
    }

    pub fn add(&mut self, cut: Cut) {
        debug_assert_eq!(cut.g.len(), self.dim);
        debug_assert!(cut.group < self.caps.len());
        let row: Vec<f64> = self
            .cuts
            .iter()
            .map(|c| dot(&c.g, &cut.g))
            .chain(std::iter::once(dot(&cut.g, &cut.g)))
            .collect();
        for (r, &v) in self.gram.iter_mut().zip(&row) {
            r.push(v);
        }
        let ga_new: f64 = self.alpha.iter().zip(&row).map(|(a, g)| a * g).sum();
        self.gram.push(row);
        self.cuts.push(cut);
        self.alpha.push(0.0);
        self.ga.push(ga_new);
        self.idle.push(0);
    }

    /// w = sum_j a_j g_j.
    pub fn weights(&self) -> Vec<f64> {
        let mut w = vec![0.0; self.dim];
        for (c, &a) in self.cuts.iter().zip(&self.alpha) {
            if a > 0.0 {
                for (wi, gi) in w.iter_mut().zip(&c.g) {
                    *wi += a * gi;
                }
            }
        }
        w
    }

    /// D(a) = sum_j a_j b_j - |w|^2 / 2 with w = sum_j a_j g_j given. Computed from w rather
    /// than from (Ga)_j, whose terms G_jk a_k can cancel far above the result when features
    /// differ in scale by many orders of magnitude.
    pub fn dual_objective_at(&self, w: &[f64]) -> f64 {
        let linear: f64 = self
            .cuts
            .iter()
            .zip(&self.alpha)
            .map(|(c, a)| a * c.b)
            .sum();
        linear - 0.5 * dot(w, w)
    }

    /// D(a) = sum_j a_j (b_j - (Ga)_j / 2).
    pub fn dual_objective(&self) -> f64 {
        self.cuts
            .iter()
            .zip(&self.alpha)
            .zip(&self.ga)
            .map(|((c, a), ga)| a * (c.b - 0.5 * ga))
            .sum()
    }

    /// The slack each group needs for the working set at the current w:
    /// xi_s = max(0, max_{j in s} b_j - w . g_j).
    pub fn slacks(&self) -> Vec<f64> {
        let mut xi = vec![0.0f64; self.caps.len()];
        for (c, ga) in self.cuts.iter().zip(&self.ga) {
            xi[c.group] = xi[c.group].max(c.b - ga);
        }
        xi
    }

    /// The smallest violation that can be measured: a violation is a difference of gradients
    /// b_j - (Ga)_j, and below a few hundred units of rounding of their magnitude it is noise.
    fn noise_floor(&self) -> f64 {
        let scale = self
            .cuts
            .iter()
            .zip(&self.ga)
            .fold(0.0f64, |s, (c, ga)| s.max(c.b.abs()).max(ga.abs()));
        NOISE_ULPS * f64::EPSILON * scale
    }

    /// The cuts with a nonzero dual variable and their a_k: the only terms of (Ga).
    fn support(&self) -> Vec<(usize, f64)> {
        self.alpha
            .iter()
            .enumerate()
            .filter(|&(_, &a)| a != 0.0)
            .map(|(k, &a)| (k, a))
            .collect()
    }

    /// The rounding floor of the gradients computed as sums: `NOISE_ULPS` units of rounding
    /// of the largest sum of absolute terms, max_j |b_j| + sum_k |G_jk| a_k.
    fn sum_noise_floor(&self) -> f64 {
        // Only the cuts with a_k > 0 add terms: summing over them alone gives the same sums
        // in O(m |F|) instead of O(m^2), which dominated the active-set solve at 1,000 cuts.
        let all: Vec<usize> = (0..self.cuts.len()).collect();
        self.sum_noise_floor_rows(&all)
    }

    /// `sum_noise_floor` over the gradients of the cuts in `rows` only.
    fn sum_noise_floor_rows(&self, rows: &[usize]) -> f64 {
        let support = self.support();
        let scale = rows.iter().fold(0.0f64, |s, &j| {
            let row = &self.gram[j];
            let terms: f64 = support.iter().map(|&(k, a)| row[k].abs() * a).sum();
            s.max(self.cuts[j].b.abs() + terms)
        });
        NOISE_ULPS * f64::EPSILON * scale
    }

    /// Whether a satisfies the optimality conditions of the dual within `tol`: per group, no
    /// cut's gradient exceeds that of a positive cut (or 0, when the cap is not reached) by
    /// more than `tol`.
    pub fn is_optimal(&self, tol: f64) -> bool {
        let n_groups = self.caps.len();
        let mut used = vec![0.0; n_groups];
        let mut low = vec![f64::INFINITY; n_groups];
        let mut high = vec![0.0f64; n_groups];
        for (j, c) in self.cuts.iter().enumerate() {
            let grad = c.b - self.ga[j];
            used[c.group] += self.alpha[j];
            high[c.group] = high[c.group].max(grad);
            if self.alpha[j] > 0.0 {
                low[c.group] = low[c.group].min(grad);
            }
            if self.alpha[j] < 0.0 {
                return false;
            }
        }
        (0..n_groups).all(|s| {
            let free = self.caps[s] - used[s] > 1e-12 * self.caps[s];
            let floor = if free { 0.0 } else { f64::INFINITY };
            // The sum of a group may round a few units above its cap.
            used[s] <= self.caps[s] * (1.0 + 1e-12) && high[s] - low[s].min(floor) <= tol
        })
    }

    /// Updates the idle counters after an outer iteration and removes the cuts that have been
    /// idle for more than `max_idle` iterations. They do not contribute to w, so w and D(a)
    /// are unchanged. Returns the number removed.
    pub fn drop_idle(&mut self, max_idle: usize) -> usize {
        self.count_idle();
        let keep: Vec<bool> = self.idle.iter().map(|&i| i <= max_idle).collect();
        self.keep_cuts(&keep)
    }

    /// One more outer iteration: the idle counter of every cut in the QP with a_j = 0 grows,
    /// the others restart at 0.
    fn count_idle(&mut self) {
        for (idle, &a) in self.idle.iter_mut().zip(&self.alpha) {
            *idle = if a > 0.0 { 0 } else { *idle + 1 };
        }
    }

    /// Keeps the cuts of the QP marked in `keep` (with their a, Gram entries and counters)
    /// and removes the others; returns the number removed.
    fn keep_cuts(&mut self, keep: &[bool]) -> usize {
        let removed = keep.iter().filter(|&&k| !k).count();
        if removed == 0 {
            return 0;
        }
        retain_mask(&mut self.cuts, keep);
        retain_mask(&mut self.alpha, keep);
        retain_mask(&mut self.ga, keep);
        retain_mask(&mut self.idle, keep);
        retain_mask(&mut self.gram, keep);
        for row in &mut self.gram {
            retain_mask(row, keep);
        }
        removed
    }

    /// The cuts of the model: those in the QP and the retired ones (see `retire_idle`).
    pub fn all_cuts(&self) -> impl Iterator<Item = &Cut> {
        self.cuts.iter().chain(self.retired.iter().map(|(c, _)| c))
    }

    /// The cuts of `all_cuts`, in its order, without a copy.
    pub fn into_all_cuts(self) -> Vec<Cut> {
        let mut cuts = self.cuts;
        cuts.extend(self.retired.into_iter().map(|(c, _)| c));
        cuts
    }

    /// Number of retired cuts (see `retire_idle`).
    pub fn n_retired(&self) -> usize {
        self.retired.len()
    }

    /// Updates the idle counters after an outer iteration, as `drop_idle`, but moves the cuts
    /// idle for more than `qp_idle` iterations out of the QP into the retired cuts, and drops
    /// retired cuts idle for more than `max_idle`. The retired cuts stay in the model: after
    /// each solve, `readmit` brings back those violated at its optimum, so the optimum is
    /// that of every cut kept, as with `drop_idle(max_idle)`. Returns the number retired.
    pub fn retire_idle(&mut self, qp_idle: usize, max_idle: usize) -> usize {
        self.count_idle();
        for (_, idle) in &mut self.retired {
            *idle += 1;
        }
        let keep: Vec<bool> = self.idle.iter().map(|&i| i <= qp_idle).collect();
        for (j, &k) in keep.iter().enumerate() {
            if !k {
                self.retired.push((self.cuts[j].clone(), self.idle[j]));
            }
        }
        // After the push, so that a cut idle for more than max_idle leaves at once wherever
        // it is, as with `drop_idle(max_idle)`.
        self.retired.retain(|(_, idle)| *idle <= max_idle);
        self.keep_cuts(&keep)
    }

    /// Brings back into the QP the retired cuts violated at w (the QP's optimum) by more than
    /// `tol` beyond their group's slack there, the condition under which the QP over every
    /// kept cut would give some of them a positive dual variable. Returns how many came back.
    pub fn readmit(&mut self, w: &[f64], tol: f64) -> usize {
        if self.retired.is_empty() {
            return 0;
        }
        // An excess must be measurable twice: in the dot product computed here and, once
        // back, in the QP's gradients, sums of Gram terms (`sum_noise_floor`); a cut brought
        // back for an excess below the latter took turns with others in the active set, which
        // then left the solve to SMO.
        let tol = tol.max(self.sum_noise_floor());
        let slacks = self.slacks();
        let (back, stay): (Vec<_>, Vec<_>) = std::mem::take(&mut self.retired)
            .into_iter()
            .partition(|(c, _)| {
                let terms: f64 = c.g.iter().zip(w).map(|(g, x)| (g * x).abs()).sum();
                let floor = NOISE_ULPS * f64::EPSILON * (c.b.abs() + terms);
                c.b - dot(&c.g, w) > slacks[c.group] + tol.max(floor)
            });
        self.retired = stay;
        let n = back.len();
        for (cut, idle) in back {
            // The cut keeps its idle count: if the next solve leaves it at a = 0 it retires
            // again, and it still leaves the model at max_idle.
            self.add(cut);
            if let Some(last) = self.idle.last_mut() {
                *last = idle;
            }
        }
        n
    }

    /// `refresh_ga` over the positive a_k only: O(m |support|) instead of O(m^2), which
    /// matters with hundreds of cuts and a support of a few dozen.
    fn refresh_ga_sparse(&mut self) {
        let all: Vec<usize> = (0..self.cuts.len()).collect();
        self.refresh_ga_rows(&all);
    }

    /// `refresh_ga_sparse` for the cuts in `rows` only, with the same sums (so the same
    /// values); the other entries of (Ga) are left as they were.
    fn refresh_ga_rows(&mut self, rows: &[usize]) {
        let support = self.support();
        for &j in rows {
            let row = &self.gram[j];
            self.ga[j] = support.iter().map(|&(k, a)| row[k] * a).sum();
        }
    }

    /// `refresh_ga_sparse` and `sum_noise_floor` in one pass over the Gram matrix, with the
    /// same sums (so the same values); returns the floor.
    fn refresh_ga_with_floor(&mut self) -> f64 {
        let support = self.support();
        let mut scale = 0.0f64;
        for (j, row) in self.gram.iter().enumerate() {
            let (mut sum, mut terms) = (0.0, 0.0);
            for &(k, a) in &support {
                sum += row[k] * a;
                terms += row[k].abs() * a;
            }
            self.ga[j] = sum;
            scale = scale.max(self.cuts[j].b.abs() + terms);
        }
        NOISE_ULPS * f64::EPSILON * scale
    }

    /// Recomputes (Ga) from scratch so rounding from many small updates cannot accumulate.
    fn refresh_ga(&mut self) {
        for (j, row) in self.gram.iter().enumerate() {
            self.ga[j] = row.iter().zip(&self.alpha).map(|(g, a)| g * a).sum();
        }
    }
}

fn retain_mask<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut it = keep.iter();
    v.retain(|_| *it.next().unwrap_or(&true));
}

pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropping_idle_cuts_keeps_the_solution() {
        let mut ws = WorkingSet::new(1, vec![1.0]);
        ws.add(Cut {
            g: vec![1.0],
            b: 1.0,
            group: 0,
        });
        ws.add(Cut {
            g: vec![1.0],
            b: 0.1,
            group: 0,
        }); // dominated: its a stays 0
        ws.solve(1e-14, 1000);
        let before = (ws.weights(), ws.dual_objective());
        assert_eq!(ws.drop_idle(0), 1);
        assert_eq!(ws.len(), 1);
        assert_eq!((ws.weights(), ws.dual_objective()), before);
    }

    /// A retired cut leaves the model after the same number of idle iterations as
    /// `drop_idle(max_idle)` drops it, and one brought back keeps its idle count.
    #[test]
    fn retired_cuts_leave_the_model_when_drop_idle_would_drop_them() {
        let make = || {
            let mut ws = WorkingSet::new(1, vec![1.0]);
            for b in [1.0, 0.1] {
                ws.add(Cut {
                    g: vec![1.0],
                    b,
                    group: 0,
                });
            }
            ws.solve(1e-14, 1000); // the second cut is dominated: its a stays 0
            ws
        };
        let (mut retiring, mut dropping) = (make(), make());
        let mut in_model = Vec::new();
        for _ in 0..5 {
            retiring.retire_idle(0, 3);
            dropping.drop_idle(3);
            assert_eq!(retiring.len(), 1);
            in_model.push(retiring.len() + retiring.n_retired());
            assert_eq!(retiring.len() + retiring.n_retired(), dropping.len());
        }
        assert_eq!(in_model, vec![2, 2, 2, 1, 1]);

        // Brought back (violated at w = -1), the cut keeps the idle count it had.
        let mut ws = make();
        ws.retire_idle(0, 3);
        ws.retire_idle(0, 3);
        assert_eq!(ws.readmit(&[-1.0], 0.0), 1);
        assert_eq!(ws.idle, vec![0, 2]);
    }
}
