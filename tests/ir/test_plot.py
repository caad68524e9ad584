"""Each plot renders to a PNG and draws what the model holds."""

from collections import namedtuple

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.image  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import svmmap  # noqa: E402
from svmmap import SVMMap  # noqa: E402
from svmmap.datasets import load_mq2008  # noqa: E402
from svmmap.ir.plot import plot_convergence, plot_piecewise_scores, plot_weights  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def model():
    X, y, qid = load_mq2008(fold=1, split="vali")
    return SVMMap(C=10.0).fit(X, y, qid=qid)


def save_png(ax, path):
    ax.figure.savefig(path, dpi=60)
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    # Not a blank canvas: more than one colour was drawn.
    assert len(np.unique(image.reshape(-1, image.shape[2]), axis=0)) > 5
    return image


def test_convergence_plot(model, tmp_path):
    ax = plot_convergence(model, objectives=True)
    gap_line = ax.get_lines()[0]
    np.testing.assert_array_equal(gap_line.get_xdata(), np.arange(1, model.n_iter_ + 1))
    gaps = np.array([r["gap"] for r in model.history_])
    positive = gaps > 0
    np.testing.assert_allclose(gap_line.get_ydata()[positive], gaps[positive])
    target = ax.get_lines()[1]
    assert target.get_ydata()[0] == pytest.approx(10.0 * 1e-3)
    assert ax.get_yscale() == "log"
    save_png(ax, tmp_path / "convergence.png")


def test_convergence_plot_of_a_loaded_model_and_of_records(model, tmp_path):
    path = tmp_path / "model.json"
    model.save(path)
    ax = plot_convergence(svmmap.load_model(path))
    assert len(ax.get_lines()[0].get_xdata()) == model.n_iter_
    ax = plot_convergence(model.history_)
    assert len(ax.get_lines()) == 1  # no target line without C and eps


@pytest.mark.slow
def test_weights_plot(model, tmp_path):
    ax = plot_weights(model)
    heights = np.array([p.get_height() for p in ax.patches])
    np.testing.assert_array_equal(heights, model.coef_)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "f1" and labels[-1] == "f46"
    save_png(ax, tmp_path / "weights.png")
    ax = plot_weights(model, sort=True, top=5)
    heights = np.array([p.get_height() for p in ax.patches])
    biggest = model.coef_[np.argsort(-np.abs(model.coef_))[:5]]
    np.testing.assert_array_equal(heights, np.sort(biggest)[::-1])


