"""Issue 46, the defects left from the last trial (item 1's ways in are in test_gate_matrix.py).

- A loss or metric name with whitespace at its ends, or whitespace other than a plain space
  inside, is refused naming the argument (it was trained or scored, and the results kept the
  whitespace in their key); the command line's comma-separated lists drop the spaces around
  their commas, so their keys never hold any.
- eval_set without its queries says what to pass, in svmmap's words (eval_qid) and
  LightGBM's (eval_group).
- A sparse matrix whose dense copy would not fit in memory is refused before NumPy allocates it.
- A lone surrogate in a model file's strings or in feature names is refused naming the file
  and field, or the column.
- An overflow in the latent branch of the search, and in the baselines, names C.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from svmmap import SVMMap, SVMMapCV

_RNG = np.random.default_rng(46)
X = _RNG.normal(size=(24, 3))
Y = np.tile([1.0, 0.0, 0.0, 1.0, 0.0, 0.0], 4)
Q = np.repeat(np.arange(4), 6)


def _quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


# ----------------------------------------------------------------------------------------------
# Whitespace in loss and metric names.

SPELLINGS = [" map", "map ", "map\t", "\nmap", "ndcg@\t10", "map\u00a0"]


def _entries():
    from svmmap.metrics import evaluate, make_ranking_scorer, per_query

    return {
        "loss": lambda name: SVMMap(loss=name).fit(X, Y, qid=Q),
        "loss list": lambda name: SVMMap(loss=["roc", name]).fit(X, Y, qid=Q),
        "loss dict": lambda name: SVMMap(loss={name: 1.0}).fit(X, Y, qid=Q),
        "losses": lambda name: SVMMapCV(Cs=[1.0], cv=2, loss="auto", losses=["roc", name]).fit(X, Y, qid=Q),
        "scoring": lambda name: SVMMapCV(Cs=[1.0], cv=2, scoring=name).fit(X, Y, qid=Q),
        "eval_metric": lambda name: SVMMap().fit(X, Y, qid=Q, eval_set=[(X, Y)], eval_qid=[Q], eval_metric=name),
        "metrics": lambda name: evaluate(Y, X[:, 0], Q, ["mrr", name]),
        "metric": lambda name: per_query(name, Y, X[:, 0], Q),
        "make_ranking_scorer": lambda name: make_ranking_scorer(name),
    }


#: The argument each entry's refusal must name ("losses[1]": the second entry of losses).
NAMED = {
    "loss": "loss",
    "loss list": "loss",
    "loss dict": "loss",
    "losses": r"losses\[1\]",
    "scoring": "scoring",
    "eval_metric": "eval_metric",
    "metrics": "metrics",
    "metric": "metric",
    "make_ranking_scorer": "metric",
}


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("entry", list(NAMED))
def test_a_name_with_odd_whitespace_is_refused_naming_the_argument(entry, spelling):
    with pytest.raises(ValueError, match=rf"^{NAMED[entry]} names {re.escape(repr(spelling))}, which holds") as info:
        _quiet(lambda: _entries()[entry](spelling))
    # The refusal shows the name as it would be without the whitespace.
    assert repr(" ".join(spelling.split())) in str(info.value)


def test_plain_spaces_inside_a_combination_stay_legal():
    # "max(map, ndcg@3)" is the shared-slack combination; its space follows a comma.
    model = _quiet(lambda: SVMMap(loss="max(map, ndcg@3)").fit(X, Y, qid=Q))
    assert model.coef_.shape == (3,)


def test_a_metric_key_never_holds_whitespace_on_the_command_line(tmp_path):
    """The command line's --metrics is a comma-separated list: the spaces around its commas
    are the list's, so "map, ndcg@10" names map and ndcg@10, printed without spaces."""
    from svmmap.cli import main

    data = tmp_path / "test.txt"
    data.write_text("1 qid:1 1:0.5\n0 qid:1 1:0.25\n0 qid:2 1:0.5\n1 qid:2 1:0.75\n")
    scores = tmp_path / "scores.txt"
    scores.write_text("0.5\n0.25\n0.5\n0.75\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["evaluate", "--metrics", " map , ndcg@10", str(data), str(scores)]) == 0
    keys = [line.split()[0] for line in out.getvalue().splitlines() if line.strip()]
    assert "map" in keys and "ndcg@10" in keys, out.getvalue()


# ----------------------------------------------------------------------------------------------
# eval_set without its queries.


@pytest.mark.parametrize("n_sets", [1, 2])
def test_eval_set_without_queries_says_what_to_pass_in_both_spellings(n_sets):
    with pytest.raises(ValueError) as info:
        _quiet(lambda: SVMMap().fit(X, Y, qid=Q, eval_set=[(X, Y)] * n_sets))
    text = str(info.value)
    ids = "qid_val" if n_sets == 1 else "qid_val0, qid_val1"
    sizes = "sizes_val" if n_sets == 1 else "sizes_val0, sizes_val1"
    assert f"eval_qid=[{ids}]" in text and f"eval_group=[{sizes}]" in text, text
    assert "LightGBM" in text and "query id of every row" in text and "number of rows of each query" in text


def test_the_validation_set_without_queries_says_the_same():
    with pytest.raises(ValueError, match=r"eval_qid=\[qid_val\].*eval_group=\[sizes_val\]"):
        _quiet(lambda: SVMMapCV(Cs=[1.0], cv="validation").fit(X, Y, qid=Q, eval_set=[(X, Y)]))


def test_the_validation_set_with_queries_given_twice_says_so():
    with pytest.raises(ValueError, match=r"given twice: give eval_qid or eval_group, not both"):
        _quiet(
            lambda: SVMMapCV(Cs=[1.0], cv="validation").fit(
                X, Y, qid=Q, eval_set=[(X, Y)], eval_qid=[Q], eval_group=[np.full(4, 6)]
            )
        )


# ----------------------------------------------------------------------------------------------
# A dense copy of a sparse matrix beyond the memory.

# 2**20 rows of 2**15 features: 2**35 float64 values, 256 GiB dense (274.9 GB), beyond this
# machine's memory, while the sparse matrix holds two values.
N_ROWS, N_COLS = 2**20, 2**15


@pytest.fixture
def never_densified(monkeypatch):
    """A sparse matrix whose toarray fails the test: the size must be refused before NumPy is
    asked (NumPy's zeroed pages are claimed only when written, so an allocation beyond the
    memory can succeed and the process be killed later)."""

    def toarray(self, *args, **kwargs):
        raise AssertionError("toarray was called: the dense copy was allocated before its size was checked")

    for kind in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        monkeypatch.setattr(kind, "toarray", toarray)
    return sp.csr_matrix((np.ones(2), ([0, N_ROWS - 1], [0, N_COLS - 1])), shape=(N_ROWS, N_COLS))


def _huge_refusal(name: str) -> str:
    return rf"^{name} as a dense array of {N_ROWS} x {N_COLS} float64 values needs (about )?2\d\d\.\d GB, but only"


def test_binner_refuses_a_dense_copy_beyond_the_memory_before_allocating(never_densified):
    from svmmap import Binner

    with pytest.raises(MemoryError, match=_huge_refusal("X")):
        Binner().fit(never_densified)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_the_per_query_scalers_refuse_it_before_allocating(never_densified, fmt):
    from svmmap.baselines import QueryMinMaxScaler, QueryPercentileTransformer

    qid = np.zeros(N_ROWS, dtype=np.int64)
    for scaler in (QueryMinMaxScaler(), QueryPercentileTransformer()):
        with pytest.raises(MemoryError, match=_huge_refusal("X")):
            scaler.fit(never_densified.asformat(fmt), qid=qid)


def test_adarank_refuses_it_before_allocating(never_densified):
    from svmmap.baselines import AdaRank

    y = np.zeros(N_ROWS)
    y[0] = 1.0
    with pytest.raises(MemoryError, match=_huge_refusal("X")):
        AdaRank().fit(never_densified, y, np.zeros(N_ROWS, dtype=np.int64))


# ----------------------------------------------------------------------------------------------
# Lone surrogates.


def _model_file(tmp_path, replace):
    import pandas as pd
    from svmmap import save_model

    model = _quiet(lambda: SVMMap().fit(pd.DataFrame(X, columns=["a", "b", "c"]), Y, qid=Q))
    path = tmp_path / "model.json"
    save_model(model, path)
    text = path.read_text()
    old, new = replace
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize(
    "replace, field",
    [
        (('"b"', '"\\ud800"'), "feature_names"),  # a leading half, then the closing quote
        (('"b"', '"x\\udc00"'), "feature_names"),  # a trailing half alone
        (('"map"', '"m\\ud800\\u0041p"'), "loss"),  # a leading half, then no trailing one
    ],
)
def test_a_lone_surrogate_in_a_model_file_is_refused_naming_file_line_and_field(tmp_path, replace, field):
    from svmmap import ModelFormatError, load_model

    path = _model_file(tmp_path, replace)
    line = 1 + next(i for i, text in enumerate(path.read_text().splitlines()) if replace[1] in text)
    with pytest.raises(ModelFormatError) as info:
        load_model(path)
    text = str(info.value)
    assert text.startswith(f"{path}:{line}: "), text
    assert f'field "{field}"' in text and "surrogate" in text, text
    assert "hex escape" not in text, text


def test_a_lone_surrogate_in_a_column_name_is_refused_naming_the_column():
    import pandas as pd

    with pytest.raises(ValueError, match=r"^X's column 1 name 'b\\ud800' holds a lone surrogate at character 1"):
        # An object Index: pandas' Arrow strings cannot hold the surrogate at all.
        SVMMap().fit(pd.DataFrame(X, columns=pd.Index(["a", "b\ud800", "c"], dtype=object)), Y, qid=Q)


def test_a_lone_surrogate_in_exported_feature_names_is_refused_naming_it():
    from svmmap.ir.export import to_solr

    model = _quiet(lambda: SVMMap().fit(X, Y, qid=Q))
    with pytest.raises(ValueError, match=r"^feature_names\[2\] 'c\\udfff' holds a lone surrogate"):
        to_solr(model, feature_names=["a", "b", "c\udfff"])


# ----------------------------------------------------------------------------------------------
# Overflow blamed on what the caller can change.


def test_an_overflow_in_the_latent_branch_of_the_search_names_c():
    # Unit features and C = 1e200: 1/2 ||w||^2 of about C^2 overflows float64 (1.8e308).
    with pytest.raises(ValueError, match=r"C = 1e\+200 is too large for float64 arithmetic.*lower C") as info:
        _quiet(lambda: SVMMapCV(Cs=[1e200], cv=2, loss="ndcg@3:latent").fit(X, Y, qid=Q))
    assert "scale the features" not in str(info.value)


@pytest.mark.parametrize("name", ["SVMAcc", "SVMAcc2", "DORM"])
def test_an_overflow_in_a_baseline_names_c(name):
    from svmmap import baselines

    with pytest.raises(ValueError, match=r"C = 1e\+200 is too large for float64 arithmetic.*lower C") as info:
        _quiet(lambda: getattr(baselines, name)(C=1e200).fit(X, Y, Q))
    assert "scale the features" not in str(info.value)
