use super::*;
use crate::oracle::interface::dot;
use crate::oracle::ndcg::NdcgOracle;
use crate::oracle::testing::{
    brute_force_graded_ndcg_hinge, brute_force_max, graded_ndcg_loss, graded_psi_gap,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A query of n documents: grades drawn from `grades` (at least two distinct, one of them
/// positive), scores tied about half of the time (three levels) or spread.
fn random_query<R: Rng>(rng: &mut R, n: usize, grades: &[f64]) -> (Vec<f64>, Vec<f64>) {
    loop {
        let tied = rng.random_bool(0.5);
        let scores: Vec<f64> = (0..n)
            .map(|_| {
                if tied {
                    rng.random_range(0..3) as f64 * 0.25
                } else {
                    rng.random_range(-1.0..1.0)
                }
            })
            .collect();
        let labels: Vec<f64> = (0..n)
            .map(|_| grades[rng.random_range(0..grades.len())])
            .collect();
        let relevant: Vec<bool> = labels.iter().map(|&l| l > 0.0).collect();
        if GradedNdcgOracle::default().usable(&labels, &relevant) {
            return (scores, labels);
        }
    }
}

/// The grade sets drawn: binary, 0..4 with grades missing, and all five.
const GRADE_SETS: &[&[f64]] = &[
    &[0.0, 1.0],
    &[0.0, 2.0],
    &[1.0, 3.0],
    &[0.0, 1.0, 2.0],
    &[0.0, 2.0, 4.0],
    &[1.0, 2.0, 4.0],
    &[0.0, 1.0, 2.0, 3.0, 4.0],
];

/// The oracle's hinge Delta - c.s equals the brute-force maximum over every ranking, for
/// k in {1, 2, 3, n, none}; and its cut is a genuine constraint: at other scores s',
/// Delta - c.s' never exceeds the brute-force maximum at s' (a cut that was not a convex
/// combination of rankings' constraints would overshoot somewhere).
#[test]
fn matches_brute_force_over_every_ranking() {
    let mut rng = ChaCha8Rng::seed_from_u64(34);
    for trial in 0..900 {
        let n = rng.random_range(2..=7);
        let grades = GRADE_SETS[trial % GRADE_SETS.len()];
        let (scores, labels) = random_query(&mut rng, n, grades);
        for cutoff in [Some(1), Some(2), Some(3), Some(n), None] {
            let oracle = GradedNdcgOracle { cutoff };
            let relevant: Vec<bool> = labels.iter().map(|&l| l > 0.0).collect();
            let mut coef = vec![0.0; n];
            let delta = oracle.argmax_labels(&scores, &labels, &relevant, &mut coef);
            let h = delta - dot(&coef, &scores);
            let brute = brute_force_graded_ndcg_hinge(&scores, &labels, cutoff);
            assert!(
                (h - brute).abs() < 1e-10,
                "{} scores {scores:?} labels {labels:?}: oracle {h}, brute force {brute}",
                oracle.name()
            );
            let other: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
            let at_other = delta - dot(&coef, &other);
            let brute_other = brute_force_graded_ndcg_hinge(&other, &labels, cutoff);
            assert!(
                at_other <= brute_other + 1e-10,
                "{}: the cut gives {at_other} at {other:?}, more than any ranking \
                 ({brute_other}); scores {scores:?} labels {labels:?}",
                oracle.name()
            );
        }
    }
}

/// Without ties the argmax ranking is unique for almost every draw, so Delta itself is the
/// loss of a ranking that attains the maximum, and the coefficients are that ranking's.
#[test]
fn delta_and_coefficients_are_those_of_a_best_ranking() {
    let mut rng = ChaCha8Rng::seed_from_u64(2008);
    for trial in 0..300 {
        let n = rng.random_range(2..=6);
        let grades = GRADE_SETS[trial % GRADE_SETS.len()];
        let (mut scores, labels) = random_query(&mut rng, n, grades);
        for s in &mut scores {
            *s = rng.random_range(-1.0..1.0);
        }
        let cutoff = [Some(1), Some(2), None][trial % 3];
        let relevant: Vec<bool> = labels.iter().map(|&l| l > 0.0).collect();
        let mut coef = vec![0.0; n];
        let oracle = GradedNdcgOracle { cutoff };
        let delta = oracle.argmax_labels(&scores, &labels, &relevant, &mut coef);
        let h = delta - dot(&coef, &scores);
        // Some ranking has this Delta and this hinge.
        let matched = brute_force_max(n, |perm| {
            let ranked: Vec<f64> = perm.iter().map(|&d| labels[d]).collect();
            let loss = graded_ndcg_loss(&ranked, cutoff);
            let value = loss + graded_psi_gap(&scores, &labels, perm);
            if (loss - delta).abs() < 1e-12 && (value - h).abs() < 1e-10 {
                1.0
            } else {
                0.0
            }
        });
        assert_eq!(
            matched, 1.0,
            "scores {scores:?} labels {labels:?}: Delta {delta}, hinge {h} is no ranking's"
        );
    }
}

/// On binary labels the graded loss is NDCG with the gain 2^1 - 1 = 1 and the default
/// discount (`Discount::Log2`), the binary "ndcg@k": the same hinge.
#[test]
fn equals_binary_ndcg_on_binary_labels() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for trial in 0..400 {
        let n = rng.random_range(2..=40);
        let (scores, labels) = random_query(&mut rng, n, &[0.0, 1.0]);
        let relevant: Vec<bool> = labels.iter().map(|&l| l > 0.0).collect();
        let cutoff = [Some(1), Some(3), Some(10), None][trial % 4];
        let binary = NdcgOracle {
            cutoff,
            discount: Discount::Log2,
        };
        let graded = GradedNdcgOracle { cutoff };
        let (mut c1, mut c2) = (vec![0.0; n], vec![0.0; n]);
        let d1 = binary.argmax(&scores, &relevant, &mut c1);
        let d2 = graded.argmax_labels(&scores, &labels, &relevant, &mut c2);
        let (h1, h2) = (d1 - dot(&c1, &scores), d2 - dot(&c2, &scores));
        assert!((h1 - h2).abs() < 1e-10, "{cutoff:?}: {h1} vs {h2}");
        // The binary entry point reads relevance as grades 1 and 0.
        let d3 = graded.argmax(&scores, &relevant, &mut c2);
        assert!((d3 - dot(&c2, &scores) - h1).abs() < 1e-10);
    }
}

/// Documents of one grade that tie in score are interchangeable, so listing the documents
/// in reverse order must reverse the coefficients exactly (`average_ties`), and ties
/// across grades below rank K must be ordered by grade, not by position.
#[test]
fn the_cut_does_not_depend_on_the_order_of_listing() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    for trial in 0..400 {
        let n = rng.random_range(2..=30);
        let (mut scores, labels) = random_query(&mut rng, n, GRADE_SETS[trial % 7]);
        for s in &mut scores {
            *s = rng.random_range(0..3) as f64 * 0.25;
        }
        let relevant: Vec<bool> = labels.iter().map(|&l| l > 0.0).collect();
        let cutoff = [Some(1), Some(3), None][trial % 3];
        let oracle = GradedNdcgOracle { cutoff };
        let (mut c1, mut c2) = (vec![0.0; n], vec![0.0; n]);
        let d1 = oracle.argmax_labels(&scores, &labels, &relevant, &mut c1);
        let rev = |v: &[f64]| v.iter().rev().copied().collect::<Vec<_>>();
        let rel_rev: Vec<bool> = relevant.iter().rev().copied().collect();
        let d2 = oracle.argmax_labels(&rev(&scores), &rev(&labels), &rel_rev, &mut c2);
        assert_eq!(d1, d2, "scores {scores:?} labels {labels:?}");
        for (i, c) in c1.iter().enumerate() {
            assert!(
                (c - c2[n - 1 - i]).abs() < 1e-12,
                "{cutoff:?} scores {scores:?} labels {labels:?}: {c1:?} vs reversed {c2:?}"
            );
        }
    }
}

