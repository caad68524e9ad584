//! Ranking metrics on one query, with their conventions spelled out.
//!
//! - A document is relevant when its label is above the relevance threshold; its grade (for
//!   NDCG) is its label when relevant and 0 otherwise, so SVM^map's -1/+1 labels become 0/1.
//!   A relevant document's label must be >= 0 for NDCG (`check_grades`): a negative grade
//!   would have a negative gain.
//! - The ranking sorts documents by descending score. Equal scores are ordered pessimistically
//!   (lower grade first, then input order) or by input order alone.
//! - A metric is undefined (None) on a query without a relevant document, and ROC area also on
//!   a query without a non-relevant one; the caller decides whether to skip such queries or to
//!   count them as 0 or 1.
//! - AP divides by the number of relevant documents in the list, or by a given total (as
//!   trec_eval does with the qrels' count).
//! - NDCG@k uses gain 2^grade - 1 (or the grade itself, as trec_eval does) and discount
//!   1/log2(1 + rank); its ideal ranking sorts the same list's grades. k = None means no cutoff.
//! - LETOR 4.0's NDCG (`NdcgRule::Letor`, what its Eval-Score-4.0.pl reports) discounts ranks 1
//!   and 2 by 1 and rank r >= 3 by log(2)/log(r), and gives NDCG@k of a query of fewer than k
//!   documents the value 0 (the script computes NDCG at positions 1..n only).

use rayon::prelude::*;

use crate::data::QueryGroups;
use crate::error::{Error, Result};
use crate::oracle::sorting::descending_key;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ties {
    Pessimistic,
    InputOrder,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gain {
    Exponential,
    Linear,
}

impl Ties {
    /// The spellings of the Python API, in the order of the variants.
    pub const NAMES: [&'static str; 2] = ["pessimistic", "input"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "pessimistic" => Some(Ties::Pessimistic),
            "input" => Some(Ties::InputOrder),
            _ => None,
        }
    }
}

impl Gain {
    /// The spellings of the Python API, in the order of the variants.
    pub const NAMES: [&'static str; 2] = ["exp", "linear"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "exp" => Some(Gain::Exponential),
            "linear" => Some(Gain::Linear),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    AveragePrecision,
    Ndcg(Option<usize>),
    ReciprocalRank(Option<usize>),
    RocArea,
    Precision(usize),
}

impl Metric {
    /// Parses "map", "ndcg", "ndcg@10", "mrr", "mrr@10", "roc", "p@10" (and "ap", "rr", "auc").
    pub fn parse(name: &str) -> Result<Self> {
        let lower = name.trim().to_ascii_lowercase();
        let (base, cutoff) = match lower.split_once('@') {
            Some((b, k)) => {
                let k: usize = k.parse().ok().filter(|&k| k > 0).ok_or_else(|| {
                    Error::param("cutoff k", "an integer >= 1", format!("{name:?}"))
                })?;
                (b, Some(k))
            }
            None => (lower.as_str(), None),
        };
        match (base, cutoff) {
            ("map" | "ap", None) => Ok(Metric::AveragePrecision),
            ("ndcg", k) => Ok(Metric::Ndcg(k)),
            ("mrr" | "rr", k) => Ok(Metric::ReciprocalRank(k)),
            ("roc" | "auc", None) => Ok(Metric::RocArea),
            ("p" | "precision", Some(k)) => Ok(Metric::Precision(k)),
            _ => Err(Error::param(
                "metric",
                "one of map, ndcg, ndcg@k, mrr, mrr@k, roc, p@k",
                format!("{name:?}"),
            )),
        }
    }
}

impl std::fmt::Display for Metric {
    /// The one spelling of a metric ("NDCG@02 " is "ndcg@2"): what callers compare instead of
    /// the user's text, so that every spelling `parse` accepts means the same metric everywhere.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Metric::AveragePrecision => write!(f, "map"),
            Metric::Ndcg(None) => write!(f, "ndcg"),
            Metric::Ndcg(Some(k)) => write!(f, "ndcg@{k}"),
            Metric::ReciprocalRank(None) => write!(f, "mrr"),
            Metric::ReciprocalRank(Some(k)) => write!(f, "mrr@{k}"),
            Metric::RocArea => write!(f, "roc"),
            Metric::Precision(k) => write!(f, "p@{k}"),
        }
    }
}

