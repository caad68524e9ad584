//! Tests that `BinnedView::split`, the base features' and the pairs' codes in two arrays of
//! their own code types, reads as the one array of the same codes, bit for bit: every row
//! operation on random codes of every combined width mod 4, and the code check's errors.

use crate::binning::thresholds::{Missing, Thresholds};
use crate::data::binned::{BinLayout, Code};
use crate::data::binned_view::BinnedView;
use crate::data::matrix::RowMatrix;

/// Random codes for `n` rows of the layout of `counts` thresholds and `grids` pairs, every
/// code in its column's range (missing codes included), row-major over the combined columns.
fn random_case(
    rng: &mut rand_chacha::ChaCha8Rng,
    n: usize,
    counts: &[usize],
    grids: &[(usize, usize)],
    missing: Missing,
) -> (Thresholds, Vec<usize>) {
    use rand::Rng;
    let mut values = Vec::new();
    let mut offsets = vec![0];
    for &k in counts {
        values.extend((0..k).map(|t| t as f64));
        offsets.push(values.len());
    }
    let th = Thresholds::new(values, offsets).unwrap();
    let layout = BinLayout::with_pairs(&th, missing, grids);
    let d = layout.n_code_columns();
    let codes = (0..n * d)
        .map(|i| rng.random_range(0..=layout.code_limit(i % d)))
        .collect();
    (th, codes)
}

/// Every row operation of the split view (base codes as `B`, pair codes as `P`) against
/// the one-array view of the same codes as u16, bit for bit; returns how many rows' scores
/// differ in their bits from the terms summed one by one in column order.
fn split_equals_one_array<B: Code, P: Code>(
    th: &Thresholds,
    codes: &[usize],
    n: usize,
    missing: Missing,
    grids: &[(usize, usize)],
    w: &[f64],
) -> usize {
    let nb = th.n_features();
    let d = nb + grids.len();
    let one: Vec<u16> = codes.iter().map(|&c| u16::from_usize(c)).collect();
    let base: Vec<B> = (0..n * nb)
        .map(|i| B::from_usize(codes[i / nb * d + i % nb]))
        .collect();
    let pairs: Vec<P> = (0..n * (d - nb))
        .map(|i| P::from_usize(codes[i / (d - nb) * d + nb + i % (d - nb)]))
        .collect();
    let single = BinnedView::with_pairs(&one, n, nb, th, missing, grids).unwrap();
    let split = BinnedView::split((&base, &pairs), n, nb, th, missing, grids).unwrap();
    assert_eq!(split.n_cols(), single.n_cols());
    assert_eq!(split.acc_len(), single.acc_len());
    let table = single.prepare(w);
    assert_eq!(split.prepare(w), table);
    let (mut h1, mut h2) = (vec![0.0; single.acc_len()], vec![0.0; split.acc_len()]);
    let (mut a1, mut a2) = (vec![0.0; single.n_cols()], vec![0.0; split.n_cols()]);
    let mut order_matters = 0;
    for r in 0..n {
        let score = single.row_score(r, w, &table);
        assert_eq!(
            split.row_score(r, w, &table).to_bits(),
            score.to_bits(),
            "row {r}"
        );
        let dot = single.row_dot(r, w);
        assert_eq!(split.row_dot(r, w).to_bits(), dot.to_bits(), "row {r}");
        let in_order = (0..d).fold(0.0f64, |s, j| {
            s + table[single.layout().slots[j] + codes[r * d + j]]
        });
        order_matters += usize::from(in_order.to_bits() != score.to_bits());
        let alpha = w[r % w.len()] * 3.0 + 0.1;
        single.row_axpy(r, alpha, &mut a1);
        split.row_axpy(r, alpha, &mut a2);
        single.row_accumulate(r, alpha, &mut h1);
        split.row_accumulate(r, alpha, &mut h2);
    }
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a2), bits(&a1));
    assert_eq!(bits(&h2), bits(&h1));
    assert_eq!(bits(&split.finish(h2)), bits(&single.finish(h1)));
    order_matters
}

