"""Yue et al. (2007), Tables 1-4: the toy examples showing that ROC area and accuracy can
prefer the hypothesis with the worse MAP."""

import pytest
from svmmap.metrics import best_accuracy, mean_average_precision, roc_auc

# Table 1: relevance of documents 1..8; h1 gives document 1 the highest rank value (8), so it
# ranks the documents 1, 2, ..., 8; h2 ranks them 8, 7, ..., 1.
TABLE1_P = [1, 0, 0, 0, 0, 1, 1, 0]
TABLE1_H1 = [8, 7, 6, 5, 4, 3, 2, 1]
TABLE1_H2 = [1, 2, 3, 4, 5, 6, 7, 8]

# Table 3: eleven documents; h1 ranks them 1..11, h2 11..1.
TABLE3_P = [1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0]
TABLE3_H1 = list(range(11, 0, -1))
TABLE3_H2 = list(range(1, 12))


def test_table_2_map_and_roc_area():
    # h1: relevant at ranks 1, 6, 7: AP = (1/1 + 2/6 + 3/7) / 3 = 0.5873 -> 0.59.
    # h2: relevant (7, 6, 1) at ranks 2, 3, 8: AP = (1/2 + 2/3 + 3/8) / 3 = 0.5139 -> 0.51.
    assert mean_average_precision(TABLE1_P, TABLE1_H1) == pytest.approx((1 + 2 / 6 + 3 / 7) / 3)
    assert mean_average_precision(TABLE1_P, TABLE1_H2) == pytest.approx((1 / 2 + 2 / 3 + 3 / 8) / 3)
    assert round(mean_average_precision(TABLE1_P, TABLE1_H1), 2) == 0.59
    assert round(mean_average_precision(TABLE1_P, TABLE1_H2), 2) == 0.51
    # ROC area over the 3 x 5 pairs. h1: document 1 is above all five non-relevant documents,
    # documents 6 and 7 only above document 8: 5 + 1 + 1 = 7 of 15 = 0.47.
    # h2: documents 7 and 6 are above 5, 4, 3, 2 (document 8 is first): 4 + 4 = 8 of 15 = 0.53.
    assert roc_auc(TABLE1_P, TABLE1_H1) == pytest.approx(7 / 15)
    assert roc_auc(TABLE1_P, TABLE1_H2) == pytest.approx(8 / 15)
    assert round(roc_auc(TABLE1_P, TABLE1_H1), 2) == 0.47
    assert round(roc_auc(TABLE1_P, TABLE1_H2), 2) == 0.53


def test_table_4_map_and_best_accuracy():
    # h1: relevant documents 1, 6, 7, 8, 9 at ranks 1, 6, 7, 8, 9:
    # AP = (1 + 2/6 + 3/7 + 4/8 + 5/9) / 5 = 0.5635 -> 0.56.
    # h2 ranks 11, 10, 9, ..., 1: relevant 9, 8, 7, 6 at ranks 3, 4, 5, 6 and 1 at rank 11:
    # AP = (1/3 + 2/4 + 3/5 + 4/6 + 5/11) / 5 = 0.5109 -> 0.51.
    ap1 = (1 + 2 / 6 + 3 / 7 + 4 / 8 + 5 / 9) / 5
    ap2 = (1 / 3 + 2 / 4 + 3 / 5 + 4 / 6 + 5 / 11) / 5
    assert mean_average_precision(TABLE3_P, TABLE3_H1) == pytest.approx(ap1)
    assert mean_average_precision(TABLE3_P, TABLE3_H2) == pytest.approx(ap2)
    assert (round(ap1, 2), round(ap2, 2)) == (0.56, 0.51)
    # Best accuracy over all thresholds. h1: calling the top t relevant gives
    # t = 0: 6 right (the non-relevant); t = 1: 7; t = 2..5: 6, 5, 4, 3; t = 6..9: 4, 5, 6, 7;
    # t = 10, 11: 6, 5. Best 7/11 = 0.64 (the paper's cut after document 1).
    # h2 (order 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1): t = 0: 6; t = 1, 2: 5, 4; t = 3..6: 5, 6, 7, 8;
    # t = 7..10: 7, 6, 5, 4; t = 11: 5. Best 8/11 = 0.73 (cut between documents 6 and 5).
    assert best_accuracy(TABLE3_P, TABLE3_H1) == pytest.approx(7 / 11)
    assert best_accuracy(TABLE3_P, TABLE3_H2) == pytest.approx(8 / 11)
    assert round(best_accuracy(TABLE3_P, TABLE3_H1), 2) == 0.64
    assert round(best_accuracy(TABLE3_P, TABLE3_H2), 2) == 0.73


def test_best_accuracy_cuts_only_between_distinct_scores():
    # Scores 1, 1, 0 with labels 1, 0, 0: the tie forbids calling only the first document
    # relevant. Cuts: none relevant (2 right), top two (2 right), all (1 right): 2/3.
    assert best_accuracy([1, 0, 0], [1.0, 1.0, 0.0]) == pytest.approx(2 / 3)
    # Two queries are averaged: the second, 1 0 with scores 2, 1, is perfect.
    assert best_accuracy([1, 0, 0, 1, 0], [1.0, 1.0, 0.0, 2.0, 1.0], qid=[1, 1, 1, 2, 2]) == pytest.approx(
        (2 / 3 + 1) / 2
    )
