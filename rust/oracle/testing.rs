//! Brute-force references for the oracle tests: enumerate every ranking of a small query.
//! Written from the definitions (DESIGN.md section 1), sharing no code with the oracles.

use rand::Rng;

/// A random query of n documents whose scores contain ties about half of the time.
pub fn random_query<R: Rng>(rng: &mut R, n: usize) -> (Vec<f64>, Vec<bool>) {
    let tied = rng.random_bool(0.5);
    let scores = (0..n)
        .map(|_| {
            if tied {
                rng.random_range(0..3) as f64 * 0.25
            } else {
                rng.random_range(-1.0..1.0)
            }
        })
        .collect();
    let frac = rng.random_range(0.1..0.9);
    let relevant = (0..n).map(|_| rng.random_bool(frac)).collect();
    (scores, relevant)
}

/// 1 - AP of a ranking given as the relevance of its documents from the top.
pub fn map_loss(ranked: &[bool]) -> f64 {
    let total = ranked.iter().filter(|&&r| r).count() as f64;
    let mut hits = 0.0;
    let mut ap = 0.0;
    for (i, &r) in ranked.iter().enumerate() {
        if r {
            hits += 1.0;
            ap += hits / (i + 1) as f64;
        }
    }
    1.0 - ap / total
}

/// Calls `f` with every permutation of 0..n (Heap's algorithm).
pub fn for_each_permutation(n: usize, mut f: impl FnMut(&[usize])) {
    let mut perm: Vec<usize> = (0..n).collect();
    let mut c = vec![0usize; n];
    f(&perm);
    let mut i = 0;
    while i < n {
        if c[i] < i {
            if i % 2 == 0 {
                perm.swap(0, i);
            } else {
                perm.swap(c[i], i);
            }
            f(&perm);
            c[i] += 1;
            i = 0;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
}

/// max over all rankings y of loss(y) + w.Psi_po(y) - w.Psi_po(y*), with
/// Psi_po(y) = 1/(P N) sum_{i rel, j non-rel} y_ij (x_i - x_j).
pub fn brute_force_hinge(scores: &[f64], relevant: &[bool], loss: fn(&[bool]) -> f64) -> f64 {
    let n = scores.len();
    let p = relevant.iter().filter(|&&r| r).count();
    let pn = (p * (n - p)) as f64;
    let mut best = f64::NEG_INFINITY;
    let mut rank = vec![0usize; n];
    for_each_permutation(n, |perm| {
        for (r, &doc) in perm.iter().enumerate() {
            rank[doc] = r;
        }
        let mut psi_diff = 0.0;
        for i in (0..n).filter(|&i| relevant[i]) {
            for j in (0..n).filter(|&j| !relevant[j]) {
                let y_ij = if rank[i] < rank[j] { 1.0 } else { -1.0 };
                psi_diff += (y_ij - 1.0) * (scores[i] - scores[j]);
            }
        }
        let ranked: Vec<bool> = perm.iter().map(|&d| relevant[d]).collect();
        let value = loss(&ranked) + psi_diff / pn;
        if value > best {
            best = value;
        }
    });
    best
}