#[test]
fn split_codes_give_the_one_array_sums_bit_for_bit() {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    // Every split of the code columns between the arrays against the lanes of `row_score`:
    // 1..=9 base features and 0..=5 pairs make the combined width every remainder mod 4,
    // with the boundary at every lane; grids up to 20 x 20 give pair codes above 255.
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    let n = 40;
    let mut order_matters = 0;
    for nb in 1..=9 {
        for n_pairs in 0..=5 {
            let missing = if (nb + n_pairs) % 2 == 0 {
                Missing::Indicator
            } else {
                Missing::Error
            };
            let counts: Vec<usize> = (0..nb).map(|_| rng.random_range(1..=6)).collect();
            let grids: Vec<(usize, usize)> = (0..n_pairs)
                .map(|_| (rng.random_range(1..=20), rng.random_range(1..=20)))
                .collect();
            let (th, codes) = random_case(&mut rng, n, &counts, &grids, missing);
            let n_cols = BinLayout::with_pairs(&th, missing, &grids).n_cols;
            let w: Vec<f64> = (0..n_cols).map(|_| rng.random_range(-1.0..1.0)).collect();
            order_matters += split_equals_one_array::<u8, u16>(&th, &codes, n, missing, &grids, &w);
            split_equals_one_array::<u16, u16>(&th, &codes, n, missing, &grids, &w);
            if codes.iter().all(|&c| c <= 255) {
                split_equals_one_array::<u8, u8>(&th, &codes, n, missing, &grids, &w);
            }
        }
    }
    // The comparison can fail: the lanes' sums differ in their bits from the plain sum in
    // column order on some rows, so a view that added in another order would be caught.
    assert!(order_matters > 0);
}

#[test]
fn split_codes_out_of_range_are_refused_as_in_one_array() {
    // Two base features (thresholds 2 and 1, no missing indicator: codes 0..=2, 0..=1) and
    // one pair of grid (1, 2) (codes 0..=5, its missing code 6), three rows.
    let th = Thresholds::new(vec![0.0, 1.0, 0.0], vec![0, 2, 3]).unwrap();
    let grids = [(1, 2)];
    let ok: [usize; 9] = [2, 1, 6, 0, 0, 5, 1, 1, 0];
    let message = |bad: &[(usize, usize)]| {
        let mut codes = ok;
        for &(i, v) in bad {
            codes[i] = v;
        }
        let one: Vec<u16> = codes.iter().map(|&c| c as u16).collect();
        let base: Vec<u8> = [0, 1, 3, 4, 6, 7].iter().map(|&i| codes[i] as u8).collect();
        let pairs: Vec<u16> = [2, 5, 8].iter().map(|&i| codes[i] as u16).collect();
        let e1 = BinnedView::with_pairs(&one, 3, 2, &th, Missing::Error, &grids).err();
        let e2 = BinnedView::split((&base, &pairs), 3, 2, &th, Missing::Error, &grids).err();
        let (e1, e2) = (e1.map(|e| e.to_string()), e2.map(|e| e.to_string()));
        assert_eq!(e1, e2);
        e2
    };
    assert_eq!(message(&[]), None);
    let pair = "bin code 7 at row 1, pair 0 is out of range: the pair has 1 x 2 coarse \
                thresholds, so its codes are 0..=6";
    assert!(message(&[(5, 7)]).unwrap().contains(pair));
    let base = "bin code 3 at row 2, feature 0 is out of range: feature 0 has 2 \
                thresholds, so its codes are 0..=2";
    assert!(message(&[(6, 3)]).unwrap().contains(base));
    // The first bad code in row order, whichever array holds it: the pair's at row 1
    // before the base feature's at row 2, and in one row the base features' first.
    assert!(message(&[(5, 7), (6, 3)]).unwrap().contains(pair));
    assert!(message(&[(7, 2), (8, 9)])
        .unwrap()
        .contains("row 2, feature 1"));
    // A pair array of the wrong length is refused by name.
    let err = BinnedView::split((&[0u8; 6], &[0u16; 2]), 3, 2, &th, Missing::Error, &grids)
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("pair codes of shape (3, 1)"),
        "{err}"
    );
}
