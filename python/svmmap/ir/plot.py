"""Plots of a fitted model: convergence, weights per feature, piecewise-constant scores.

Requires matplotlib: ``pip install "svmmap[plot]"``. Every function draws on the given
matplotlib Axes (or on a new figure) and returns what it drew on, so plots compose with the
rest of matplotlib (``fig.savefig("convergence.png")``).

- `plot_convergence`: the duality gap per cutting-plane iteration, against the tolerance
  it must fall below (``tolerance_``: eps * C * slack groups); the gap decides when training stops.
- `plot_weights`: the learned weight of every feature as a bar, as in Meng et al. (2009),
  Figure 3 (the weight of each of 18 indexing methods learned by SVM-map).
- `plot_piecewise_scores`: for a model on binned features (``Pipeline(Binner, SVMMap)``),
  the learned score of each base feature as a step function of its value, as in Yue et al.
  (2007), Figure 2, and of each pair of a ``Binner(interactions=...)`` as a heat map.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

__all__ = ["plot_convergence", "plot_metric", "plot_weights", "plot_piecewise_scores"]


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError('svmmap.ir.plot needs matplotlib: pip install "svmmap[plot]"') from exc
    return plt


def _ranker(model: Any) -> Any:
    """The SVMMap of a model or of a Pipeline ending with one."""
    steps = getattr(model, "steps", None)
    return steps[-1][1] if steps is not None else model


def plot_convergence(model: Any, ax: Any = None, *, objectives: bool = False) -> Any:
    """The duality gap per iteration (log scale) and the fit's ``tolerance_``, below which it stops.

    Parameters
    ----------
    model : fitted SVMMap, Pipeline ending with one, or a list of history records
        Its ``history_`` (one dict per iteration, as given to ``callback``) is plotted. With a
        list of records (or a model without ``tolerance_``) the tolerance line is left out.
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.
    objectives : bool, default=False
        Also draw the primal objective (an upper bound of the optimum) and the working-set
        dual (a lower bound), whose difference is the gap, on a second y axis.

    Returns
    -------
    ax : matplotlib Axes

    Notes
    -----
    A gap that rounding makes zero or negative at the last iteration is drawn at the bottom
    of the axis (a tenth of the smallest positive gap), since a log scale has no place for it.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from svmmap import SVMMap
    >>> from svmmap.datasets import load_mq2008
    >>> from svmmap.ir.plot import plot_convergence
    >>> X, y, qid = load_mq2008(fold=1, split="vali")
    >>> ax = plot_convergence(SVMMap(C=10.0).fit(X, y, qid=qid))
    >>> ax.get_yscale()
    'log'
    """
    plt = _pyplot()
    history = model if isinstance(model, (list, tuple)) else _ranker(model).history_
    if not history:
        raise ValueError("the model has no training history (was it loaded from a file without one?)")
    svm = None if isinstance(model, (list, tuple)) else _ranker(model)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    it = np.array([r["iteration"] for r in history])
    gap = np.array([r["gap"] for r in history], dtype=float)
    positive = gap[gap > 0]
    floor = positive.min() / 10 if positive.size else 1e-12
    ax.semilogy(it, np.maximum(gap, floor), marker="o", markersize=3, label="duality gap")
    target = getattr(svm, "tolerance_", None)
    if target is not None:
        ax.axhline(target, color="tab:red", linestyle="--", label=f"tolerance {target:.3g}")
    ax.set_xlabel("cutting-plane iteration")
    ax.set_ylabel("primal - dual")
    ax.set_title("Convergence")
    ax.grid(True, which="both", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if objectives:
        twin = ax.twinx()
        twin.plot(it, [r["primal"] for r in history], color="tab:green", alpha=0.7, label="primal")
        twin.plot(it, [r["dual"] for r in history], color="tab:purple", alpha=0.7, label="dual")
        twin.set_ylabel("objective")
        more_h, more_l = twin.get_legend_handles_labels()
        handles, labels = handles + more_h, labels + more_l
    ax.legend(handles, labels, loc="upper right")
    return ax


def plot_metric(model: Any, metric: Optional[str] = None, ax: Any = None) -> Any:
    """The validation metrics per iteration, as LightGBM's ``plot_metric``: one line per
    validation set of ``evals_result_`` (``fit(..., eval_set=...)``), with the iteration of
    ``best_iteration_`` marked when early stopping kept an earlier iterate.

    Parameters
    ----------
    model : fitted SVMMap (or Pipeline ending with one), or an ``evals_result_`` dict
        Its ``evals_result_``: {set name: {metric: [value per iteration]}}.
    metric : str, optional
        Which metric to plot; the first one recorded by default.
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from svmmap import SVMMap
    >>> from svmmap.datasets import load_mq2008
    >>> from svmmap.ir.plot import plot_metric
    >>> X, y, qid = load_mq2008(fold=1, split="train")
    >>> Xv, yv, qv = load_mq2008(fold=1, split="vali")
    >>> model = SVMMap(C=10.0).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], eval_at=[10])
    >>> ax = plot_metric(model, "ndcg@10")
    >>> ax.get_ylabel()
    'ndcg@10'
    """
    plt = _pyplot()
    results = model if isinstance(model, dict) else getattr(_ranker(model), "evals_result_", None)
    if not results:
        raise ValueError("no validation metrics to plot: fit with eval_set=[(X_val, y_val)] and eval_qid/eval_group")
    first = next(iter(results.values()))
    name = metric if metric is not None else next(iter(first))
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for set_name, values in results.items():
        if name not in values:
            raise ValueError(f"metric {name!r} was not recorded; recorded: {', '.join(values)}")
        curve = values[name]
        ax.plot(np.arange(1, len(curve) + 1), curve, marker="o", markersize=3, label=set_name)
    best = None if isinstance(model, dict) else getattr(_ranker(model), "best_iteration_", None)
    if best is not None:
        ax.axvline(best, color="tab:red", linestyle="--", label=f"best iteration {best}")
    ax.set_xlabel("cutting-plane iteration")
    ax.set_ylabel(name)
    ax.set_title("Validation")
    ax.grid(True, alpha=0.3)
    ax.legend()
    return ax


def plot_weights(
    model: Any,
    ax: Any = None,
    *,
    feature_names: Optional[Sequence[str]] = None,
    sort: bool = False,
    top: Optional[int] = None,
) -> Any:
    """The learned weight of every feature as a bar (Meng et al. 2009, Figure 3).

    Parameters
    ----------
    model : fitted SVMMap or Pipeline ending with one
        Its ``coef_`` is drawn. For a Pipeline(Binner, SVMMap) these are the weights of the
        indicator features (``plot_piecewise_scores`` shows what they add up to).
    ax : matplotlib Axes, optional
    feature_names : list of str, optional
        Bar labels; by default ``feature_names_in_`` (a DataFrame's columns), the Binner's
        output names, or ``f1 ... fd`` (1-based, as in LETOR files).
    sort : bool, default=False
        Order the bars by weight, largest first, instead of by feature.
    top : int, optional
        Draw only the ``top`` features of largest absolute weight.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from svmmap import SVMMap
    >>> from svmmap.datasets import load_mq2008
    >>> from svmmap.ir.plot import plot_weights
    >>> X, y, qid = load_mq2008(fold=1, split="vali")
    >>> model = SVMMap(C=10.0).fit(X, y, qid=qid)
    >>> ax = plot_weights(model, sort=True, top=10)
    >>> len(ax.patches), bool(ax.patches[0].get_height() == model.coef_.max())
    (10, True)
    """
    plt = _pyplot()
    svm = _ranker(model)
    coef = np.asarray(svm.coef_, dtype=float)
    if feature_names is None:
        names = getattr(svm, "feature_names_in_", None)
        if names is None and hasattr(model, "steps") and hasattr(model.steps[0][1], "get_feature_names_out"):
            names = model.steps[0][1].get_feature_names_out()
        if names is None:
            names = [f"f{j + 1}" for j in range(coef.shape[0])]
        feature_names = [str(n) for n in names]
    if len(feature_names) != coef.shape[0]:
        raise ValueError(f"{len(feature_names)} feature names for {coef.shape[0]} weights")
    order = np.arange(coef.shape[0])
    if top is not None:
        order = np.sort(np.argsort(-np.abs(coef), kind="stable")[: int(top)])
    if sort:
        order = order[np.argsort(-coef[order], kind="stable")]
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, 0.25 * len(order) + 2), 4))
    values = coef[order]
    colors = np.where(values >= 0, "tab:blue", "tab:orange")
    ax.bar(np.arange(len(order)), values, color=colors)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xticks(np.arange(len(order)))
    ax.set_xticklabels([feature_names[int(j)] for j in order], rotation=90, fontsize=8)
    ax.set_ylabel("weight")
    ax.set_title("Learned weights")
    ax.margins(x=0.01)
    ax.figure.tight_layout()
    return ax


def plot_piecewise_scores(
    model: Any,
    coef: Any = None,
    *,
    features: Optional[Sequence[Any]] = None,
    axes: Any = None,
    ncols: int = 3,
) -> Any:
    """Each base feature's learned score as a step function of its value (Yue et al. 2007, Fig. 2).

    A linear model on binned features (indicators ``1[f > k]`` from ``svmmap.Binner``) scores a
    document by the sum, over base features f, of a piecewise-constant function of f's value:
    0 up to the first threshold, then rising or falling by each threshold's weight. This draws
    those functions, one panel per base feature, with the score of a missing value (the
    Binner's missing indicator, if any) as a dashed line, and then, for a Binner with
    ``interactions``, every pair's step surface as a heat map over the cells of its coarse
    thresholds (the first feature down, the second across; a pair is named ``"a&b"``).

    Parameters
    ----------
    model : fitted Pipeline(Binner, SVMMap), or a fitted Binner with ``coef``, or the list of
        step functions returned by ``svmmap.piecewise_scores``. A StandardScaler,
        MinMaxScaler or MaxAbsScaler before the Binner is folded in (the functions are drawn
        over the pipeline's raw input); other steps before it are refused, as by
        ``piecewise_scores``.
    coef : array-like, optional
        The indicator weights when ``model`` is a Binner.
    features : list of int or str, optional
        The base features to draw (indices or names); all by default.
    axes : array of matplotlib Axes, optional
        One per drawn feature; a new figure with ``ncols`` columns by default.
    ncols : int, default=3

    Returns
    -------
    axes : ndarray of matplotlib Axes, one per drawn feature

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.pipeline import Pipeline
    >>> from svmmap import Binner, SVMMap
    >>> from svmmap.datasets import load_mq2008
    >>> from svmmap.ir.plot import plot_piecewise_scores
    >>> X, y, qid = load_mq2008(fold=1, split="vali")
    >>> pipe = Pipeline([("bin", Binner(n_thresholds=20)), ("svm", SVMMap(C=1.0))])
    >>> pipe = pipe.fit(X[:, [20, 30]], y, svm__qid=qid)  # BM25.body and LMIR.DIR.body
    >>> axes = plot_piecewise_scores(pipe)
    >>> [ax.get_title() for ax in axes]
    ['x0', 'x1']
    """
    from ..binning import StepSurface

    plt = _pyplot()
    if isinstance(model, (list, tuple)):
        steps = list(model)
    else:
        from ..binning import piecewise_scores

        steps = piecewise_scores(model, coef)
    if features is not None:
        by_name = {s.feature: s for s in steps}
        chosen = []
        for f in features:
            if isinstance(f, str):
                if f not in by_name:
                    raise ValueError(f"no base feature named {f!r}; the features are {list(by_name)}")
                chosen.append(by_name[f])
            else:
                chosen.append(steps[int(f)])
        steps = chosen
    if not steps:
        raise ValueError("no base feature to draw")
    if axes is None:
        own_figure = True
        ncols = max(1, min(int(ncols), len(steps)))
        nrows = -(-len(steps) // ncols)
        fig, grid = plt.subplots(nrows, ncols, figsize=(4 * ncols, 3 * nrows), squeeze=False)
        for extra in grid.ravel()[len(steps) :]:
            extra.set_visible(False)
        axes = grid.ravel()[: len(steps)]
        fig.suptitle("Learned score per base feature")
    else:
        own_figure = False
    axes = np.asarray(axes, dtype=object).ravel()
    if len(axes) != len(steps):
        raise ValueError(f"{len(axes)} axes for {len(steps)} features")
    for ax, step in zip(axes, steps):
        if isinstance(step, StepSurface):
            _draw_surface(ax, step)
            continue
        k = np.asarray(step.thresholds, dtype=float)
        values = np.asarray(step.values, dtype=float)
        if k.size:
            span = k[-1] - k[0]
            pad = 0.1 * span if span > 0 else max(1.0, abs(k[0])) * 0.1
            x = np.concatenate([[k[0] - pad], k, [k[-1] + pad]])
            # Value i holds for k_i < v <= k_{i+1}; drawn as steps that change at each threshold.
            y = np.concatenate([values, [values[-1]]])
            ax.step(x, y, where="post", color="tab:blue")
            ax.plot(k, values[1:], "o", markersize=2, color="tab:blue")
        else:
            ax.axhline(0.0, color="tab:blue")
        if getattr(step, "missing", None) is not None:
            ax.axhline(step.missing, color="tab:gray", linestyle="--", label=f"missing: {step.missing:.3g}")
            ax.legend(loc="best", fontsize=7)
        ax.set_title(str(step.feature), fontsize=9)
        ax.set_xlabel("feature value")
        ax.set_ylabel("score")
        ax.grid(True, alpha=0.3)
    if own_figure:
        axes[0].figure.tight_layout()
    return axes


def _draw_surface(ax: Any, surface: Any) -> None:
    """A pair's step surface as a heat map, one cell per pair of coarse bins, the bins labelled
    by the threshold they are above ("<= s1" for the first)."""
    values = np.asarray(surface.values, dtype=float)
    image = ax.imshow(values, cmap="RdBu_r", origin="lower", aspect="auto")
    ax.figure.colorbar(image, ax=ax, label="score")
    for axis, thresholds, set_ticks, set_labels in (
        (0, surface.thresholds[0], ax.set_yticks, ax.set_yticklabels),
        (1, surface.thresholds[1], ax.set_xticks, ax.set_xticklabels),
    ):
        k = list(thresholds)
        labels = ([f"<={k[0]:.3g}"] if k else ["all"]) + [f">{t:.3g}" for t in k]
        set_ticks(range(values.shape[axis]))
        set_labels(labels, fontsize=6)
    ax.set_ylabel(str(surface.features[0]))
    ax.set_xlabel(str(surface.features[1]))
    ax.set_title(str(surface.feature), fontsize=9)
