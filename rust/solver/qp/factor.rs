//! The Cholesky factor of the free cuts' block of the Gram matrix, kept up to date as the
//! active-set method (active_set.rs) moves one cut at a time into or out of its free set F, so
//! that each of its steps costs O(|F|^2) instead of the O(|F|^3) of a fresh dense solve.
//!
//! The factor is of the diagonally scaled block, L L^T = D G_FF D with D = diag(1/sqrt(G_jj)),
//! so that its pivots are compared on one scale whatever the scales of the features and of
//! the cuts. A cut joins with one triangular solve and one new row; a cut leaves by deleting
//! its row and restoring the triangle with Givens rotations on the trailing part. A cut whose
//! new pivot is small (it is linearly dependent, or nearly so, on the factor's cuts) is
//! refused: the caller then takes the dense step of linalg.rs, which handles the singular case.
//!
//! The capped groups enter through the Schur complement of the KKT system: with E the
//! |F| x groups incidence matrix (E_js = 1 when cut j is in group s) the factor also keeps
//! Y = L^-1 D E, updated with the same operations, and a step solves the small system
//! (Y_K^T Y_K) mu = Y_K^T L^-1 D r - c_K on the capped groups K.

use super::linalg::solve_dense;

/// The smallest squared pivot, relative to the scaled diagonal 1, that a joining cut may
/// have (its angle to the span of the factor's cuts, in the metric of G, above 1e-2 radians).
/// The Schur complement solves through G_FF^-1, whose rounding grows with G_FF's condition
/// even where the KKT system itself is well conditioned (two nearly opposite cuts in
/// different capped groups); at 1e-6 refinement stalled above the rounding floor on such
/// systems, so nearly dependent cuts are left to the dense solve, which pivots on the whole
/// KKT matrix.
const PIVOT_TOL: f64 = 1e-4;

/// L L^T = D G_FF D and Y = L^-1 D E for an ordered set of cuts.
#[derive(Debug, Clone)]
pub(super) struct FreeFactor {
    /// The cuts, in the order of L's rows.
    cuts: Vec<usize>,
    /// Row i of L holds its i + 1 entries up to the diagonal.
    rows: Vec<Vec<f64>>,
    /// Row i of Y = L^-1 D E, one entry per group.
    y: Vec<Vec<f64>>,
    n_groups: usize,
    /// Joins and leaves since the factor was built from scratch.
    pub(super) updates: usize,
}

/// What the factor needs to know of the working set: its Gram matrix, the group of each cut
/// and D's diagonal (0 for a cut with g = 0, which cannot join).
pub(super) struct Gram<'a> {
    pub gram: &'a [Vec<f64>],
    pub group: &'a [usize],
    pub dscale: &'a [f64],
}

impl FreeFactor {
    pub fn new(n_groups: usize) -> Self {
        FreeFactor {
            cuts: Vec::new(),
            rows: Vec::new(),
            y: Vec::new(),
            n_groups,
            updates: 0,
        }
    }

    pub fn cuts(&self) -> &[usize] {
        &self.cuts
    }

    /// Adds cut j as the last row; false (and the factor unchanged) when its pivot is
    /// negligible, i.e. D G D restricted to the cuts and j would be singular up to rounding.
    pub fn try_add(&mut self, j: usize, g: &Gram) -> bool {
        let dj = g.dscale[j];
        if dj == 0.0 {
            return false;
        }
        let col: Vec<f64> = self
            .cuts
            .iter()
            .map(|&k| g.gram[k][j] * g.dscale[k] * dj)
            .collect();
        let l = self.forward(&col);
        let pivot2 = g.gram[j][j] * dj * dj - l.iter().map(|v| v * v).sum::<f64>();
        // Written so that a NaN pivot is refused too.
        if pivot2.is_nan() || pivot2 <= PIVOT_TOL || !l.iter().all(|v| v.is_finite()) {
            return false;
        }
        let pivot = pivot2.sqrt();
        let y_new: Vec<f64> = (0..self.n_groups)
            .map(|s| {
                let e = if g.group[j] == s { dj } else { 0.0 };
                let dot: f64 = l.iter().zip(&self.y).map(|(li, yi)| li * yi[s]).sum();
                (e - dot) / pivot
            })
            .collect();
        let mut row = l;
        row.push(pivot);
        self.rows.push(row);
        self.y.push(y_new);
        self.cuts.push(j);
        self.updates += 1;
        true
    }

