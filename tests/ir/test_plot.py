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
    with pytest.raises(ValueError, match="no base feature named"):
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