/// The one check of `n_relevant` (AP's denominator, trec_eval's num_rel): a count, so a
/// finite integer, and at least the relevant documents in the query's list, or AP would
/// exceed 1. A negative or NaN count used to make its query undefined, silently left out of
/// the mean (MAP 1.0 for `[-1, 1]`).
fn check_n_relevant(
    nr: &[f64],
    labels: &[f64],
    groups: &QueryGroups,
    conv: &Conventions,
) -> Result<()> {
    for (q, &count) in nr.iter().enumerate() {
        let in_list = groups
            .rows(q)
            .iter()
            .filter(|&&r| conv.is_relevant(labels[r]))
            .count();
        if !(count.is_finite() && count.fract() == 0.0 && count >= in_list as f64) {
            return Err(Error::param(
                &format!("n_relevant[{q}]"),
                &format!(
                    "a whole number of relevant documents >= the {in_list} relevant in the query's list"
                ),
                count,
            ));
        }
    }
    Ok(())
}

/// Which NDCG: svmmap's (and trec_eval's) or LETOR 4.0's script's (module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NdcgRule {
    #[default]
    Standard,
    Letor,
}

#[derive(Debug, Clone, Copy)]
pub struct Conventions {
    pub ties: Ties,
    pub gain: Gain,
    pub relevance_threshold: f64,
    pub ndcg: NdcgRule,
}

impl Default for Conventions {
    fn default() -> Self {
        Conventions {
            ties: Ties::Pessimistic,
            gain: Gain::Exponential,
            relevance_threshold: 0.0,
            ndcg: NdcgRule::Standard,
        }
    }
}

impl Conventions {
    #[inline]
    fn grade(&self, label: f64) -> f64 {
        if label > self.relevance_threshold {
            label
        } else {
            0.0
        }
    }

    #[inline]
    fn is_relevant(&self, label: f64) -> bool {
        label > self.relevance_threshold
    }

    fn gain(&self, grade: f64) -> f64 {
        match self.gain {
            Gain::Exponential => grade.exp2() - 1.0,
            Gain::Linear => grade,
        }
    }
}

/// Document indices in ranked order under the tie rule. Scores are ordered by the oracles'
/// key (`oracle::sorting::descending_key`), so -0.0 and +0.0 are one score and tie, as
/// everywhere else in svmmap.
pub fn rank(scores: &[f64], labels: &[f64], conv: &Conventions) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    let key = |i: usize| descending_key(scores[i]);
    match conv.ties {
        Ties::InputOrder => order.sort_by_key(|&i| key(i)),
        Ties::Pessimistic => order.sort_by(|&a, &b| {
            key(a)
                .cmp(&key(b))
                .then(conv.grade(labels[a]).total_cmp(&conv.grade(labels[b])))
        }),
    }
    order
}

/// The metric on one query, or None where it is undefined. `n_relevant` overrides the
/// denominator of AP (trec_eval's num_rel).
pub fn evaluate_query(
    metric: Metric,
    scores: &[f64],
    labels: &[f64],
    conv: &Conventions,
    n_relevant: Option<f64>,
) -> Option<f64> {
    let in_list = labels.iter().filter(|&&l| conv.is_relevant(l)).count();
    let total = n_relevant.unwrap_or(in_list as f64);
    if total <= 0.0 || (in_list == 0 && metric != Metric::AveragePrecision) {
        return None;
    }
    let order = rank(scores, labels, conv);
    let relevant_at = |r: usize| conv.is_relevant(labels[order[r]]);
    match metric {
        Metric::AveragePrecision => {
            let mut hits = 0.0;
            let mut sum = 0.0;
            for r in 0..order.len() {
                if relevant_at(r) {
                    hits += 1.0;
                    sum += hits / (r + 1) as f64;
                }
            }
            Some(sum / total)
        }
        Metric::Ndcg(k) if conv.ndcg == NdcgRule::Letor => letor_ndcg(&order, labels, conv, k),
        Metric::Ndcg(k) => {
            let k = k.unwrap_or(order.len()).min(order.len());
            let discount = |r: usize| 1.0 / ((r + 2) as f64).log2();
            let dcg: f64 = (0..k)
                .map(|r| conv.gain(conv.grade(labels[order[r]])) * discount(r))
                .sum();
            let mut ideal: Vec<f64> = labels.iter().map(|&l| conv.grade(l)).collect();
            ideal.sort_by(|a, b| b.total_cmp(a));
            let idcg: f64 = (0..k).map(|r| conv.gain(ideal[r]) * discount(r)).sum();
            if idcg > 0.0 {
                Some(dcg / idcg)
            } else {
                None
            }
        }
        Metric::ReciprocalRank(k) => {
            let k = k.unwrap_or(order.len()).min(order.len());
            Some(
                (0..k)
                    .find(|&r| relevant_at(r))
                    .map_or(0.0, |r| 1.0 / (r + 1) as f64),
            )
        }
        Metric::RocArea => {
            let negatives = order.len() - in_list;
            if negatives == 0 {
                return None;
            }
            // Each relevant document is counted with the non-relevant ones ranked below it.
            let mut negatives_above = 0usize;
            let mut correct = 0usize;
            for r in 0..order.len() {
                if relevant_at(r) {
                    correct += negatives - negatives_above;
                } else {
                    negatives_above += 1;
                }
            }
            Some(correct as f64 / (in_list * negatives) as f64)
        }
        Metric::Precision(k) => {
            let hits = (0..k.min(order.len())).filter(|&r| relevant_at(r)).count();
            Some(hits as f64 / k as f64)
        }
    }
}

