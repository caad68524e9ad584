"""Issue 46 item 5, its leftovers: no parameter silently ignored or repeated, no overflow
blamed on the wrong argument, no export that writes what its engine cannot read.

- ``to_onnx(dtype="float32")`` of a weight beyond float32's range wrote infinity into the graph
  (every score inf or NaN): refused, naming the constant; float64 writes it exactly.
- ``SVMMapCV(losses=["map", "map"])`` fitted every candidate twice: refused, in every spelling
  of one model (a preprocessing listed twice already was).
- ``C=1e200`` and ``sample_weight=1e306`` overflowed training and the message blamed the
  features: it names C, or sample_weight.
- ``patience`` and ``prune_margin`` were silently ignored by the C search alone: a value other
  than the default and None is refused there.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from svmmap import SVMMap, SVMMapCV

# Four queries of six documents, two relevant in each; features of magnitude about 1.
_RNG = np.random.default_rng(5)
X = _RNG.normal(size=(24, 3))
Y = np.tile([1.0, 0.0, 0.0, 1.0, 0.0, 0.0], 4)
Q = np.repeat(np.arange(4), 6)


def _fitted(coef):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SVMMap(C=10.0).fit(X, Y, qid=Q)
    model.coef_ = np.asarray(coef, dtype=np.float64)
    return model


@pytest.mark.parametrize("weight", [1e39, -1e39, 3.5e38])
def test_onnx_float32_refuses_weights_beyond_float32(weight):
    # float32's largest value is (2 - 2**-23) * 2**127 = 3.4028e38: each weight here is above
    # it in magnitude, so float32 would hold it as infinity.
    pytest.importorskip("onnx")
    from svmmap.ir.export import to_onnx

    with pytest.raises(ValueError, match=r"dtype='float32'\): weights\[1\] is .*beyond the float32 range"):
        to_onnx(_fitted([0.5, weight, -1.0]), dtype="float32")


def test_onnx_float64_writes_weights_beyond_float32_exactly_and_float32_takes_the_largest():
    onnxruntime = pytest.importorskip("onnxruntime")
    from svmmap.ir.export import to_onnx

    # Features of 1e-30 times weights of 1e39 score about 1e9: finite in float64.
    model = _fitted([1e39, 0.0, 0.0])
    rows = np.array([[1e-30, 0.0, 0.0], [2e-30, 1.0, 0.0]])
    session = onnxruntime.InferenceSession(to_onnx(model).SerializeToString(), providers=["CPUExecutionProvider"])
    (scores,) = session.run(None, {"X": rows})
    # 1e39 * 1e-30 = 1e9 and 1e39 * 2e-30 = 2e9, by hand.
    np.testing.assert_allclose(scores, [1e9, 2e9], rtol=1e-12)
    # The largest float32 itself is written as it is (no refusal at the boundary).
    largest = float(np.finfo(np.float32).max)
    to_onnx(_fitted([largest, 0.0, 0.0]), dtype="float32")


@pytest.mark.parametrize(
    "losses",
    [
        ["map", "map"],
        ["map", "1*map"],
        ["map", {"map": 1}],
        [["map", "ndcg@10"], ["ndcg@10", "map"]],
        ["roc", "map", "roc"],
    ],
)
def test_a_loss_listed_twice_in_the_search_is_refused_before_any_fit(losses, monkeypatch):
    import svmmap.model_selection as ms

    def no_run(*args, **kwargs):
        raise AssertionError("the search ran")

    monkeypatch.setattr(ms, "run", no_run)
    with pytest.raises(ValueError, match=r"losses lists one loss twice: .* train the same model"):
        SVMMapCV(Cs=[1.0], cv=2, loss="auto", losses=losses).fit(X, Y, qid=Q)


def test_different_losses_are_still_searched():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = SVMMapCV(Cs=[1.0], cv=2, loss="auto", losses=["map", "roc", ["map", "roc"]]).fit(X, Y, qid=Q)
    # Three losses, one preprocessing, one C: three rows.
    assert len(search.cv_results_["params"]) == 3


@pytest.mark.parametrize("C", [1e200, 1e300])
def test_an_overflow_from_c_names_c_not_the_features(C):
    # Unit features: w grows with C (w = sum a_j g_j with sum a_j <= C), and 1/2 ||w||^2 of
    # about C^2 overflows float64 (1.8e308) for C above about 1e154.
    for fit in (
        lambda: SVMMap(C=C).fit(X, Y, qid=Q),
        lambda: SVMMapCV(Cs=[C], cv=2).fit(X, Y, qid=Q),
    ):
        with pytest.raises(ValueError, match=r"C = 1e\+[23]00 is too large for float64 arithmetic.*lower C") as info:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit()
        assert "scale the features" not in str(info.value)


def test_an_overflow_from_sample_weight_names_it_and_one_from_features_names_x():
    # A weight of 1e306 on every query makes every cut 1e306 times a feature difference of
    # about 1, whose square overflows; features of 1e160 overflow the same square by themselves.
    with pytest.raises(ValueError, match=r"sample_weight holds a weight of 1e\+306"):
        SVMMap().fit(X, Y, qid=Q, sample_weight=np.full(24, 1e306))
    with pytest.raises(ValueError, match=r"the feature values of X are too large.*scale the features"):
        SVMMap().fit(X * 1e160, Y, qid=Q)


@pytest.mark.parametrize(
    "name, value", [("patience", 3), ("patience", 0), ("prune_margin", 0.5), ("max_train_queries", 5)]
)
def test_search_only_parameters_are_refused_by_the_c_search_alone(name, value):
    with pytest.raises(ValueError, match=rf"{name}={value!r} applies to the search over losses and preprocessings"):
        SVMMapCV(Cs=[1.0], cv=2, **{name: value}).fit(X, Y, qid=Q)


@pytest.mark.parametrize(
    "name, value",
    [
        ("patience", None),
        ("prune_margin", None),
        ("max_train_queries", None),
        ("patience", 1),
        ("prune_margin", 0.02),
        ("max_train_queries", 500),
    ],
)
def test_the_c_search_alone_accepts_the_defaults_and_none(name, value):
    # None is what the C search alone does (every C on every split), and the defaults are the
    # search's, documented as applying to it only.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = SVMMapCV(Cs=[0.1, 1.0], cv=2, **{name: value}).fit(X, Y, qid=Q)
    assert list(search.cv_results_["status"]) == ["fitted", "fitted"]


def test_search_only_parameters_apply_in_the_search():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        SVMMapCV(Cs=[1.0], cv=2, loss="auto", losses=["map"], patience=3, prune_margin=0.5).fit(X, Y, qid=Q)
