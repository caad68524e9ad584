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

from typing import Any, List, Optional, Sequence

import numpy as np

from .._optional import load

__all__ = ["plot_convergence", "plot_metric", "plot_weights", "plot_piecewise_scores"]


def _pyplot() -> Any:
    return load("matplotlib.pyplot", "svmmap.ir.plot")


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
    # best_iteration_ is 0 when no early stopping kept a round (LightGBM's value).
    best = None if isinstance(model, dict) else getattr(_ranker(model), "best_iteration_", None)
    if best:
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
    thresholds (a pair is named ``"a&b"``: feature a increases up the vertical axis, b across).
    Each heat map's ticks are at most eight of the thresholds, on the edges between cells and
    rounded; its axes are titled with the features' names ("feature j" for a column without
    one) and its colours are centred at 0 (white: the pair adds nothing), red adding to the
    score and blue taking away, on a range symmetric about 0.

    Parameters
    ----------
    model : fitted Pipeline(Binner, SVMMap), or a fitted Binner with ``coef``, or the list of
        step functions returned by ``svmmap.piecewise_scores``. A StandardScaler,
        MinMaxScaler or MaxAbsScaler before the Binner is folded in (the functions are drawn
        over the pipeline's raw input); other steps before it are refused, as by
        ``piecewise_scores``.
    coef : array-like, optional
        The indicator weights when ``model`` is a Binner.
    features : list of int, str or pair of str, optional
        What to draw, in order: base features and pairs, by index or by name (a pair as
        ``"a&b"`` or ``("a", "b")``); all by default. A pair named in the other order than the
        model's (``"b&a"`` for its ``"a&b"``) is drawn transposed, b up the vertical axis.
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
        steps = [_chosen_step(steps, f) for f in features]
    if not steps:
        raise ValueError("no base feature to draw")
    if axes is None:
        own_figure = True
        ncols = max(1, min(int(ncols), len(steps)))
        nrows = -(-len(steps) // ncols)
        n_surfaces = sum(isinstance(step, StepSurface) for step in steps)
        # A heat map needs room for its colour bar and its tilted threshold labels.
        width, height = (5.0, 4.0) if n_surfaces else (4.0, 3.0)
        fig, grid = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
        for extra in grid.ravel()[len(steps) :]:
            extra.set_visible(False)
        axes = grid.ravel()[: len(steps)]
        if n_surfaces == 0:
            fig.suptitle("Learned score per base feature")
        elif n_surfaces == len(steps):
            fig.suptitle("Learned score per pair of features")
        else:
            fig.suptitle("Learned score per base feature and per pair of features")
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


def _chosen_step(steps: List[Any], f: Any) -> Any:
    """The step function or surface that ``features`` names with ``f``: an index, a base
    feature's name, or a pair as ``"a&b"`` or ``("a", "b")``. A pair named in the other order
    than the model's (``"b&a"`` for the model's ``"a&b"``) is the same function of the same two
    features, so it is drawn transposed (b up the vertical axis, as the name asks) rather than
    refused as unknown."""
    from ..binning import StepSurface

    by_name = {s.feature: s for s in steps}
    if isinstance(f, tuple) and len(f) == 2 and all(isinstance(x, str) for x in f):
        f = f"{f[0]}&{f[1]}"
    if not isinstance(f, str):
        return steps[int(f)]
    if f in by_name:
        return by_name[f]
    for s in steps:
        if isinstance(s, StepSurface) and f == f"{s.features[1]}&{s.features[0]}":
            (a, b), (i, j), (ta, tb) = s.features, s.index, s.thresholds
            return StepSurface((b, a), (j, i), (tb, ta), np.asarray(s.values).T)
    raise ValueError(f"no base feature or pair named {f!r}; the features are {list(by_name)}")


#: At most this many threshold labels per heat-map axis. A pair has up to 63 coarse thresholds
#: per feature (32 by default); labelling each one overlaps them into an unreadable smear, while
#: eight spread from the first to the last still show where the surface changes.
_MAX_SURFACE_TICKS = 8


def _axis_name(name: str, index: int) -> str:
    """How a heat-map axis names a pair's feature: its name, or "feature j" for an unnamed one.

    ``piecewise_scores`` names the columns of an array without feature names ``x0, x1, ...``
    (the Binner's output names); on an axis title "feature 2" says what that is, whereas a
    DataFrame's column name is the reader's own word for the feature and is kept.
    """
    return f"feature {index}" if name == f"x{index}" else name


def _rounded_labels(values: np.ndarray) -> List[str]:
    """Labels for increasing tick values, rounded one decimal place below their smallest gap.

    Coarse thresholds are quantile midpoints such as 0.4172538, whose digits beyond the
    spacing of the ticks say nothing a reader can use. Rounding one place below the order of
    magnitude of the smallest gap between neighbouring ticks moves a label by at most a
    twentieth of that gap; where rounding still makes two labels equal, one more place is kept
    until they differ. The labels are written with as many significant digits as that rounding
    leaves to the largest value, so very large or small thresholds take an exponent
    (``1.23e+06``) instead of a row of zeros.
    """
    if values.size == 0:
        return []
    gaps = np.diff(values)
    scale = gaps.min() if gaps.size else (abs(values[0]) or 1.0)
    decimals = int(-np.floor(np.log10(scale))) + 1
    largest = float(np.max(np.abs(values))) or 1.0
    while True:
        rounded = np.round(values, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0 ("-0" reads as a sign)
        digits = max(1, int(np.floor(np.log10(largest))) + 1 + decimals)
        labels = [f"{v:.{digits}g}" for v in rounded]
        if len(set(labels)) == len(labels) or decimals > 17:
            return labels
        decimals += 1


def _draw_surface(ax: Any, surface: Any) -> None:
    """A pair's step surface as a heat map, one cell per pair of coarse bins.

    The ticks sit on the edges between cells and are labelled with the threshold there (a value
    above it falls in the cells after the tick), thinned to at most ``_MAX_SURFACE_TICKS`` per
    axis and rounded. The colours are centred at 0, the score of the first row and column: red
    adds to a document's score, blue takes away, white is no interaction.
    """
    Normalize = load("matplotlib.colors", "svmmap.ir.plot").Normalize

    values = np.asarray(surface.values, dtype=float)
    # A symmetric range rather than the data's own: with the default (min, max) the white of a
    # diverging colormap sits at their midpoint (3.4 for a surface from -0.4 to 7.1), so cells
    # that add nothing look blue. The same bound on both sides also keeps a colour's depth
    # meaning the same size of effect whichever its sign.
    bound = float(np.max(np.abs(values), initial=0.0))
    if not np.isfinite(bound) or bound == 0.0:
        bound = 1.0
    image = ax.imshow(values, cmap="RdBu_r", norm=Normalize(vmin=-bound, vmax=bound), origin="lower", aspect="auto")
    ax.figure.colorbar(image, ax=ax, label="pair score")
    names = [_axis_name(str(n), int(j)) for n, j in zip(surface.features, surface.index)]
    ticks = []
    for thresholds, name in zip(surface.thresholds, names):
        k = np.asarray(thresholds, dtype=float)
        # Evenly spread over the thresholds' indices, the first and the last always among them.
        chosen = np.unique(np.round(np.linspace(0, k.size - 1, min(k.size, _MAX_SURFACE_TICKS))).astype(int))
        # Cell c holds the values above threshold c - 1 (0-based) up to threshold c, and spans
        # c - 0.5 to c + 0.5 in the image, so threshold i is the edge at i + 0.5.
        ticks.append((chosen + 0.5, _rounded_labels(k[chosen]), name if k.size else f"{name} (no threshold)"))
    (y_at, y_labels, y_name), (x_at, x_labels, x_name) = ticks
    ax.set_yticks(y_at)
    ax.set_yticklabels(y_labels, fontsize=7)
    ax.set_ylabel(y_name)
    ax.set_xticks(x_at)
    # Tilted and anchored at their right end, long labels such as -1234.5 stay under their tick
    # without running into the next one.
    ax.set_xticklabels(x_labels, fontsize=7, rotation=45, ha="right", rotation_mode="anchor")
    ax.set_xlabel(x_name)
    ax.set_title(f"Interaction of {names[0]} and {names[1]}", fontsize=9)