    /// Removes cut j if it is in the factor; returns whether it was.
    ///
    /// Deleting row i of L leaves the rows below it one entry too long; rotations of the
    /// columns (c, c + 1), c = i, i + 1, ..., zero those entries one by one. Right-multiplying
    /// by an orthogonal matrix keeps L L^T, and the same rotations applied to the rows of Y
    /// keep L Y = D E.
    pub fn remove(&mut self, j: usize) -> bool {
        let Some(i) = self.cuts.iter().position(|&k| k == j) else {
            return false;
        };
        self.cuts.remove(i);
        self.rows.remove(i);
        let n = self.rows.len();
        for c in i..n {
            let (a, b) = (self.rows[c][c], self.rows[c][c + 1]);
            let h = a.hypot(b);
            let (cos, sin) = if h > 0.0 { (a / h, b / h) } else { (1.0, 0.0) };
            for row in &mut self.rows[c..] {
                let (x, z) = (row[c], row[c + 1]);
                row[c] = cos * x + sin * z;
                row[c + 1] = -sin * x + cos * z;
            }
            self.rows[c].truncate(c + 1);
            self.rows[c][c] = h;
            let (top, bottom) = self.y.split_at_mut(c + 1);
            for (x, z) in top[c].iter_mut().zip(bottom[0].iter_mut()) {
                let (xv, zv) = (*x, *z);
                *x = cos * xv + sin * zv;
                *z = -sin * xv + cos * zv;
            }
        }
        self.y.truncate(n);
        self.updates += 1;
        true
    }

    /// L^-1 v.
    fn forward(&self, v: &[f64]) -> Vec<f64> {
        let mut x = Vec::with_capacity(v.len());
        for (row, &vi) in self.rows.iter().zip(v) {
            let n = x.len();
            let s: f64 = row[..n].iter().zip(&x).map(|(l, xk)| l * xk).sum();
            x.push((vi - s) / row[n]);
        }
        x
    }

    /// L^-T v.
    fn backward(&self, v: &[f64]) -> Vec<f64> {
        let mut rest = v.to_vec();
        let mut x = vec![0.0; v.len()];
        for i in (0..v.len()).rev() {
            let row = &self.rows[i];
            x[i] = rest[i] / row[i];
            for (r, l) in rest[..i].iter_mut().zip(&row[..i]) {
                *r -= l * x[i];
            }
        }
        x
    }

