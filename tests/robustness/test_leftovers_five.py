"""Small defects left from the fifth round of trials, each with the test that found it.

- plot_piecewise_scores drew a GA2M pair only by the model's order of its names: "b&a" for the
  model's "a&b" was "no base feature".
- A validation X given as a ragged list was refused with NumPy's message, naming no argument
  (X itself too, and the Binner's X).
"""


import numpy as np
import pytest
import svmmap

# A small ranking set whose two queries each have a relevant and a non-relevant document.
X = np.array([[0.5, 1.0], [0.1, 0.0], [0.3, 0.2], [0.9, 0.4], [0.2, 0.7], [0.6, 0.1]])
y = np.array([1.0, 0.0, 0.0, 1.0, 0.0, 1.0])
qid = np.array([1, 1, 1, 2, 2, 2])
RAGGED = [[0.5, 1.0], [0.1]]


# 1. A pair named in the other order.


def _surface():
    from svmmap.binning import StepSurface

    # a has one coarse threshold (two cells up), b two (three cells across); written by hand.
    values = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, -2.0]])
    return StepSurface(("a", "b"), (0, 1), (np.array([0.5]), np.array([1.5, 2.5])), values)


@pytest.mark.parametrize("name", ["b&a", ("b", "a")])
def test_a_pair_named_in_reverse_is_drawn_transposed(name):
    pytest.importorskip("matplotlib").use("Agg")
    import matplotlib.pyplot as plt
    from svmmap.ir.plot import plot_piecewise_scores

    try:
        (ax,) = plot_piecewise_scores([_surface()], features=[name])
        (image,) = ax.get_images()
        # b now increases up the vertical axis and a across: the cells are the transpose.
        np.testing.assert_array_equal(image.get_array(), [[0.0, 0.0], [0.0, 1.0], [0.0, -2.0]])
        assert (ax.get_ylabel(), ax.get_xlabel(), ax.get_title()) == ("b", "a", "Interaction of b and a")
        (ax,) = plot_piecewise_scores([_surface()], features=[("a", "b")])
        np.testing.assert_array_equal(ax.get_images()[0].get_array(), _surface().values)
        with pytest.raises(ValueError, match=r"^no base feature or pair named 'a&c'; the features are \['a&b'\]$"):
            plot_piecewise_scores([_surface()], features=["a&c"])
    finally:
        plt.close("all")


# 2. A validation X that NumPy cannot read as a matrix.


def _fit_with_eval(entry, eval_X):
    ey, eq = y[:2], qid[:2]
    if entry == "SVMMap eval_set":
        svmmap.SVMMap().fit(X, y, qid=qid, eval_set=[(eval_X, ey)], eval_qid=[eq])
    elif entry == "SVMMap eval_X":
        svmmap.SVMMap().fit(X, y, qid=qid, eval_X=eval_X, eval_y=ey, eval_qid=[eq])
    elif entry == "SVMMapCV eval_set":
        svmmap.SVMMapCV(Cs=[1.0], cv="validation").fit(X, y, qid=qid, eval_set=[(eval_X, ey)], eval_qid=[eq])
    elif entry == "SVMMap X":
        svmmap.SVMMap().fit(eval_X, ey, qid=eq)
    elif entry == "Binner fit X":
        svmmap.Binner().fit(eval_X)
    else:
        svmmap.Binner().fit(X).transform(eval_X)


@pytest.mark.parametrize(
    "entry, argument",
    [
        ("SVMMap eval_set", "eval_set[0] X"),
        ("SVMMap eval_X", "eval_X"),
        ("SVMMapCV eval_set", "eval_set[0] X"),
        ("SVMMap X", "X"),
        ("Binner fit X", "X"),
        ("Binner transform X", "X"),
    ],
)
def test_a_ragged_list_is_refused_naming_the_argument_at_every_entry_point(entry, argument):
    message = f"^{argument} must be a 2-D array, got rows of different lengths: "
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _fit_with_eval(entry, RAGGED)


@pytest.mark.parametrize("form", [list, tuple])
def test_a_validation_x_as_rows_in_a_list_or_tuple_scores_as_the_array(form):
    # The validation AP of the same rows is the same whether they come as an array or as Python
    # rows: each is converted once, by the rule of X.
    rows = form(form(row) for row in X[:3])
    results = []
    for ex in (X[:3], rows):
        m = svmmap.SVMMap(C=1.0).fit(X, y, qid=qid, eval_set=[(ex, y[:3])], eval_qid=[qid[:3]], eval_metric="map")
        results.append(m.evals_result_)
    assert results[0] == results[1]