#[test]
fn by_hand_at_zero_scores() {
    // w = 0: only Delta counts, and the worst ranking puts the grades in ascending order.
    // Grades 2, 1, 0 with k = 2: DCG* = 3 + 1/log2(3); the worst top two are grades 0, 1
    // with DCG = 0 + 1/log2(3), so Delta = 1 - (1/log2(3)) / (3 + 1/log2(3)).
    let labels = [2.0, 1.0, 0.0];
    let relevant = [true, true, false];
    let mut coef = [0.0; 3];
    let oracle = GradedNdcgOracle { cutoff: Some(2) };
    let delta = oracle.argmax_labels(&[0.0; 3], &labels, &relevant, &mut coef);
    let d1 = 1.0 / 3f64.log2();
    assert!((delta - (1.0 - d1 / (3.0 + d1))).abs() < 1e-15, "{delta}");
    // That ranking (grades 0, 1, 2 from the top) reverses all Z = 3 pairs, and
    // c_i = 2/Z (lower grades above i - higher grades below i): grade 2 has two lower
    // grades above it (4/3), grade 1 one above and one higher below (0), grade 0 two
    // higher below (-4/3).
    assert!((coef[0] - 4.0 / 3.0).abs() < 1e-15, "{coef:?}");
    assert!((coef[1] - 0.0).abs() < 1e-15, "{coef:?}");
    assert!((coef[2] + 4.0 / 3.0).abs() < 1e-15, "{coef:?}");
}

#[test]
fn labels_it_cannot_grade_are_refused() {
    let oracle = GradedNdcgOracle { cutoff: Some(10) };
    // Relevant with a label of 0 or less (a negative relevance threshold), or above the
    // largest grade the metrics accept: one error naming the loss and the label.
    for (labels, relevant) in [
        (vec![0.0, -1.0], vec![true, false]),
        (vec![-0.5, -1.0], vec![true, false]),
        (vec![1001.0, 0.0], vec![true, false]),
    ] {
        let message = oracle
            .check_grades(&labels, &relevant)
            .unwrap_err()
            .to_string();
        assert!(message.contains("ndcg@10:graded"), "{message}");
        assert!(message.contains(&format!("{}", labels[0])), "{message}");
    }
    // Labels at or below the threshold have grade 0 whatever their value.
    assert!(oracle.check_grades(&[-7.0, 1.0], &[false, true]).is_ok());
    assert!(oracle.check_grades(&[0.5, 1000.0], &[true, true]).is_ok());
}

#[test]
fn usable_queries_have_two_grades_and_a_positive_gain() {
    let o = GradedNdcgOracle::default();
    assert!(o.usable(&[1.0, 0.0], &[true, false]));
    // All relevant with two labels: usable (the binary losses cannot use it).
    assert!(o.usable(&[1.0, 2.0], &[true, true]));
    assert!(!o.usable(&[2.0, 2.0], &[true, true]));
    // Two labels, both at or below the threshold: both grade 0.
    assert!(!o.usable(&[0.0, -1.0], &[false, false]));
}