/// NDCG@k of one ranked query as LETOR 4.0's Eval-Score-4.0.pl computes it (module comment;
/// k = None: at the query's length), or None when the ideal DCG is not positive.
fn letor_ndcg(
    order: &[usize],
    labels: &[f64],
    conv: &Conventions,
    k: Option<usize>,
) -> Option<f64> {
    let n = order.len();
    let gains: Vec<f64> = labels.iter().map(|&l| conv.gain(conv.grade(l))).collect();
    let mut ideal = gains.clone();
    ideal.sort_by(|a, b| b.total_cmp(a));
    if ideal.first().is_none_or(|&g| g.is_nan() || g <= 0.0) {
        return None;
    }
    let p = k.unwrap_or(n);
    if p > n {
        return Some(0.0);
    }
    let discount = |r: usize| {
        let rank = (r + 1) as f64;
        if rank <= 2.0 {
            1.0
        } else {
            std::f64::consts::LN_2 / rank.ln()
        }
    };
    let dcg: f64 = (0..p).map(|r| gains[order[r]] * discount(r)).sum();
    let idcg: f64 = (0..p).map(|r| ideal[r] * discount(r)).sum();
    Some(dcg / idcg)
}

/// The largest grade NDCG accepts with the exponential gain.
pub const MAX_EXP_GRADE: f64 = 1000.0;

/// The metric on every query (NaN where undefined), computed in parallel.
pub fn evaluate(
    metric: Metric,
    scores: &[f64],
    labels: &[f64],
    groups: &QueryGroups,
    conv: &Conventions,
    n_relevant: Option<&[f64]>,
) -> Result<Vec<f64>> {
    if scores.len() != labels.len() || groups.n_rows() != labels.len() {
        return Err(Error::input(format!(
            "y_true has {} entries, y_score {} and qid {}",
            labels.len(),
            scores.len(),
            groups.n_rows()
        )));
    }
    // A NaN threshold makes no label relevant and every value NaN; an infinite one makes
    // every label relevant or none: numbers without meaning, returned silently.
    if !conv.relevance_threshold.is_finite() {
        return Err(Error::param(
            "relevance_threshold",
            "a finite number",
            conv.relevance_threshold,
        ));
    }
    if let Some(nr) = n_relevant {
        if nr.len() != groups.n_queries() {
            return Err(Error::input(format!(
                "n_relevant has {} entries for {} queries",
                nr.len(),
                groups.n_queries()
            )));
        }
        check_n_relevant(nr, labels, groups, conv)?;
    }
    if let Some(r) = scores.iter().position(|s| s.is_nan()) {
        return Err(Error::input(format!("y_score[{r}] is NaN")));
    }
    check_grades(metric, labels, conv)?;
    Ok((0..groups.n_queries())
        .into_par_iter()
        .map(|q| {
            let rows = groups.rows(q);
            let s: Vec<f64> = rows.iter().map(|&r| scores[r]).collect();
            let l: Vec<f64> = rows.iter().map(|&r| labels[r]).collect();
            evaluate_query(metric, &s, &l, conv, n_relevant.map(|nr| nr[q])).unwrap_or(f64::NAN)
        })
        .collect())
}

