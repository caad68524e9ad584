"""SVMMapCV(verbose=1)'s progress lines, in the order things happen (search5's trial)."""

import re
import warnings

import numpy as np
from svmmap import SkippedQueriesWarning, SVMMapCV
from svmmap.datasets import make_ranking

LINE = re.compile(r"^\[SVMMapCV\] (\d+)/(\d+) fits  (\S+ C=\S+) (.*?)(?::|  best|  \d)")


def test_a_row_is_done_before_its_path_stops(capsys):
    """A row that ends its C path printed "stops: no better for 1 C values" before its own
    "done" line; the row is fitted first, then its path stops."""
    d = make_ranking(n_queries=30, docs_per_query=20, n_features=8, random_state=0)
    SVMMapCV(loss="auto", preprocessing=["none"], cv=3, n_jobs=1, verbose=1).fit(d.X, d.y, qid=d.qid)
    lines = [LINE.match(line) for line in capsys.readouterr().err.splitlines()]
    events = [(m.group(3), m.group(4)) for m in lines if m]
    stops = [i for i, (_, what) in enumerate(events) if what.startswith("stops")]
    assert stops  # patience=1 stops every path of this search along C
    for i in stops:
        label = events[i][0]
        assert (label, "done") in events[:i], events


def test_a_candidate_refused_on_the_data_says_so_with_the_progress_figures(capsys):
    """A candidate the core refuses (ndcg:graded on a query of 450 documents) printed only
    "[SVMMapCV] ndcg:graded/none C=0.01 left out: ...", without the fits done of at most how
    many, the time spent and the time left that every other line gives."""
    short = make_ranking(n_queries=20, docs_per_query=40, n_features=6, size_spread=0.0, random_state=0)
    long = make_ranking(n_queries=1, docs_per_query=450, n_features=6, size_spread=0.0, random_state=1)
    X = np.vstack([short.X, long.X]).astype(np.float64)
    y = np.concatenate([short.y, long.y])
    qid = np.concatenate([short.qid, long.qid + 1000])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedQueriesWarning)
        SVMMapCV(loss="auto", losses=["ndcg:graded", "map"], preprocessing="none", cv=3, scoring="ndcg", verbose=1).fit(
            X, y, qid=qid
        )
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "left out" in line]
    assert re.match(r"\[SVMMapCV\] \d+/\d+ fits  ndcg:graded/none C=0.01 left out: ValueError: loss must be", line)
    assert re.search(r"\d+\.\d s, at most about \d+ s left$", line)


def test_scorer_scores_an_estimator_by_the_search_metric():
    """``scorer_``, as scikit-learn's searches have it: the callable that scored the splits,
    here ``scorer_(estimator, X, y, qid)``. By hand, scoring="map" on two queries: query 1
    ranks its relevant document first (AP 1), query 2 second (AP 1/2): MAP 0.75."""

    class Fixed:
        def predict(self, X):
            return np.asarray(X)[:, 0]

    d = make_ranking(n_queries=12, docs_per_query=10, n_features=4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedQueriesWarning)
        search = SVMMapCV([0.1, 1.0], cv=3, scoring="map", n_jobs=1).fit(d.X, d.y, qid=d.qid)
    X = np.array([[0.9], [0.1], [0.8], [0.2]])
    assert search.scorer_(Fixed(), X, [1, 0, 0, 1], [1, 1, 2, 2]) == 0.75
    assert search.scorer_(search.best_estimator_, d.X, d.y, d.qid) == search.score(d.X, d.y, qid=d.qid)
    assert "map" in repr(search.scorer_)


def test_the_race_does_not_stop_a_candidate_on_a_model_that_ranks_nothing():
    """A model that ranks nothing (w = 0 here) scores what its ties' order gives, not what its
    candidate can do: on binary labels ndcg@10:graded at C = 0.01 is w = 0 on the splits,
    scored 0.0093 with ties broken pessimistically, and the race stopped the candidate there
    for good, while at C = 0.1 ... 1000 it scores 0.72 to 0.74 (best of the search 0.7555,
    prune_margin=None). The race now judges a row only on splits where its model ranks."""
    short = make_ranking(n_queries=20, docs_per_query=40, n_features=6, size_spread=0.0, random_state=0)
    long = make_ranking(n_queries=1, docs_per_query=450, n_features=6, size_spread=0.0, random_state=1)
    X = np.vstack([short.X, long.X]).astype(np.float64)
    y = (np.concatenate([short.y, long.y]) > 0).astype(int)
    qid = np.concatenate([short.qid, long.qid + 1000])
    search = SVMMapCV(loss="auto", preprocessing="none", cv=3, n_jobs=1).fit(X, y, qid=qid)
    r = search.cv_results_
    graded = [i for i, p in enumerate(r["params"]) if p["loss"] == "ndcg@10:graded"]
    # C = 0.01 is fitted on every split (w = 0 on some), and C = 0.1 is fitted too, where the
    # model ranks and the race may judge it.
    assert r["status"][graded[0]] == "fitted" and r["n_degenerate_splits"][graded[0]] > 0
    assert not np.isnan(r["split0_test_score"][graded[1]]) and r["n_degenerate_splits"][graded[1]] == 0
