//! Dense square linear systems by Gaussian elimination, for the exact QP solvers: with partial
//! pivoting, failing on a singular matrix (polish.rs), and with complete pivoting, returning a
//! vector of the kernel of a singular symmetric matrix (active_set.rs).

pub(super) enum Solved {
    Solution(Vec<f64>),
    /// A nonzero z with mat z = 0.
    Kernel(Vec<f64>),
    Failed,
}

/// Gaussian elimination with complete pivoting on a symmetric matrix: the solution of
/// `mat x = rhs`, or, when a pivot is negligible against the largest entry (rank
/// deficiency), a vector of the kernel, from back substitution with the first unpivoted
/// variable set to 1.
pub(super) fn solve_or_kernel(mut mat: Vec<Vec<f64>>, mut rhs: Vec<f64>) -> Solved {
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
pub(super) fn solve_dense(mut mat: Vec<Vec<f64>>, mut rhs: Vec<f64>) -> Option<Vec<f64>> {
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