def test_piecewise_plot_of_given_step_functions(tmp_path):
    # Yue et al. Figure 2: thresholds a < b < c with weights w_a, w_b > 0 and w_c < 0 give the
    # scores 0, w_a, w_a + w_b, w_a + w_b + w_c on the four intervals.
    Step = namedtuple("Step", "feature thresholds values missing")
    wa, wb, wc = 1.0, 0.5, -0.75
    step = Step("f", np.array([1.0, 2.0, 3.0]), np.array([0.0, wa, wa + wb, wa + wb + wc]), None)
    with_missing = Step("g", np.array([0.5]), np.array([0.0, 2.0]), -1.0)
    axes = plot_piecewise_scores([step, with_missing])
    assert len(axes) == 2
    line = axes[0].get_lines()[0]
    np.testing.assert_array_equal(line.get_xdata()[1:-1], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(line.get_ydata(), [0.0, 1.0, 1.5, 0.75, 0.75])
    # The missing value's score is a horizontal line.
    assert any(np.all(np.asarray(l.get_ydata()) == -1.0) for l in axes[1].get_lines())
    save_png(axes[0], tmp_path / "piecewise.png")
    with pytest.raises(ValueError, match="no base feature or pair named"):
        plot_piecewise_scores([step], features=["nope"])


def test_piecewise_plot_of_a_binned_pipeline(tmp_path):
    if not hasattr(svmmap, "Binner"):
        pytest.skip("svmmap.Binner (issue #4) is not in this build")
    from sklearn.pipeline import Pipeline

    X, y, qid = load_mq2008(fold=1, split="vali")
    X = X[:, [10, 20, 25]]  # TF-IDF.body, BM25.body, LMIR.ABS.body
    pipe = Pipeline([("bin", svmmap.Binner(n_thresholds=10)), ("svm", SVMMap(C=10.0))]).fit(X, y, svm__qid=qid)
    axes = plot_piecewise_scores(pipe, features=[0, 2])
    assert len(axes) == 2
    steps = svmmap.piecewise_scores(pipe)
    np.testing.assert_array_equal(axes[1].get_lines()[0].get_xdata()[1:-1], steps[2].thresholds)
    np.testing.assert_array_equal(axes[1].get_lines()[0].get_ydata()[:-1], steps[2].values)
    save_png(axes[0], tmp_path / "piecewise-mq2008.png")


def test_plot_metric_draws_every_validation_curve_and_the_best_iteration():
    from svmmap.ir.plot import plot_metric

    X, y, qid = load_mq2008(fold=1, split="train")
    Xv, yv, qv = load_mq2008(fold=1, split="vali")
    model = SVMMap(C=1000.0, eps=1e-7).fit(
        X, y, qid=qid, eval_set=[(Xv, yv), (X, y)], eval_qid=[qv, qid], early_stopping_rounds=2
    )
    ax = plot_metric(model)
    curves = [line for line in ax.get_lines() if line.get_linestyle() != "--"]
    assert [list(c.get_ydata()) for c in curves] == [
        model.evals_result_["valid_0"]["map"],
        model.evals_result_["training"]["map"],  # the training data, LightGBM's name
    ]
    (best,) = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert best.get_xdata()[0] == model.best_iteration_
    with pytest.raises(ValueError, match="was not recorded"):
        plot_metric(model, "ndcg@3")
    with pytest.raises(ValueError, match="fit with eval_set"):
        plot_metric(SVMMap().fit(X, y, qid=qid))


def suptitle(fig):
    # Figure.get_suptitle exists from matplotlib 3.8 only; the plot extra allows 3.5.
    return fig._suptitle.get_text() if fig._suptitle is not None else ""


def planted_surface(features=("x2", "x5"), index=(2, 5)):
    """A pair surface shaped like the guide's GA2M on make_ranking's planted pair (2, 5): 32
    coarse thresholds per feature (interaction_bins' default, 33 x 33 cells), 0 on the first
    row and column, rising to 6.8 in the top corner, and a dip to -0.4 in the middle."""
    from svmmap.binning import StepSurface

    s = np.linspace(-1.69033015, 1.77426, 32)  # quantile midpoints: many digits, none round
    t = np.linspace(-1.7512, 1.7187, 32)
    values = 6.8 * np.outer(np.linspace(0.0, 1.0, 33), np.linspace(0.0, 1.0, 33)) ** 2
    values[10:14, 10:14] = -0.4
    return StepSurface(features, index, (s, t), values)


def test_heat_map_of_a_pair_reads(tmp_path):
    # Issue 45 item 3. Before: 33 tick labels per axis (one per cell, overlapping into a
    # smear), the colours' white at (min + max) / 2 = (-0.4 + 6.8) / 2 = 3.4, the axes titled
    # "x2" and "x5", and a pair-only figure titled "Learned score per base feature".
    surface = planted_surface()
    (ax,) = plot_piecewise_scores([surface])
    # At most about ten labels per axis, the first and the last threshold among them.
    for ticks, labels, k in (
        (ax.get_yticks(), ax.get_yticklabels(), surface.thresholds[0]),
        (ax.get_xticks(), ax.get_xticklabels(), surface.thresholds[1]),
    ):
        assert 2 <= len(ticks) <= 10
        # A tick at i + 0.5 is the edge between cells i and i + 1, i.e. threshold i (0-based).
        at = np.asarray(ticks) - 0.5
        np.testing.assert_array_equal(at, np.round(at))
        chosen = at.astype(int)
        assert chosen[0] == 0 and chosen[-1] == len(k) - 1
        # Rounded: thresholds 0.112 apart are written to 2 decimals (one below the gap's 0.1),
        # so within 0.005 of the threshold, with no more than "-1.69"'s 5 characters.
        texts = [label.get_text() for label in labels]
        np.testing.assert_allclose([float(x) for x in texts], k[chosen], atol=0.005 + 1e-12)
        assert max(len(x) for x in texts) <= 5, texts
    # A diverging colormap whose white is 0: a range symmetric about 0, as deep as the largest
    # effect, so that norm(0) is the middle of the colormap.
    (image,) = ax.get_images()
    assert image.norm.vmin == -image.norm.vmax == pytest.approx(-6.8)
    assert image.norm(0.0) == pytest.approx(0.5)
    # Axis titles name the features ("feature j" for an array's unnamed column j), the title
    # the pair, and the figure says it shows pairs.
    assert ax.get_ylabel() == "feature 2" and ax.get_xlabel() == "feature 5"
    assert "feature 2" in ax.get_title() and "feature 5" in ax.get_title()
    assert suptitle(ax.figure) == "Learned score per pair of features"
    save_png(ax, tmp_path / "pair.png")


def test_heat_map_axes_take_the_feature_names():
    (ax,) = plot_piecewise_scores([planted_surface(("BM25.body", "PageRank"), (20, 38))])
    assert ax.get_ylabel() == "BM25.body" and ax.get_xlabel() == "PageRank"
    assert ax.get_title() == "Interaction of BM25.body and PageRank"


def test_heat_map_of_a_feature_without_thresholds():
    from svmmap.binning import StepSurface

    # A constant first feature has no coarse threshold: one row of cells, no tick to label.
    surface = StepSurface(("x0", "x1"), (0, 1), (np.array([]), np.array([0.5, 1.5])), np.zeros((1, 3)))
    (ax,) = plot_piecewise_scores([surface])
    assert len(ax.get_yticks()) == 0 and ax.get_ylabel() == "feature 0 (no threshold)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.5", "1.5"]
    (image,) = ax.get_images()
    assert image.norm.vmin == -image.norm.vmax  # an all-zero surface still has white at 0


def test_heat_maps_of_a_ga2m_pipeline():
    from sklearn.pipeline import make_pipeline
    from svmmap.datasets import make_ranking

    X, y, qid = make_ranking(n_queries=30, docs_per_query=20, n_features=4, interactions=[(1, 3, 1.5)], random_state=0)
    pipe = make_pipeline(svmmap.Binner(interactions=[(1, 3)]), SVMMap(C=10.0)).fit(X, y, svmmap__qid=qid)
    surface = svmmap.piecewise_scores(pipe)[-1]
    axes = plot_piecewise_scores(pipe)
    assert len(axes) == 5 and suptitle(axes[0].figure) == "Learned score per base feature and per pair of features"
    (image,) = axes[-1].get_images()
    np.testing.assert_array_equal(image.get_array(), surface.values)
    assert axes[-1].get_title() == "Interaction of feature 1 and feature 3"
    # The per-feature figure keeps its title, and its panels keep the features' names.
    axes = plot_piecewise_scores(pipe, features=[0, 1])
    assert suptitle(axes[0].figure) == "Learned score per base feature"
    assert [ax.get_title() for ax in axes] == ["x0", "x1"]
