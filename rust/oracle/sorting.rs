//! The score order every oracle uses: descending score, equal scores by index (one key
//! transformation, `descending_key`), and the averaging of the coefficients of tied documents.

/// Replaces the coefficients of documents that tie in score within `sorted` (one relevance
/// class, sorted by descending score) by their mean.
///
/// Documents of equal relevance and equal score are interchangeable in the argmax: every
/// assignment of them to the tied positions gives the same H. Averaging their coefficients
/// takes the mean of those equally violated constraints, which is implied by them and as
/// violated, so the cutting-plane algorithm stays exact, and it makes the cut independent of
/// the order in which the caller listed the documents.
pub(crate) fn average_ties(sorted: &[usize], scores: &[f64], coef: &mut [f64]) {
    let mut start = 0;
    while start < sorted.len() {
        let s = scores[sorted[start]];
        let mut end = start + 1;
        while end < sorted.len() && scores[sorted[end]] == s {
            end += 1;
        }
        if end - start > 1 {
            let run = &sorted[start..end];
            let mean = run.iter().map(|&i| coef[i]).sum::<f64>() / run.len() as f64;
            for &i in run {
                coef[i] = mean;
            }
        }
        start = end;
    }
}

/// Sorts document indices by descending score, equal scores by index (the order of
/// `split_sorted`), through the same (key, index) pairs.
pub(crate) fn sort_descending(indices: &mut [usize], scores: &[f64]) {
    let mut keyed: Vec<(u64, usize)> = indices
        .iter()
        .map(|&i| (descending_key(scores[i]), i))
        .collect();
    keyed.sort_unstable();
    for (slot, (_, i)) in indices.iter_mut().zip(keyed) {
        *slot = i;
    }
}

/// A key whose ascending order is the descending order of scores: that of `f64::total_cmp`
/// (the same bit transformation: negative values have their magnitude bits flipped, then the
/// sign bit is flipped so that the signed order becomes the unsigned one, then all bits are
/// flipped), except that -0.0 and +0.0 have one key. The two zeros are one score (`X @ w`
/// gives -0.0 wherever a row's products are all -0.0), so they tie, as they do for `==` in
/// `average_ties`; `score + 0.0` turns -0.0 into +0.0 and leaves every other value as it is.
/// The metrics (`crate::metrics::rank`) order scores through this key too.
#[inline]
pub(crate) fn descending_key(score: f64) -> u64 {
    let bits = (score + 0.0).to_bits() as i64;
    let ordered = bits ^ ((((bits >> 63) as u64) >> 1) as i64);
    !((ordered as u64) ^ (1 << 63))
}