/// The one check of the labels a metric grades (every evaluation, from the API and the
/// command line, goes through `evaluate`). NDCG's gain is a function of the grade, the label
/// of a relevant document: a grade below 0 would give a negative gain (labels -1/+1 with
/// `relevance_threshold=-2` gave NDCG -1.53), and one above `MAX_EXP_GRADE` overflows the
/// exponential gain. Both are refused, naming the label; labels at or below the threshold
/// are not relevant and have grade 0 whatever their value.
pub fn check_grades(metric: Metric, labels: &[f64], conv: &Conventions) -> Result<()> {
    if !matches!(metric, Metric::Ndcg(_)) {
        return Ok(());
    }
    if let Some(r) = labels.iter().position(|&l| conv.is_relevant(l) && l < 0.0) {
        return Err(Error::input(format!(
            "y_true[{r}] is {}: above relevance_threshold {} it is relevant, and its NDCG \
             gain would be negative; NDCG needs the labels of relevant documents to be >= 0 \
             (set relevance_threshold to 0 or more, or shift the labels)",
            labels[r], conv.relevance_threshold
        )));
    }
    if conv.gain == Gain::Exponential {
        // 2^grade summed over up to 10^7 documents stays below f64::MAX (1.8e308) for grades
        // up to 1000; beyond, DCG and its ideal overflow and the ratio would be inf / inf.
        if let Some(r) = labels.iter().position(|&l| conv.grade(l) > MAX_EXP_GRADE) {
            return Err(Error::input(format!(
                "y_true[{r}] is {}: with the gain 2^label - 1, NDCG needs labels of at most \
                 {MAX_EXP_GRADE} (above, float64 overflows); use the linear gain",
                labels[r]
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_metric_has_one_name() {
        for (spelled, name) in [
            ("NDCG@2", "ndcg@2"),
            (" ndcg@02 ", "ndcg@2"),
            ("AP", "map"),
            ("Rr@+3", "mrr@3"),
            ("AUC", "roc"),
            ("P@10", "p@10"),
            ("ndcg", "ndcg"),
        ] {
            let metric = Metric::parse(spelled).unwrap();
            assert_eq!(metric.to_string(), name, "{spelled}");
            assert_eq!(Metric::parse(name).unwrap(), metric, "{spelled}");
        }
    }

    #[test]
    fn n_relevant_is_a_count_of_at_least_the_listed_relevant() {
        // Query 0 lists one relevant document, query 1 one as well.
        let labels = [1.0, 0.0, 1.0, 0.0];
        let scores = [0.9, 0.1, 0.9, 0.1];
        let groups = QueryGroups::from_codes(&[0, 0, 1, 1], 2).unwrap();
        let conv = Conventions::default();
        for bad in [-1.0, f64::NAN, f64::INFINITY, 0.5, 0.0] {
            let nr = [bad, 1.0];
            let err = evaluate(
                Metric::AveragePrecision,
                &scores,
                &labels,
                &groups,
                &conv,
                Some(&nr),
            );
            assert!(
                err.unwrap_err().to_string().contains("n_relevant[0]"),
                "{bad}"
            );
        }
        // AP of query 0 with 4 relevant documents in the collection: 1 / 4.
        let nr = [4.0, 1.0];
        let ap = evaluate(
            Metric::AveragePrecision,
            &scores,
            &labels,
            &groups,
            &conv,
            Some(&nr),
        )
        .unwrap();
        assert_eq!(ap, vec![0.25, 1.0]);
    }

    fn eval(metric: &str, scores: &[f64], labels: &[f64]) -> Option<f64> {
        evaluate_query(
            Metric::parse(metric).unwrap(),
            scores,
            labels,
            &Conventions::default(),
            None,
        )
    }

    /// LETOR 4.0's NDCG by hand. Grades 0, 2, 1 in ranked order: DCG@3 = 0 + 3 (rank 2,
    /// undiscounted) + 1 * log(2)/log(3); the ideal 2, 1, 0 gives 3 + 1 + 0 (rank 3 has grade 0).
    #[test]
    fn letor_ndcg_by_hand() {
        let letor = Conventions {
            ties: Ties::InputOrder,
            ndcg: NdcgRule::Letor,
            ..Conventions::default()
        };
        let at = |k: Option<usize>, scores: &[f64], labels: &[f64], conv: &Conventions| {
            evaluate_query(Metric::Ndcg(k), scores, labels, conv, None)
        };
        let (scores, labels) = ([3.0, 2.0, 1.0], [0.0, 2.0, 1.0]);
        let ndcg3 = at(Some(3), &scores, &labels, &letor).unwrap();
        assert!(
            (ndcg3 - (3.0 + 2f64.ln() / 3f64.ln()) / 4.0).abs() < 1e-15,
            "{ndcg3}"
        );
        assert_eq!(at(Some(2), &scores, &labels, &letor), Some(0.75));
        // Fewer documents than k: 0, a value and not undefined.
        assert_eq!(at(Some(4), &scores, &labels, &letor), Some(0.0));
        assert_eq!(at(None, &scores, &labels, &letor), Some(ndcg3));
        // Equal scores in input order, or pessimistic (the lower grade first).
        let ties = [1.0, 1.0, 1.0];
        assert_eq!(at(Some(1), &ties, &[2.0, 0.0, 0.0], &letor), Some(1.0));
        let pessimistic = Conventions {
            ties: Ties::Pessimistic,
            ..letor
        };
        assert_eq!(
            at(Some(1), &ties, &[2.0, 0.0, 0.0], &pessimistic),
            Some(0.0)
        );
        // No relevant document: undefined. svmmap's NDCG@2 of the same query differs (rank 2
        // discounted by 1/log2(3)).
        assert_eq!(at(Some(2), &scores, &[0.0, 0.0, 0.0], &letor), None);
        // svmmap's: DCG@2 = 3 / log2(3), ideal 3 + 1 / log2(3).
        let standard = at(Some(2), &scores, &labels, &Conventions::default()).unwrap();
        let by_hand = (3.0 / 3f64.log2()) / (3.0 + 1.0 / 3f64.log2());
        assert!((standard - by_hand).abs() < 1e-15, "{standard} {by_hand}");
    }

    /// Yue et al. Table 1: relevance of documents 1..8 is 1 0 0 0 0 1 1 0; h1 ranks them
    /// 8..1 (document 1 first), h2 ranks them in reverse.
    #[test]
    fn yue_table_2() {
        let labels = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0];
        let h1 = [8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0];
        let h2 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        // h1: relevant at ranks 1, 6, 7: AP = (1 + 2/6 + 3/7)/3 = 0.587.
        // h2: relevant at ranks 2, 3, 8: AP = (1/2 + 2/3 + 3/8)/3 = 0.514.
        assert!(
            (eval("map", &h1, &labels).unwrap() - (1.0 + 2.0 / 6.0 + 3.0 / 7.0) / 3.0).abs()
                < 1e-12
        );
        assert!(
            (eval("map", &h2, &labels).unwrap() - (0.5 + 2.0 / 3.0 + 3.0 / 8.0) / 3.0).abs()
                < 1e-12
        );
        // ROC: h1 orders 7 of 15 pairs correctly (doc 1 above all 5, docs 6, 7 above doc 8),
        // h2 orders 8 (docs 6, 7 above docs 2-5).
        assert!((eval("roc", &h1, &labels).unwrap() - 7.0 / 15.0).abs() < 1e-12);
        assert!((eval("roc", &h2, &labels).unwrap() - 8.0 / 15.0).abs() < 1e-12);
    }

    #[test]
    fn ties_are_pessimistic_by_default() {
        // All scores equal: the relevant document goes last. AP = 1/3, RR = 1/3.
        let labels = [1.0, 0.0, 0.0];
        let scores = [0.0; 3];
        assert!((eval("map", &scores, &labels).unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert!((eval("mrr", &scores, &labels).unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(eval("mrr@2", &scores, &labels), Some(0.0));
        assert_eq!(eval("roc", &scores, &labels), Some(0.0));
        let input = Conventions {
            ties: Ties::InputOrder,
            ..Conventions::default()
        };
        assert_eq!(
            evaluate_query(Metric::AveragePrecision, &scores, &labels, &input, None),
            Some(1.0)
        );
    }

    #[test]
    fn ndcg_by_hand() {
        // Grades 2, 0, 1 ranked in this order. Gains 3, 0, 1; DCG = 3 + 0 + 1/log2(4) = 3.5.
        // Ideal 2, 1, 0: IDCG = 3 + 1/log2(3). NDCG@1 = 1.
        let labels = [2.0, 0.0, 1.0];
        let scores = [3.0, 2.0, 1.0];
        let expected = 3.5 / (3.0 + 1.0 / 3f64.log2());
        assert!((eval("ndcg", &scores, &labels).unwrap() - expected).abs() < 1e-12);
        assert!((eval("ndcg@1", &scores, &labels).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(eval("ndcg", &scores, &[0.0, 0.0, 0.0]), None);
        assert_eq!(
            eval("ndcg", &scores, &[-1.0, -1.0, 1.0]).map(|v| (v * 1e12).round()),
            Some((0.5 * 1e12f64).round())
        );
    }

    #[test]
    fn undefined_cases() {
        assert_eq!(eval("map", &[1.0, 2.0], &[0.0, 0.0]), None);
        assert_eq!(eval("roc", &[1.0, 2.0], &[1.0, 1.0]), None);
        assert_eq!(eval("p@5", &[1.0, 2.0], &[1.0, 0.0]), Some(0.2));
        assert!(Metric::parse("ndcg@0").is_err());
        assert!(Metric::parse("map@3").is_err());
        assert!(Metric::parse("foo").is_err());
    }
}