    /// The Newton direction of the active-set method when every free cut is in the factor:
    /// p (in the factor's order) and the multipliers mu (one per group, 0 off K) with
    ///
    ///   G_FF p + E_K mu_K = r_F,   E_K^T p = c_K,
    ///
    /// r the gradients b - Ga and c_s the room left under cap s. With p = D q this is
    /// (D G_FF D) q + D E_K mu_K = D r_F and (D E_K)^T q = c_K; eliminating q through the
    /// factor leaves the Schur complement (Y_K^T Y_K) mu_K = Y_K^T L^-1 D r_F - c_K, positive
    /// definite because L is nonsingular and every capped group has a free cut. None when
    /// that small system is singular up to rounding (the caller takes the dense step).
    pub fn direction(
        &self,
        grad: &[f64],
        room: &[f64],
        capped: &[bool],
        dscale: &[f64],
    ) -> Option<(Vec<f64>, Vec<f64>)> {
        let rt: Vec<f64> = self.cuts.iter().map(|&j| dscale[j] * grad[j]).collect();
        let u = self.forward(&rt);
        let k: Vec<usize> = (0..self.n_groups).filter(|&s| capped[s]).collect();
        let mut mu = vec![0.0; self.n_groups];
        let mut v = u.clone();
        if !k.is_empty() {
            let nk = k.len();
            let mut schur = vec![vec![0.0; nk]; nk];
            let mut rhs = vec![0.0; nk];
            for (yi, ui) in self.y.iter().zip(&u) {
                for (a, &s) in k.iter().enumerate() {
                    rhs[a] += yi[s] * ui;
                    for (b, &t) in k.iter().enumerate() {
                        schur[a][b] += yi[s] * yi[t];
                    }
                }
            }
            // Scaled to a unit diagonal, so that the pivot test compares like with like.
            let sc: Vec<f64> = (0..nk)
                .map(|a| {
                    let d = schur[a][a];
                    if d > 0.0 {
                        1.0 / d.sqrt()
                    } else {
                        1.0
                    }
                })
                .collect();
            for a in 0..nk {
                rhs[a] = (rhs[a] - room[k[a]]) * sc[a];
                for b in 0..nk {
                    schur[a][b] *= sc[a] * sc[b];
                }
            }
            let z = solve_dense(schur, rhs)?;
            for (a, &s) in k.iter().enumerate() {
                mu[s] = z[a] * sc[a];
            }
            for (vi, yi) in v.iter_mut().zip(&self.y) {
                *vi -= k.iter().map(|&s| yi[s] * mu[s]).sum::<f64>();
            }
        }
        let q = self.backward(&v);
        let p: Vec<f64> = q
            .iter()
            .zip(&self.cuts)
            .map(|(qi, &j)| qi * dscale[j])
            .collect();
        (p.iter().chain(&mu).all(|x| x.is_finite())).then_some((p, mu))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// max |L L^T - D G_FF D| and max |L Y - D E| over the factor's cuts, computed directly.
    fn factor_errors(f: &FreeFactor, g: &Gram) -> (f64, f64) {
        let n = f.cuts.len();
        let mut err_l = 0.0f64;
        let mut err_y = 0.0f64;
        for a in 0..n {
            for b in 0..n {
                let llt: f64 = (0..=a.min(b)).map(|k| f.rows[a][k] * f.rows[b][k]).sum();
                let (ja, jb) = (f.cuts[a], f.cuts[b]);
                let want = g.gram[ja][jb] * g.dscale[ja] * g.dscale[jb];
                err_l = err_l.max((llt - want).abs());
            }
            for s in 0..f.n_groups {
                let ly: f64 = (0..=a).map(|k| f.rows[a][k] * f.y[k][s]).sum();
                let ja = f.cuts[a];
                let want = if g.group[ja] == s { g.dscale[ja] } else { 0.0 };
                err_y = err_y.max((ly - want).abs());
            }
        }
        (err_l, err_y)
    }

    #[test]
    fn joins_and_leaves_keep_the_factor_of_the_free_block() {
        // Random sequences of joins and leaves (in any position) on cuts of mixed scales, some
        // duplicated or a combination of others: after every operation L L^T must equal the
        // scaled free block of G and L Y the scaled incidence matrix, both recomputed from
        // their definitions; a cut dependent on the factor's cuts must be refused.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for trial in 0..60 {
            let dim = rng.random_range(2..12);
            let m = rng.random_range(2..30);
            let n_groups = 1 + trial % 4;
            let mut vecs: Vec<Vec<f64>> = Vec::new();
            for j in 0..m {
                let scale = 10f64.powf(rng.random_range(-3.0..4.0));
                let v: Vec<f64> = if j >= 2 && rng.random_bool(0.2) {
                    // a combination of two earlier cuts: dependent
                    let (a, b) = (rng.random_range(0..j), rng.random_range(0..j));
                    let (x, z) = (rng.random_range(-2.0..2.0), rng.random_range(-2.0..2.0));
                    (0..dim).map(|i| x * vecs[a][i] + z * vecs[b][i]).collect()
                } else {
                    (0..dim)
                        .map(|_| scale * rng.random_range(-1.0..1.0))
                        .collect()
                };
                vecs.push(v);
            }
            let gram: Vec<Vec<f64>> = vecs
                .iter()
                .map(|a| vecs.iter().map(|b| super::super::dot(a, b)).collect())
                .collect();
            let group: Vec<usize> = (0..m).map(|_| rng.random_range(0..n_groups)).collect();
            let dscale: Vec<f64> = (0..m)
                .map(|j| {
                    if gram[j][j] > 0.0 {
                        1.0 / gram[j][j].sqrt()
                    } else {
                        0.0
                    }
                })
                .collect();
            let g = Gram {
                gram: &gram,
                group: &group,
                dscale: &dscale,
            };
            let mut f = FreeFactor::new(n_groups);
            for _ in 0..80 {
                if f.cuts.is_empty() || rng.random_bool(0.6) {
                    let j = rng.random_range(0..m);
                    if f.cuts.contains(&j) {
                        continue;
                    }
                    let added = f.try_add(j, &g);
                    // A cut in the span of the factor's cuts (its residual after projection
                    // tiny against its length) must be refused.
                    let mut members: Vec<&Vec<f64>> = f.cuts.iter().map(|&k| &vecs[k]).collect();
                    if added {
                        members.pop();
                    }
                    let residual = projection_residual(&members, &vecs[j]);
                    let norm = super::super::dot(&vecs[j], &vecs[j]).sqrt();
                    // Rounding moves the computed pivot by about eps times the condition
                    // number of the factor's block, so the test is made where the factor is
                    // well conditioned (its smallest diagonal entry above 1e-2).
                    let well_conditioned = f.rows[..members.len()]
                        .iter()
                        .enumerate()
                        .all(|(i, r)| r[i] >= 1e-2);
                    if residual <= 1e-9 * norm && well_conditioned {
                        assert!(!added, "trial {trial}: dependent cut {j} accepted");
                    }
                } else {
                    let i = rng.random_range(0..f.cuts.len());
                    let j = f.cuts[i];
                    assert!(f.remove(j));
                    assert!(!f.cuts.contains(&j));
                }
                assert!(f.cuts.len() <= dim, "trial {trial}: more cuts than rank");
                let (el, ey) = factor_errors(&f, &g);
                assert!(el <= 1e-9, "trial {trial}: |LL' - DGD| = {el}");
                // Y's entries grow like 1/pivot: compare relative to them.
                let ymax = f.y.iter().flatten().fold(1.0f64, |s, v| s.max(v.abs()));
                assert!(ey <= 1e-9 * ymax, "trial {trial}: |LY - DE| = {ey}");
            }
        }
    }

    /// |v - P v| with P the orthogonal projection on the span of `members`, by modified
    /// Gram-Schmidt (independent of the factor).
    fn projection_residual(members: &[&Vec<f64>], v: &[f64]) -> f64 {
        let mut basis: Vec<Vec<f64>> = Vec::new();
        for m in members {
            let mut u = m.to_vec();
            for b in &basis {
                let d = super::super::dot(&u, b);
                u.iter_mut().zip(b).for_each(|(x, y)| *x -= d * y);
            }
            let n = super::super::dot(&u, &u).sqrt();
            if n > 1e-12 * super::super::dot(m, m).sqrt() {
                basis.push(u.iter().map(|x| x / n).collect());
            }
        }
        let mut r = v.to_vec();
        for b in &basis {
            let d = super::super::dot(&r, b);
            r.iter_mut().zip(b).for_each(|(x, y)| *x -= d * y);
        }
        super::super::dot(&r, &r).sqrt()
    }
}
