//! The working-set dual of the 1-slack structural SVM.
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
//! Method. Each group gets a pseudo-variable u_s = C_s - sum_{j in s} a_j >= 0 with gradient 0,
//! which turns the group's inequality into an equality, as in an SMO solver. A step moves mass
//! between the variable with the largest gradient grad_j = b_j - (Ga)_j and the positive variable
//! with the smallest, by the exact line maximum clipped to the feasible range (Platt's SMO with
//! maximal violating pairs, Keerthi et al. 2001). The group is optimal when the two gradients
//! differ by at most `tol`; then the working-set duality gap of the group is at most C_s * tol.
//! Solves are warm-started from the previous a.
//!
//! Returns the number of steps taken; a stays feasible at every step, so stopping early at
//! `max_steps` only leaves the dual objective lower (the cutting-plane loop measures the gap).

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

    /// The rounding floor of the gradients computed as sums: `NOISE_ULPS` units of rounding
    /// of the largest sum of absolute terms, max_j |b_j| + sum_k |G_jk| a_k.
    fn sum_noise_floor(&self) -> f64 {
        // Only the cuts with a_k > 0 add terms: summing over them alone gives the same sums
        // in O(m |F|) instead of O(m^2), which dominated the active-set solve at 1,000 cuts.
        let support: Vec<(usize, f64)> = self
            .alpha
            .iter()
            .enumerate()
            .filter(|&(_, &a)| a != 0.0)
            .map(|(k, &a)| (k, a))
            .collect();
        let scale = self
            .cuts
            .iter()
            .zip(&self.gram)
            .fold(0.0f64, |s, (c, row)| {
                let terms: f64 = support.iter().map(|&(k, a)| row[k].abs() * a).sum();
                s.max(c.b.abs() + terms)
            });
        NOISE_ULPS * f64::EPSILON * scale
    }

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
    /// neither exists, a is optimal. G has rank at most the dimension, so the KKT matrix can
    /// become singular when a cut joins F; then D is linear along the kernel direction, and
    /// the step follows that direction (the side where D does not decrease) to the first
    /// blocking constraint, which removes the dependency. Warm-started from the previous
    /// optimum, a new cut usually costs a handful of steps of O(|F|^3) each, independently of
    /// the conditioning of G that slows SMO down. Returns false (a left feasible, possibly
    /// not optimal) when `max_steps` is reached or the final check of the optimality
    /// conditions fails by more than `tol` (raised to the rounding floor).
    pub fn solve_active_set(&mut self, tol: f64, max_steps: usize) -> bool {
        self.refresh_ga_sparse();
        let tol = tol.max(self.noise_floor());
        // The gradients (Ga)_j are sums of terms G_jk a_k that may cancel; their rounding
        // is that of the largest term, which the final test must allow for.
        let final_tol = |ws: &Self| tol.max(ws.sum_noise_floor());
        let m = self.cuts.len();
        let n_groups = self.caps.len();
        if m == 0 {
            return true;
        }
        let group: Vec<usize> = self.cuts.iter().map(|c| c.group).collect();
        let mut free: Vec<bool> = self.alpha.iter().map(|&a| a > 0.0).collect();
        let mut used = vec![0.0; n_groups];
        for (&s, &a) in group.iter().zip(&self.alpha) {
            used[s] += a;
        }
        let mut capped: Vec<bool> = (0..n_groups)
            .map(|s| used[s] > 0.0 && self.caps[s] - used[s] <= 1e-12 * self.caps[s])
            .collect();
        const MAX_REFINEMENTS: usize = 5;
        let mut refinements = 0;
        for _ in 0..max_steps {
            let support: Vec<usize> = (0..m).filter(|&j| free[j]).collect();
            for (s, cap) in capped.iter_mut().enumerate() {
                if *cap && !support.iter().any(|&j| group[j] == s) {
                    *cap = false;
                }
            }
            let grad: Vec<f64> = (0..m).map(|j| self.cuts[j].b - self.ga[j]).collect();
            if support.is_empty() {
                // a = 0: the cut with the largest positive gradient joins F.
                match (0..m)
                    .map(|j| (grad[j], j))
                    .max_by(|x, y| x.0.total_cmp(&y.0).then(y.1.cmp(&x.1)))
                {
                    Some((g, j)) if g > tol => {
                        free[j] = true;
                        continue;
                    }
                    _ => return true,
                }
            }
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
                        .filter(|&(_, &j)| group[j] == s)
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
                let li = lam_index[group[j]];
                if li != usize::MAX {
                    mat[i][li] = scale[i] * scale[li];
                    mat[li][i] = scale[i] * scale[li];
                }
                rhs[i] = grad[j] * scale[i];
            }
            for s in 0..n_groups {
                if capped[s] {
                    rhs[lam_index[s]] = (self.caps[s] - used[s]) * scale[lam_index[s]];
                }
            }
            // The direction p on F and whether it is Newton's (full step 1) or a kernel
            // direction (step up to the first blocking constraint).
            let (p, newton, mu) = match solve_or_kernel(mat, rhs) {
                Solved::Solution(x) => {
                    let p: Vec<f64> = support
                        .iter()
                        .enumerate()
                        .map(|(i, _)| x[i] * scale[i])
                        .collect();
                    let mu: Vec<f64> = (0..n_groups)
                        .map(|s| {
                            if capped[s] {
                                x[lam_index[s]] * scale[lam_index[s]]
                            } else {
                                0.0
                            }
                        })
                        .collect();
                    (p, true, mu)
                }
                Solved::Kernel(z) => {
                    let mut p: Vec<f64> = (0..support.len()).map(|i| z[i] * scale[i]).collect();
                    let slope: f64 = support.iter().zip(&p).map(|(&j, pj)| grad[j] * pj).sum();
                    if slope < 0.0 || (slope == 0.0 && p.iter().all(|&v| v >= 0.0)) {
                        p.iter_mut().for_each(|v| *v = -*v);
                    }
                    (p, false, vec![0.0; n_groups])
                }
                Solved::Failed => return false,
            };
            // Ratio test: the largest step in [0, 1] (Newton) or [0, inf) (kernel) that
            // keeps a >= 0 and the uncapped groups within their caps.
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
            for s in 0..n_groups {
                if !capped[s] {
                    let rise: f64 = support
                        .iter()
                        .zip(&p)
                        .filter(|&(&j, _)| group[j] == s)
                        .map(|(_, pj)| pj)
                        .sum();
                    if rise > 0.0 {
                        let t = ((self.caps[s] - used[s]) / rise).max(0.0);
                        if t < step {
                            step = t;
                            block = Some(Block::Cap(s));
                        }
                    }
                }
            }
            if !step.is_finite() {
                return false;
            }
            for (i, &j) in support.iter().enumerate() {
                self.alpha[j] = (self.alpha[j] + step * p[i]).max(0.0);
            }
            match block {
                Some(Block::Cut(j)) => {
                    self.alpha[j] = 0.0;
                    free[j] = false;
                }
                Some(Block::Cap(s)) => capped[s] = true,
                None => {}
            }
            used.iter_mut().for_each(|u| *u = 0.0);
            for (&s, &a) in group.iter().zip(&self.alpha) {
                used[s] += a;
            }
            // Rounding may leave a group a hair above its cap: scale it back onto the cap.
            for (s, (u, &cap)) in used.iter_mut().zip(&self.caps).enumerate() {
                if *u > cap {
                    let f = cap / *u;
                    for (j, a) in self.alpha.iter_mut().enumerate() {
                        if group[j] == s {
                            *a *= f;
                        }
                    }
                    *u = cap;
                }
            }
            self.refresh_ga_sparse();
            if block.is_some() || !newton {
                refinements = 0;
                continue;
            }
            // The step is computed from the gradients at a, so repeating it on the same
            // (F, K) is iterative refinement: it removes the rounding error of the solve,
            // which grows with the conditioning of G.
            let residual = support
                .iter()
                .map(|&j| (self.cuts[j].b - self.ga[j] - mu[group[j]]).abs())
                .fold(0.0f64, f64::max);
            if residual > final_tol(self) && refinements < MAX_REFINEMENTS {
                refinements += 1;
                continue;
            }
            refinements = 0;
            // At the solution of the equality-constrained problem: check the signs.
            if let Some(s) = (0..n_groups).find(|&s| capped[s] && mu[s] < -tol) {
                capped[s] = false;
                continue;
            }
            let worst = (0..m)
                .filter(|&j| !free[j])
                .map(|j| (self.cuts[j].b - self.ga[j] - mu[group[j]].max(0.0), j))
                .max_by(|x, y| x.0.total_cmp(&y.0).then(y.1.cmp(&x.1)));
            // Only an excess above the rounding floor of the gradients lets a cut join: below
            // it the excess is not measurable, and such joins cycled on the degenerate working
            // sets of SVM-combo with rescaled columns (two cuts with excesses below the floor
            // took turns in F until max_steps, and the slow SMO fallback took over: 4.4 s of a
            // 4.9 s fit). The final test accepts the same floor.
            if let Some((e, j)) = worst {
                if e > final_tol(self) {
                    free[j] = true;
                    continue;
                }
            }
            return self.is_optimal(final_tol(self));
        }
        false
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
        for (idle, &a) in self.idle.iter_mut().zip(&self.alpha) {
            *idle = if a > 0.0 { 0 } else { *idle + 1 };
        }
        let keep: Vec<bool> = self.idle.iter().map(|&i| i <= max_idle).collect();
        let removed = keep.iter().filter(|&&k| !k).count();
        if removed == 0 {
            return 0;
        }
        retain_mask(&mut self.cuts, &keep);
        retain_mask(&mut self.alpha, &keep);
        retain_mask(&mut self.ga, &keep);
        retain_mask(&mut self.idle, &keep);
        retain_mask(&mut self.gram, &keep);
        for row in &mut self.gram {
            retain_mask(row, &keep);
        }
        removed
    }

    fn entry(&self, a: Var, b: Var) -> f64 {
        match (a, b) {
            (Var::Cut(i), Var::Cut(j)) => self.gram[i][j],
            _ => 0.0,
        }
    }

    /// `refresh_ga` over the positive a_k only: O(m |support|) instead of O(m^2), which
    /// matters with hundreds of cuts and a support of a few dozen.
    fn refresh_ga_sparse(&mut self) {
        let support: Vec<(usize, f64)> = self
            .alpha
            .iter()
            .enumerate()
            .filter(|&(_, &a)| a != 0.0)
            .map(|(k, &a)| (k, a))
            .collect();
        for (j, row) in self.gram.iter().enumerate() {
            self.ga[j] = support.iter().map(|&(k, a)| row[k] * a).sum();
        }
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Var {
    Cut(usize),
    Slack(usize),
}

#[derive(Debug, Clone, Copy)]
enum Block {
    Cut(usize),
    Cap(usize),
}

enum Solved {
    Solution(Vec<f64>),
    /// A nonzero z with mat z = 0.
    Kernel(Vec<f64>),
    Failed,
}

/// Gaussian elimination with complete pivoting on a symmetric matrix: the solution of
/// `mat x = rhs`, or, when a pivot is negligible against the largest entry (rank
/// deficiency), a vector of the kernel, from back substitution with the first unpivoted
/// variable set to 1.
fn solve_or_kernel(mut mat: Vec<Vec<f64>>, mut rhs: Vec<f64>) -> Solved {
    const RANK_TOL: f64 = 1e-12;
    let n = rhs.len();
    let scale = mat
        .iter()
        .flat_map(|r| r.iter())
        .fold(0.0f64, |s, v| s.max(v.abs()));
    if scale == 0.0 || !scale.is_finite() {
        return Solved::Failed;
    }
    // perm[k] is the variable held in column k.
    let mut perm: Vec<usize> = (0..n).collect();
    let mut rank = n;
    for col in 0..n {
        let (mut pr, mut pc, mut best) = (col, col, -1.0);
        for (r, row) in mat.iter().enumerate().skip(col) {
            for (c, v) in row.iter().enumerate().skip(col) {
                if v.abs() > best {
                    best = v.abs();
                    pr = r;
                    pc = c;
                }
            }
        }
        if best <= RANK_TOL * scale {
            rank = col;
            break;
        }
        mat.swap(col, pr);
        rhs.swap(col, pr);
        if pc != col {
            for row in mat.iter_mut() {
                row.swap(col, pc);
            }
            perm.swap(col, pc);
        }
        let (top, below) = mat.split_at_mut(col + 1);
        let pivot_row = &top[col];
        for (row, r) in below.iter_mut().enumerate() {
            let f = r[col] / pivot_row[col];
            if f != 0.0 {
                for (v, p) in r[col..].iter_mut().zip(&pivot_row[col..]) {
                    *v -= f * p;
                }
                rhs[col + 1 + row] -= f * rhs[col];
            }
        }
    }
    let mut y = vec![0.0; n];
    let kernel = rank < n;
    if kernel {
        y[rank] = 1.0;
    }
    for row in (0..rank).rev() {
        let s: f64 = (row + 1..n).map(|k| mat[row][k] * y[k]).sum();
        let r = if kernel { 0.0 } else { rhs[row] };
        y[row] = (r - s) / mat[row][row];
    }
    let mut x = vec![0.0; n];
    for (k, &v) in perm.iter().zip(&y) {
        x[*k] = v;
    }
    if !x.iter().all(|v| v.is_finite()) {
        Solved::Failed
    } else if kernel {
        Solved::Kernel(x)
    } else {
        Solved::Solution(x)
    }
}

/// Solves the square system `mat x = rhs` by Gaussian elimination with partial pivoting;
/// None when a pivot is negligible against the matrix's largest entry (singular for the
/// purpose at hand).
fn solve_dense(mut mat: Vec<Vec<f64>>, mut rhs: Vec<f64>) -> Option<Vec<f64>> {
    let n = rhs.len();
    let scale = mat
        .iter()
        .flat_map(|r| r.iter())
        .fold(0.0f64, |s, v| s.max(v.abs()));
    if scale == 0.0 || !scale.is_finite() {
        return None;
    }
    for col in 0..n {
        let pivot = (col..n).max_by(|&a, &b| mat[a][col].abs().total_cmp(&mat[b][col].abs()))?;
        if mat[pivot][col].abs() <= 1e-13 * scale {
            return None;
        }
        mat.swap(col, pivot);
        rhs.swap(col, pivot);
        let (top, below) = mat.split_at_mut(col + 1);
        let pivot_row = &top[col];
        for (row, r) in below.iter_mut().enumerate() {
            let f = r[col] / pivot_row[col];
            if f != 0.0 {
                for (v, p) in r[col..].iter_mut().zip(&pivot_row[col..]) {
                    *v -= f * p;
                }
                rhs[col + 1 + row] -= f * rhs[col];
            }
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| mat[row][k] * x[k]).sum();
        x[row] = (rhs[row] - s) / mat[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
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

    /// The working set's primal at w: 1/2 |w|^2 + sum_s C_s max(0, max_{j in s} b_j - w.g_j),
    /// an upper bound of the QP's optimum for any w (weak duality).
    fn working_set_primal(cuts: &[Cut], caps: &[f64], w: &[f64]) -> f64 {
        let mut xi = vec![0.0f64; caps.len()];
        for c in cuts {
            xi[c.group] = xi[c.group].max(c.b - dot(w, &c.g));
        }
        0.5 * dot(w, w) + xi.iter().zip(caps).map(|(x, c)| x * c).sum::<f64>()
    }

    #[test]
    fn active_set_reaches_the_optimum_on_degenerate_warm_started_problems() {
        // Cuts added one at a time as in training, more cuts than dimensions (a singular G),
        // one to three slack groups and coordinates on scales 1e-2 to 1e3. After every added
        // cut, the active-set solve warm-started from the previous optimum must be optimal,
        // certified by weak duality: the working set's primal at w = sum_j a_j g_j (computed
        // directly, not from the Gram matrix) exceeds D(a) by at most the QP tolerance times
        // the caps. SMO run to a tight tolerance (an independent method) must not do better.
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        let mut solved = 0;
        let mut total = 0;
        for trial in 0..120 {
            let dim = rng.random_range(1..6);
            let n_groups = 1 + trial % 3;
            let caps: Vec<f64> = (0..n_groups)
                .map(|_| [0.01, 1.0, 100.0, 1e4][rng.random_range(0..4)])
                .collect();
            let scales: Vec<f64> = (0..dim)
                .map(|_| 10f64.powf(rng.random_range(-2.0..3.0)))
                .collect();
            let m = rng.random_range(1..25);
            let mut ours = WorkingSet::new(dim, caps.clone());
            let mut smo = WorkingSet::new(dim, caps.clone());
            let mut cuts = Vec::new();
            for _ in 0..m {
                let cut = Cut {
                    g: scales
                        .iter()
                        .map(|sc| sc * rng.random_range(-1.0..1.0))
                        .collect(),
                    b: rng.random_range(0.0..1.0),
                    group: rng.random_range(0..n_groups),
                };
                ours.add(cut.clone());
                smo.add(cut.clone());
                cuts.push(cut);
                total += 1;
                if !ours.solve_active_set(1e-12, 1000) {
                    continue;
                }
                solved += 1;
                let w = ours.weights();
                let dual = ours.dual_objective_at(&w);
                let primal = working_set_primal(&cuts, &caps, &w);
                let c_total: f64 = caps.iter().sum();
                assert!(
                    primal - dual <= 1e-9 * c_total.max(1.0) * primal.abs().max(1.0),
                    "trial {trial}: working-set gap {} (primal {primal}, dual {dual})",
                    primal - dual
                );
                smo.solve(1e-13, 1_000_000);
                let other = smo.dual_objective_at(&smo.weights());
                assert!(other <= dual + 1e-9 * dual.abs().max(1.0), "trial {trial}");
                for (s, &cap) in caps.iter().enumerate() {
                    let used: f64 = ours
                        .cuts()
                        .iter()
                        .zip(ours.alpha())
                        .filter(|(c, _)| c.group == s)
                        .map(|(_, a)| a)
                        .sum();
                    assert!(used <= cap * (1.0 + 1e-12), "trial {trial}");
                }
                assert!(ours.alpha().iter().all(|&a| a >= 0.0));
            }
        }
        // Failing (and so handing over to SMO) is the exception.
        assert!(solved * 100 >= total * 98, "solved {solved} of {total}");
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
}
